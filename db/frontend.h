// db/frontend.h — the front-end axis: for each amdgcn builtin of clang of the same flavor, whether clang accepts it
// for each processor and which intrinsic calls it makes of it (probe/frontend.h measures it), kept beside the back
// end's answer. A catalog key's builtin is the key's row; every other builtin is a row keyed by its own name.
// No LLVM here: the model, its committed text form data/<flavor>/frontend.txt, and its tables.
//
// frontend.txt (byte-identical when regenerated from the same measurement):
//   # archdb front end ...                      a title line
//   # schema: archdb.frontend/v1                provenance, one "# name: value" line each
//   ...
//   KEY<TAB>BUILTIN<TAB>CALL<TAB>GROUP...       a key (or builtin) whose builtin was posed, sorted by key
//   not_posed<TAB>KEY<TAB>BUILTIN<TAB>REASON    a builtin clang has, but that could not be posed
//   no_builtin<TAB>KEY<TAB>REASON               a key without a builtin in this clang
// A GROUP is "accepted PROCESSORS {"emitted":[...]}", "rejected PROCESSORS {"diagnostic":"..."}" or "crashed
// PROCESSORS {"diagnostic":"..."}" (clang crashed on the call there: no answer), the
// processors comma-separated and sorted; groups in that order, then by first processor.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archdb {

class Store;

struct FrontendKey {
  std::string key;      // the catalog key, or for a builtin no key claims, the builtin itself
  std::string builtin;  // "__builtin_amdgcn_..."; empty: none in this clang
  std::string call;     // the call posed, e.g. "__builtin_amdgcn_s_sleep(0)"; empty: not posed
  std::string reason;   // why there is no builtin, or why it could not be posed
};

struct FrontendCell {
  std::string key;
  std::string target;
  bool accepted = false;
  std::string diagnostic;            // rejected: clang's error; crashed: what it said, without this machine's paths
  std::vector<std::string> emitted;  // accepted: the intrinsics clang called for the builtin
  bool crashed = false;              // not accepted: clang crashed (or failed naming no line), neither yes nor no
};

struct FrontendProvenance {
  static constexpr const char* kSchema = "archdb.frontend/v1";
  std::string flavor;
  std::string clang;                 // clang's version line
  std::vector<std::string> command;  // how each processor was asked; "{processor}" and "{file}" stand for them
  std::vector<std::string> processors;
  std::map<std::string, int> counts;  // accepted, rejected, crashed, not_posed, no_builtin
  // in_clang: the __builtin_amdgcn_* names found in clang's files; declared: those clang declares (empty: an axis
  // of the catalog keys' builtins only).
  std::map<std::string, int> builtin_names;
};

struct Frontend {
  FrontendProvenance provenance;
  std::vector<FrontendKey> keys;    // sorted by key
  std::vector<FrontendCell> cells;  // sorted by (key, target)

  void sort();
  void recount();
  const FrontendKey* key(const std::string& k) const;
  const FrontendCell* find(const std::string& key, const std::string& target) const;
  // The cells of one key (a contiguous run of `cells`), empty if none.
  std::pair<const FrontendCell*, const FrontendCell*> cells_of(const std::string& key) const;
};

std::string render_frontend(const Frontend& fe);
Frontend parse_frontend(const std::string& text, const std::string& label);

constexpr const char* kFrontendFile = "frontend.txt";
std::optional<Frontend> read_frontend_file(const std::filesystem::path& data_root, const std::string& flavor);
void write_frontend_file(const std::filesystem::path& data_root, const Frontend& fe);

void store_frontend(Store& store, const Frontend& fe, const std::string& source_digest);
std::optional<Frontend> load_frontend(const Store& store, const std::string& flavor);
void sync_frontend_from_data(Store& store, const std::filesystem::path& data_root);

}  // namespace archdb
