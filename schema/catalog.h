// schema/catalog.h — the decl-key catalog (schema/catalog.txt): which declarations archdb measures, under
// which stable dotted key. Parsing is strict; a malformed entry is an error naming file, line and reason.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace archdb {

// How a key is posed to LLVM: by intrinsic name (LLVM's own table gives the signature) or by an explicit
// declaration, probed exactly as written (as a kernel would emit it).
struct DeclSpec {
  enum class Kind { kIntrinsic, kDeclare };
  Kind kind = Kind::kIntrinsic;
  std::string name;                         // the function name: "llvm.amdgcn.mfma.f32.4x4x4bf16.1k"
  std::vector<std::string> overload_types;  // kIntrinsic: overload types in IR syntax, in LLVM's order
  bool overloaded = false;                  // kIntrinsic: written with [...] (possibly empty)
  std::string declare_text;                 // kDeclare: the whole `declare ...` line
  int line = 0;

  std::string to_string() const;  // the spec as written in the catalog
};

struct CatalogEntry {
  std::string key;
  DeclSpec spec;
  std::map<std::string, DeclSpec> per_flavor;  // "llvm19" -> override
  // `@wave64 SPEC`: the call on a target running 64 lanes by feature ("gfx1100:+wavefrontsize64"), where the
  // intrinsic's types are the wave size's layout (WMMA: half the accumulator); every flavor's, for that target.
  std::optional<DeclSpec> wave64;
  int line = 0;

  const DeclSpec& spec_for(const std::string& flavor) const;
  // The spec a target is posed with: the wave64 layout on a wave64 target, where the key has one.
  const DeclSpec& spec_for(const std::string& flavor, const std::string& target) const;
};

struct Catalog {
  std::string path;                  // for messages
  std::vector<CatalogEntry> entries; // in file order; keys unique

  const CatalogEntry* find(const std::string& key) const;
  std::vector<std::string> keys() const;  // sorted
};

// Parses catalog text; `path` names the file in errors ("schema/catalog.txt:12: ...").
Catalog parse_catalog(const std::string& text, const std::string& path);
Catalog load_catalog(const std::string& path);

// A peer's declaration table — one `KEY<TAB>declare ...` a line, blank lines and '#' comments allowed (rocKE's
// decl table, dumped) — as catalog text that measures each key exactly as declared. Every entry is checked as
// the catalog's own are; an error names `path` and the table's line. The catalog text starts with a comment
// naming `source` and the number of keys.
std::string catalog_from_peer_decls(const std::string& table, const std::string& path, const std::string& source);

// Key syntax: dot-separated segments of [a-z0-9_-], e.g. "mfma.f32.4x4x4bf16.1k".
bool is_valid_key(const std::string& key);
// A name a check takes where it takes a catalog key (docs/checker.md "The checker"): an llvm.amdgcn.* intrinsic, answered
// from the census or measured on demand, with no catalog entry.
bool names_intrinsic(const std::string& name);
// A clang builtin of the target (__builtin_amdgcn_*), taken where a catalog key goes: answered through the front-end
// axis (db/frontend.h), by the catalog key whose builtin it is.
bool names_builtin(const std::string& name);
// What a check takes besides catalog keys: an intrinsic or a builtin name (the one test every reader of keys uses).
bool names_uncatalogued(const std::string& name);
constexpr const char* kUncataloguedNames = "an llvm.amdgcn.* intrinsic or a __builtin_amdgcn_* builtin";
// Flavor syntax: "llvm" followed by the LLVM major, e.g. "llvm22".
bool is_valid_flavor(const std::string& flavor);

}  // namespace archdb
