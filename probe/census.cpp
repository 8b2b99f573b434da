// probe/census.cpp — enumerating, instantiating and measuring the census (see census.h).
#include "probe/census.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include "probe/llvm_compat.h"
#include "probe/resolve.h"
#include "probe/synth.h"
#include "probe/toolchain.h"
#include "support/error.h"
#include "support/text.h"

namespace archdb {
namespace {

using Clock = std::chrono::steady_clock;
const std::string kPrefix = "llvm.amdgcn.";

const std::vector<std::string> kIntScalars = {"i32", "i64", "i16", "i8", "i1"};
const std::vector<std::string> kFloatScalars = {"float", "half", "double", "bfloat"};
const std::vector<std::string> kIntVectors = {"<2 x i32>", "<4 x i32>",  "<8 x i32>", "<2 x i16>",
                                              "<4 x i16>", "<8 x i16>",  "<16 x i16>", "<2 x i64>",
                                              "<3 x i32>", "<16 x i32>", "<4 x i8>"};
const std::vector<std::string> kFloatVectors = {"<2 x half>",   "<4 x float>",  "<8 x float>",  "<4 x half>",
                                                "<8 x half>",   "<16 x half>",  "<2 x float>",  "<16 x float>",
                                                "<2 x bfloat>", "<4 x bfloat>", "<8 x bfloat>", "<16 x bfloat>",
                                                "<2 x double>", "<3 x float>"};
const std::vector<std::string> kPointers = {"ptr addrspace(1)", "ptr addrspace(3)", "ptr",
                                            "ptr addrspace(4)", "ptr addrspace(5)", "ptr addrspace(7)",
                                            "ptr addrspace(8)"};

std::vector<std::string> concat(std::initializer_list<const std::vector<std::string>*> lists) {
  std::vector<std::string> out;
  for (const auto* l : lists) out.insert(out.end(), l->begin(), l->end());
  return out;
}

// Integers and floats interleaved, most common first: i32 float i64 half i16 double i8 bfloat i1.
std::vector<std::string> interleave(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size()) out.push_back(a[i]);
    if (i < b.size()) out.push_back(b[i]);
  }
  return out;
}

std::vector<std::string> slot_candidates(const compat::OverloadSlot& slot) {
  using Shape = compat::OverloadSlot::Shape;
  using Element = compat::OverloadSlot::Element;
  bool scalars = slot.shape != Shape::kVector, vectors = slot.shape != Shape::kScalar;
  std::vector<std::string> none;
  switch (slot.element) {
    case Element::kInteger: return concat({scalars ? &kIntScalars : &none, vectors ? &kIntVectors : &none});
    case Element::kFloat: return concat({scalars ? &kFloatScalars : &none, vectors ? &kFloatVectors : &none});
    case Element::kPointer: return scalars ? kPointers : none;
    case Element::kAny: break;
  }
  std::vector<std::string> out;
  if (scalars) out = interleave(kIntScalars, kFloatScalars);
  if (vectors) {
    std::vector<std::string> v = interleave(kFloatVectors, kIntVectors);
    out.insert(out.end(), v.begin(), v.end());
  }
  if (scalars) out.insert(out.end(), kPointers.begin(), kPointers.end());
  return out;
}

llvm::Intrinsic::ID exact_id(const std::string& name) {
  llvm::Intrinsic::ID id = compat::lookup_intrinsic_id(name);
  if (id == llvm::Intrinsic::not_intrinsic || llvm::Intrinsic::getBaseName(id) != name) return llvm::Intrinsic::not_intrinsic;
  return id;
}

// One intrinsic on its way to its instantiations.
struct Pending {
  std::string name;
  bool overloaded = false;
  std::vector<std::vector<std::string>> combos;  // candidate combinations, in trial order
  size_t next = 0;                               // the first combination not posed yet
  std::vector<CensusInstantiation> chosen;
  std::string first_rejection;                   // why the first combination was refused
  std::string not_probed;                        // set when it will not be probed
};

}  // namespace

std::vector<std::string> amdgcn_intrinsic_names() {
  std::vector<std::string> out;
  for (unsigned id = 1; id < llvm::Intrinsic::num_intrinsics; ++id) {
    llvm::StringRef name = llvm::Intrinsic::getBaseName(id);
    if (name.starts_with(kPrefix)) out.push_back(name.str());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> amdgpu_processor_names() {
  initialize_amdgpu();
  std::unique_ptr<llvm::MCSubtargetInfo> sti(compat::create_subtarget_info(amdgpu_target(), amdgpu_triple(), "generic"));
  std::vector<std::string> out;
  if (!sti) return out;
  for (const auto& p : sti->getAllProcessorDescriptions()) {
    std::string name = compat::processor_name(p).str();
    if (name.rfind("gfx", 0) == 0) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::vector<std::string>> candidate_combinations(const std::string& intrinsic, size_t limit, std::string& why) {
  std::vector<std::vector<std::string>> out;
  llvm::Intrinsic::ID id = exact_id(intrinsic);
  if (id == llvm::Intrinsic::not_intrinsic) {
    why = "not an intrinsic of this LLVM";
    return out;
  }
  if (!llvm::Intrinsic::isOverloaded(id)) return out;
  compat::IntrinsicTable table = compat::read_intrinsic_table(id);
  std::vector<std::vector<std::string>> lists;
  // Image intrinsics: an `any` slot only parameters use is a descriptor, the resource (first) then the
  // sampler (second); they take the types LLVM's image lowering expects first.
  const bool image = intrinsic.rfind(kPrefix + "image.", 0) == 0;
  int descriptors = 0;
  for (size_t i = 0; i < table.slots.size(); ++i) {
    lists.push_back(slot_candidates(table.slots[i]));
    bool in_result = !table.parts.empty() && table.parts[0].find("#" + std::to_string(i)) != std::string::npos;
    std::string first;
    if (image && table.slots[i].element == compat::OverloadSlot::Element::kAny) {
      if (in_result) first = "<4 x float>";  // the texels: four channels
      else if (descriptors < 2) first = descriptors++ == 0 ? "<8 x i32>" : "<4 x i32>";
    }
    if (!first.empty()) {
      auto& l = lists.back();
      auto at = std::find(l.begin(), l.end(), first);
      if (at != l.end()) std::rotate(l.begin(), at, at + 1);
    }
    if (lists.back().empty()) {
      why = "overload type #" + std::to_string(i) + " admits no type of the candidate set " + kCandidateSet;
      return out;
    }
  }
  if (lists.empty()) {
    why = "overloaded, but LLVM's table names no overload type";
    return out;
  }
  std::vector<size_t> at(lists.size(), 0);
  while (out.size() < limit) {
    std::vector<std::string> combo;
    for (size_t i = 0; i < lists.size(); ++i) combo.push_back(lists[i][at[i]]);
    out.push_back(std::move(combo));
    size_t i = lists.size();
    while (i > 0) {  // the last slot varies fastest
      --i;
      if (++at[i] < lists[i].size()) break;
      at[i] = 0;
      if (i == 0) return out;
    }
  }
  return out;
}

CensusRun run_census(const CensusOptions& options) {
  initialize_amdgpu();
  auto start = Clock::now();
  CensusRun run;
  const ToolchainInfo& tc = linked_toolchain();

  // ---- enumeration ----
  std::vector<std::string> all = amdgcn_intrinsic_names();
  std::vector<std::string> names;
  if (options.intrinsics.empty()) {
    names = all;
  } else {
    for (const auto& n : options.intrinsics) {
      std::string full = n.rfind(kPrefix, 0) == 0 ? n : kPrefix + n;
      if (!std::binary_search(all.begin(), all.end(), full))
        throw usage_error("'" + n + "' is not an llvm.amdgcn.* intrinsic of LLVM " + tc.llvm_version);
      names.push_back(full);
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  std::vector<std::string> every_processor = amdgpu_processor_names();
  std::vector<std::string> processors = options.processors.empty() ? every_processor : options.processors;
  for (const auto& p : processors)
    if (!std::binary_search(every_processor.begin(), every_processor.end(), p))
      throw usage_error("LLVM " + tc.llvm_version + " knows no processor '" + p + "'");
  std::sort(processors.begin(), processors.end());

  ProbeOptions probe;
  probe.flavor = options.flavor;
  probe.targets = processors;
  probe.jobs = options.jobs;
  probe.timeout_s = options.timeout_s;
  probe.cpu_budget_ms = options.cpu_budget_ms;
  probe.retry_cpu_budget_ms = options.retry_cpu_budget_ms;
  probe.retries = options.retries;
  probe.immarg_sweep = options.immarg_sweep;
  probe.progress = options.progress;
  probe.parallel_crash_retries = true;
  probe.parallel_timeout_retries = true;

  // ---- instantiation: candidate combinations, judged by LLVM in rounds ----
  std::vector<Pending> pending;
  for (const auto& name : names) {
    Pending p;
    p.name = name;
    p.overloaded = llvm::Intrinsic::isOverloaded(exact_id(name));
    if (p.overloaded) {
      std::string why;
      p.combos = candidate_combinations(name, static_cast<size_t>(std::max(1, options.max_candidates)), why);
      if (p.combos.empty()) p.not_probed = why;
    } else {
      p.combos = {{}};
    }
    pending.push_back(std::move(p));
  }
  const size_t wanted = static_cast<size_t>(std::max(1, options.max_instantiations));
  for (size_t round_size = wanted + 1;; round_size *= 4) {
    std::vector<DeclSpec> specs;
    std::vector<std::pair<size_t, size_t>> owner;  // spec -> (pending, combination)
    for (size_t i = 0; i < pending.size(); ++i) {
      Pending& p = pending[i];
      if (!p.not_probed.empty() || p.chosen.size() >= wanted || p.next >= p.combos.size()) continue;
      for (size_t n = 0; n < round_size && p.next < p.combos.size(); ++n, ++p.next) {
        DeclSpec s;
        s.kind = DeclSpec::Kind::kIntrinsic;
        s.name = p.name;
        s.overloaded = p.overloaded;
        s.overload_types = p.combos[p.next];
        specs.push_back(std::move(s));
        owner.push_back({i, p.next});
      }
    }
    if (specs.empty()) break;
    if (options.progress) std::fprintf(stderr, "\r\033[K%s: instantiating (%zu candidates)", options.flavor.c_str(), specs.size());
    run.candidates_tried += static_cast<int>(specs.size());
    std::vector<ResolveOutcome> outcomes = resolve_declarations(specs, probe);
    for (size_t s = 0; s < specs.size(); ++s) {
      Pending& p = pending[owner[s].first];
      const Resolution& r = outcomes[s].resolution;
      if (r.kind == Resolution::Kind::kResolved) {
        if (p.chosen.size() < wanted) p.chosen.push_back({r.intrinsic, p.name, specs[s].overload_types});
      } else if (owner[s].second == 0) {
        p.first_rejection = r.evidence.empty() ? "LLVM refused the declaration" : r.evidence;
      }
    }
  }
  Catalog catalog;
  catalog.path = "(census)";
  for (auto& p : pending) {
    if (p.chosen.empty()) {
      std::string reason = !p.not_probed.empty() ? p.not_probed : p.first_rejection;
      if (p.overloaded && p.not_probed.empty())
        reason = "no candidate combination of the " + std::to_string(p.combos.size()) + " tried was accepted; the first: " +
                 (p.combos.empty() ? "" : "[" + join(p.combos.front(), ", ") + "]: ") + reason;
      run.census.not_probed.push_back({p.name, reason.empty() ? "LLVM refused every declaration posed" : reason});
      continue;
    }
    for (auto& inst : p.chosen) {
      CatalogEntry e;
      e.key = inst.key;
      e.spec.kind = DeclSpec::Kind::kIntrinsic;
      e.spec.name = p.name;
      e.spec.overloaded = p.overloaded;
      e.spec.overload_types = inst.overload_types;
      catalog.entries.push_back(std::move(e));
      run.census.instantiations.push_back(inst);
    }
  }
  run.plan_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  // ---- measuring: the catalog probe over every processor ----
  std::vector<const CatalogEntry*> entries;
  for (const auto& e : catalog.entries) entries.push_back(&e);
  if (!entries.empty()) {
    ProbeResult result = run_probe(catalog, entries, probe);
    run.probe_errors = result.probe_errors;
    run.stats = result.stats;
    run.census.cells = std::move(result.column.cells);
  }
  CensusProvenance& prov = run.census.provenance;
  prov.flavor = options.flavor;
  prov.llvm_version = tc.llvm_version;
  prov.identity = tc.identity;
  prov.package = tc.package;
  prov.prerelease = tc.prerelease;
  nlohmann::ordered_json posing = probe_provenance(probe).posing();
  posing["cpu_budget_ms"] = options.cpu_budget_ms;
  posing["retry_cpu_budget_ms"] = options.retry_cpu_budget_ms;
  posing["candidates"] = kCandidateSet;
  posing["max_instantiations"] = static_cast<int>(wanted);
  posing["max_candidates"] = options.max_candidates;
  posing["retries_in_parallel"] = true;
  prov.probe = posing;
  prov.processors = processors;
  prov.intrinsics = static_cast<int>(names.size());
  run.census.sort();
  run.census.recount();
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

std::string probe_module_text(const DeclSpec& spec, std::optional<int64_t> imm, std::string& why) {
  initialize_amdgpu();
  Resolution r = resolve_declaration(spec, "LLVM " + linked_toolchain().llvm_version, {1, 2, 4, 12, 16});
  if (r.kind != Resolution::Kind::kResolved) {
    why = r.evidence.empty() ? "LLVM does not resolve the declaration" : r.evidence;
    return "";
  }
  std::string text = r.shape.declare_line + "\n";
  if (r.shape.declare_line != kProbeSupportDeclare) text += std::string(kProbeSupportDeclare) + "\n";
  text += probe_kernel_ir("probe", r.shape, imm.value_or(r.default_imm));
  text += "!llvm.module.flags = !{!0}\n!0 = !{i32 1, !\"amdhsa_code_object_version\", i32 " +
          std::to_string(kCodeObjectVersion * 100) + "}\n";
  return text;
}

}  // namespace archdb
