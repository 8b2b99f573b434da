// db/search.h — what a name a developer types means: catalog keys, intrinsic names, clang builtins and instruction
// mnemonics, each in any spelling (with or without `llvm.`, `llvm.amdgcn.`, `amdgcn.`, `__builtin_amdgcn_`, with
// `_` or `.` between words, any case), ranked for `archdb search`, `/v1/search` and the page; and the one rule by
// which `query`, `history` and the service resolve such a name to what answers it (docs/cli.md "search").
// Invariants: an index is built from one catalog and one read of the store, and never changes; every name it
// holds is spelled as archdb spells it elsewhere (the key, `llvm.amdgcn.x`, `__builtin_amdgcn_x`, `v_x`).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "schema/catalog.h"

namespace archdb {

class Store;

enum class NameKind { kKey, kIntrinsic, kBuiltin, kMnemonic };
std::string_view name_kind_name(NameKind kind);

// How a hit matched, best first.
enum class NameMatch { kExact, kInstantiation, kPrefix, kWord, kSubstring };
std::string_view name_match_name(NameMatch match);

struct NameEntry {
  NameKind kind = NameKind::kKey;
  std::string name;
  std::vector<std::string> flavors;  // where it is known (columns, censuses, front ends), sorted
  // What it leads to: a key's intrinsic; an intrinsic's keys (those posing it or an instantiation of it); a
  // builtin's key (where the catalog claims it) and the intrinsics clang emits for it; a mnemonic's keys and
  // intrinsics (those that lower to it). Sorted, unique.
  std::vector<std::string> means;
  // The instantiation names a key's cells pose (its cells' `intrinsic`), for resolving an instantiation.
  std::vector<std::string> instantiations;
};

struct NameHit {
  const NameEntry* entry = nullptr;
  NameMatch match = NameMatch::kSubstring;
};

// A name resolved to what answers it: a catalog key (its cells) or an intrinsic (the censuses). `how` says why,
// for the reader ("the builtin of catalog key mfma.f32.4x4x4bf16.1k"); empty where the name needs no telling
// (the key itself; an intrinsic or instantiation, whose census answer names what it weighed).
struct NameResolution {
  NameKind kind = NameKind::kKey;
  std::string name;
  std::string how;
};

// The comparable form of a name: lower case, the prefixes above removed, `_` read as `.`.
std::string normalize_name(std::string_view name);

class NameIndex {
 public:
  // Reads the store's columns, censuses and front ends (one consistent read where the caller holds a read
  // transaction) and the catalog's keys.
  static NameIndex build(const Catalog& catalog, const Store& store);
  // The index kept in the store (table name_index) where it was built from what the store and catalog hold now;
  // else built, and kept for the next command (a store that cannot be written keeps nothing, and says nothing).
  static NameIndex load_or_build(const Catalog& catalog, const Store& store);

  // Hits for `text` ranked by match, then kind (key, intrinsic, builtin, mnemonic), then length and name; at
  // most `limit`. `total` receives how many matched.
  std::vector<NameHit> search(std::string_view text, size_t limit, size_t* total = nullptr) const;
  // The key or intrinsic `spelling` stands for, or nullopt where it names neither (a mnemonic, nothing known).
  // A key answers for its own name, any spelling of it, its builtin, and the intrinsic (or instantiation) it
  // poses exactly; an intrinsic that no key poses exactly is answered by the censuses.
  std::optional<NameResolution> resolve(std::string_view spelling) const;
  // The command that answers a hit.
  static std::string command_for(const NameEntry& entry);
  // The one line for a name that resolves to nothing: what a search finds for it (`how_to_search` names the way to
  // ask: "`archdb search X`", "GET /v1/search?q=X"), or, for an instruction, that it is no call and what lowers to it.
  std::string unknown_message(std::string_view name, const std::string& how_to_search) const;

  size_t size() const { return entries_.size(); }
  const std::vector<NameEntry>& entries() const { return entries_; }

 private:
  std::vector<NameEntry> entries_;
  std::vector<std::string> normalized_;  // entries_[i]'s name, normalized
  const NameEntry* exact(NameKind kind, const std::string& normalized) const;
};

// The one JSON form of a search's answer, for the command line and the service:
// {"query", "total", "hits": [{"name", "kind", "match", "flavors", "means", "command"}]}.
nlohmann::ordered_json name_hits_json(std::string_view query, const std::vector<NameHit>& hits, size_t total);

}  // namespace archdb
