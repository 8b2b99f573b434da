// probe/census.cpp — enumerating, instantiating and measuring the census (see census.h).
#include "probe/census.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <tuple>

#include "llvm/llvm_compat.h"
#include "probe/resolve.h"
#include "probe/synth.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/text.h"

namespace archdb {
namespace {

using Clock = std::chrono::steady_clock;
const std::string kPrefix = "llvm.amdgcn.";
// One processor of each generation: where the search for an instantiation that lowers is made.
constexpr const char* kSearchProcessors[] = {"gfx600", "gfx700", "gfx803", "gfx900", "gfx908", "gfx90a", "gfx942",
                                             "gfx950", "gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201", "gfx1250"};

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

// The family of an intrinsic whose overload types are a layout that differs by generation or wave size: matrix
// operands (gfx11's wave32 WMMA takes <16 x half> sources, gfx12's <8 x half>), lane masks (a wave64 ballot is
// i64), transposing loads (gfx12's b128 is <8 x i16>). Empty for the others.
std::string layout_family(const std::string& intrinsic) {
  std::string name = intrinsic.substr(std::min(intrinsic.size(), kPrefix.size()));
  if (name.rfind("wmma.", 0) == 0 || name.rfind("swmmac.", 0) == 0) return "matrix";
  if (name == "ballot" || name == "inverse.ballot") return "lane mask";
  if (name.find(".tr", 0) != std::string::npos && (name.rfind("global.load.", 0) == 0 || name.rfind("ds.", 0) == 0))
    return "transposing load";
  return "";
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

std::optional<std::vector<std::string>> overload_types_of_mangled(const std::string& mangled, std::string& why) {
  llvm::Intrinsic::ID id = compat::lookup_intrinsic_id(mangled);
  if (id == llvm::Intrinsic::not_intrinsic) {
    why = "not an intrinsic of this LLVM";
    return std::nullopt;
  }
  std::string base = llvm::Intrinsic::getBaseName(id).str();
  if (!llvm::Intrinsic::isOverloaded(id)) {
    if (mangled == base) return std::vector<std::string>{};
    why = "not overloaded, yet named " + mangled;
    return std::nullopt;
  }
  if (mangled.size() <= base.size() + 1 || mangled[base.size()] != '.') {
    why = "overloaded, yet named without types";
    return std::nullopt;
  }
  static const std::regex kVector(R"(v(\d+)(.+))");
  auto scalar = [](const std::string& t) -> std::optional<std::string> {
    static const std::map<std::string, std::string> kFloats = {{"f16", "half"}, {"bf16", "bfloat"}, {"f32", "float"}, {"f64", "double"}};
    if (auto f = kFloats.find(t); f != kFloats.end()) return f->second;
    if (t.size() > 1 && t[0] == 'i' && std::all_of(t.begin() + 1, t.end(), ::isdigit)) return t;
    return std::nullopt;
  };
  std::vector<std::string> types;
  for (const std::string& piece : split(mangled.substr(base.size() + 1), '.')) {
    std::smatch m;
    if (auto t = scalar(piece)) {
      types.push_back(*t);
    } else if (std::regex_match(piece, m, kVector) && scalar(m[2].str())) {
      types.push_back("<" + m[1].str() + " x " + *scalar(m[2].str()) + ">");
    } else if (piece.size() > 1 && piece[0] == 'p' && std::all_of(piece.begin() + 1, piece.end(), ::isdigit)) {
      types.push_back(piece == "p0" ? "ptr" : "ptr addrspace(" + piece.substr(1) + ")");
    } else {
      why = "its overload type '" + piece + "' is not read here";
      return std::nullopt;
    }
  }
  return types;
}

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
  const std::string family = intrinsic.substr(kPrefix.size());
  auto has = [&](const char* word) { return ("." + family + ".").find(word) != std::string::npos; };
  // Image intrinsics: an `any` slot only parameters use is a descriptor, the resource (first) then the
  // sampler (second); they take the types LLVM's image lowering expects first.
  const bool image = family.rfind("image.", 0) == 0;
  const bool image_atomic = family.rfind("image.atomic.", 0) == 0;
  // Matrix intrinsics take their operands as vectors (wmma.f32.16x16x16.f16: <8 x float>, <16 x half>).
  const std::string layout = layout_family(intrinsic);
  const bool matrix = layout == "matrix";
  // The address space a family works on: LDS for ds.* and *lds*, global for global.*, flat for flat.*.
  std::string pointer;
  if (has(".ds.") || family.find("lds") != std::string::npos) pointer = "ptr addrspace(3)";
  else if (has(".global.") || has(".cluster.")) pointer = "ptr addrspace(1)";
  else if (has(".flat.")) pointer = "ptr";
  // A width the name states (ds.read.tr8.b64, cluster.load.b128): the result is that many bits, of 16-bit
  // elements where a transposing load says so (tr16); then the same width in the other element size (gfx12's
  // global.load.tr.b128 is <8 x i16>).
  std::vector<std::string> width;
  const bool halves = has(".tr16.");
  for (const auto& [word, dwords, shorts] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {".b32.", "i32", ""}, {".b64.", "<2 x i32>", "<4 x i16>"}, {".b96.", "<3 x i32>", ""},
           {".b128.", "<4 x i32>", "<8 x i16>"}})
    if (has(word)) {
      width = {halves && *shorts ? shorts : dwords};
      if (*shorts) width.push_back(halves ? dwords : shorts);
    }
  // Matrix operands: the element types the name states (wmma.f32.16x16x16.f16: f32 results, f16 sources), wide
  // vectors first (a wave32 lane holds 8 or 16 elements of a 16x16 tile).
  std::vector<std::string> result_matrix, source_matrix;
  if (matrix) {
    std::vector<std::string> tokens = split(family, '.');
    auto vectors_of = [](const std::string& element) -> std::vector<std::string> {
      if (element == "f32") return {"<8 x float>", "<4 x float>", "<16 x float>", "<2 x float>"};
      if (element == "f16") return {"<16 x half>", "<8 x half>", "<4 x half>"};
      if (element == "bf16") return {"<16 x bfloat>", "<8 x bfloat>", "<16 x i16>", "<8 x i16>"};
      if (element == "i32") return {"<8 x i32>", "<4 x i32>"};
      // Packed narrow integers and floats (iu8, iu4, fp8, bf8, f4) travel in dwords.
      return {"<2 x i32>", "<4 x i32>", "<8 x i32>", "<16 x i32>"};
    };
    if (tokens.size() > 1) result_matrix = vectors_of(tokens[1]);
    for (size_t t = 2; t + 1 < tokens.size(); ++t)
      if (tokens[t].find('x') != std::string::npos && std::isdigit(static_cast<unsigned char>(tokens[t][0])))
        source_matrix = vectors_of(tokens[t + 1]);
  }
  int descriptors = 0;
  for (size_t i = 0; i < table.slots.size(); ++i) {
    const compat::OverloadSlot& slot = table.slots[i];
    lists.push_back(slot_candidates(slot));
    bool in_result = !table.parts.empty() && table.parts[0].find("#" + std::to_string(i)) != std::string::npos;
    std::vector<std::string> first;
    if (image && slot.element == compat::OverloadSlot::Element::kAny) {
      if (in_result) first = {image_atomic ? "i32" : "<4 x float>"};  // atomics: one channel; else four texels
      else if (descriptors < 2) first = {descriptors++ == 0 ? "<8 x i32>" : "<4 x i32>"};
    }
    if (in_result && !width.empty()) first = width;
    if (in_result && family.rfind("make.buffer.rsrc", 0) == 0 && slot.element == compat::OverloadSlot::Element::kPointer)
      first.push_back("ptr addrspace(8)");  // a buffer resource
    if (!pointer.empty() && slot.element == compat::OverloadSlot::Element::kPointer) first.push_back(pointer);
    if (matrix && slot.shape == compat::OverloadSlot::Shape::kAny) {
      const auto& preferred = in_result ? result_matrix : source_matrix;
      first.insert(first.end(), preferred.begin(), preferred.end());
    }
    // Earlier entries of `first` end up in front.
    auto& l = lists.back();
    for (auto it = first.rbegin(); it != first.rend(); ++it) {
      auto at = std::find(l.begin(), l.end(), *it);
      if (at != l.end()) std::rotate(l.begin(), at, at + 1);
    }
    // Vectors before scalars for a matrix's operands; a sparse matrix's last slot is its index (a scalar):
    // i16 first (gfx12's wave32 forms), then i32.
    bool index_slot = family.rfind("swmmac.", 0) == 0 && i + 1 == table.slots.size();
    if (index_slot)
      for (const char* t : {"i32", "i16"}) {
        auto at = std::find(l.begin(), l.end(), std::string(t));
        if (at != l.end()) std::rotate(l.begin(), at, at + 1);
      }
    if (matrix && !index_slot && slot.shape == compat::OverloadSlot::Shape::kAny)
      std::stable_partition(l.begin(), l.end(), [](const std::string& t) { return t.front() == '<'; });
    if (lists.back().empty()) {
      why = "overload type #" + std::to_string(i) + " admits no type of the candidate set " + kCandidateSet;
      return out;
    }
  }
  if (lists.empty()) {
    why = "overloaded, but LLVM's table names no overload type";
    return out;
  }
  if (!layout.empty()) {
    // By the sum of the slots' ranks, the first slots' lower ranks first: every combination one step from the
    // first (a result or a source of the next width: gfx12's <8 x half> sources, gfx1250's <8 x half> results;
    // a load's other element size) comes before any two steps away, where the last slot varying fastest would
    // try every source type (every pointer) first. For the layout families only (see layout_family).
    size_t most = 0;
    for (const auto& l : lists) most += l.size() - 1;
    std::vector<std::string> combo(lists.size());
    std::function<void(size_t, size_t)> place = [&](size_t slot, size_t left) {
      if (out.size() >= limit) return;
      if (slot + 1 == lists.size()) {
        if (left < lists[slot].size()) {
          combo[slot] = lists[slot][left];
          out.push_back(combo);
        }
        return;
      }
      for (size_t rank = 0; rank <= left && rank < lists[slot].size(); ++rank) {
        combo[slot] = lists[slot][rank];
        place(slot + 1, left - rank);
      }
    };
    for (size_t total = 0; total <= most && out.size() < limit; ++total) place(0, total);
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

ProbeOptions census_probe_options(const CensusOptions& options) {
  ProbeOptions probe;
  probe.flavor = options.flavor;
  probe.jobs = options.jobs;
  probe.timeout_s = options.timeout_s;
  probe.cpu_budget_ms = options.cpu_budget_ms;
  probe.retry_cpu_budget_ms = options.retry_cpu_budget_ms;
  probe.retries = options.retries;
  probe.immarg_sweep = options.immarg_sweep;
  probe.progress = options.progress;
  probe.parallel_crash_retries = true;
  probe.parallel_timeout_retries = true;
  return probe;
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

  ProbeOptions probe = census_probe_options(options);
  probe.targets = processors;
  // One executor for every step: the candidates' resolution, the measuring and the searches share its workers.
  std::unique_ptr<Executor> executor = probe_executor(probe, processors);

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
  // The next `want` combinations LLVM accepts of each pending intrinsic in `which`, from its cursor on; the
  // cursor moves past the last one taken.
  auto instantiate = [&](const std::vector<size_t>& which, size_t want) {
    std::map<size_t, std::vector<CensusInstantiation>> found;
    std::map<size_t, size_t> scan;  // pending -> next combination to pose
    for (size_t i : which) scan[i] = pending[i].next;
    for (size_t round_size = want + 1;; round_size *= 4) {
      std::vector<DeclSpec> specs;
      std::vector<std::pair<size_t, size_t>> owner;  // spec -> (pending, combination)
      for (size_t i : which) {
        Pending& p = pending[i];
        if (!p.not_probed.empty() || found[i].size() >= want) continue;
        for (size_t n = 0; n < round_size && scan[i] < p.combos.size(); ++n, ++scan[i]) {
          DeclSpec spec;
          spec.kind = DeclSpec::Kind::kIntrinsic;
          spec.name = p.name;
          spec.overloaded = p.overloaded;
          spec.overload_types = p.combos[scan[i]];
          specs.push_back(std::move(spec));
          owner.push_back({i, scan[i]});
        }
      }
      if (specs.empty()) break;
      if (options.progress)
        std::fprintf(stderr, "\r\033[K%s: instantiating (%zu candidates)", options.flavor.c_str(), specs.size());
      run.candidates_tried += static_cast<int>(specs.size());
      std::vector<ResolveOutcome> outcomes = resolve_declarations(specs, probe, *executor);
      for (size_t k = 0; k < specs.size(); ++k) {
        auto [i, combo] = owner[k];
        Pending& p = pending[i];
        const Resolution& r = outcomes[k].resolution;
        if (r.kind == Resolution::Kind::kResolved) {
          if (found[i].size() < want) {
            found[i].push_back({r.intrinsic, p.name, specs[k].overload_types});
            p.next = combo + 1;
          }
        } else if (combo == 0) {
          p.first_rejection = r.evidence.empty() ? "LLVM refused the declaration" : r.evidence;
        }
      }
    }
    for (size_t i : which)
      if (found[i].size() < want) pending[i].next = pending[i].combos.size();  // none left
    return found;
  };
  auto entry_of = [](const Pending& p, const CensusInstantiation& inst) {
    CatalogEntry e;
    e.key = inst.key;
    e.spec.kind = DeclSpec::Kind::kIntrinsic;
    e.spec.name = p.name;
    e.spec.overloaded = p.overloaded;
    e.spec.overload_types = inst.overload_types;
    return e;
  };
  auto measure = [&](const Catalog& catalog, const ProbeOptions& how) {
    std::vector<const CatalogEntry*> entries;
    for (const auto& e : catalog.entries) entries.push_back(&e);
    ProbeResult result = run_probe(catalog, entries, how, *executor);
    run.probe_errors.insert(run.probe_errors.end(), result.probe_errors.begin(), result.probe_errors.end());
    run.stats.workers = result.stats.workers;
    run.stats.jobs += result.stats.jobs;
    run.stats.worker_deaths += result.stats.worker_deaths;
    run.stats.sweep_probes += result.stats.sweep_probes;
    run.stats.posed_refused += result.stats.posed_refused;
    run.stats.posed_no_instruction += result.stats.posed_no_instruction;
    run.stats.posed_rejected += result.stats.posed_rejected;
    run.stats.posed_crashed += result.stats.posed_crashed;
    run.stats.retried += result.stats.retried;
    run.stats.slowest_answer_cpu_ms = std::max(run.stats.slowest_answer_cpu_ms, result.stats.slowest_answer_cpu_ms);
    run.stats.phases.insert(run.stats.phases.end(), result.stats.phases.begin(), result.stats.phases.end());
    return std::move(result.column.cells);
  };

  const size_t wanted = static_cast<size_t>(std::max(1, options.max_instantiations));
  std::vector<size_t> everyone(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) everyone[i] = i;
  auto first = instantiate(everyone, wanted);
  Catalog catalog;
  catalog.path = "(census)";
  for (size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    p.chosen = first[i];
    if (p.chosen.empty()) {
      std::string reason = !p.not_probed.empty() ? p.not_probed : p.first_rejection;
      if (p.overloaded && p.not_probed.empty())
        reason = "no candidate combination of the " + std::to_string(p.combos.size()) + " tried was accepted; the first: " +
                 (p.combos.empty() ? "" : "[" + join(p.combos.front(), ", ") + "]: ") + reason;
      run.census.not_probed.push_back({p.name, reason.empty() ? "LLVM refused every declaration posed" : reason});
      continue;
    }
    for (auto& inst : p.chosen) {
      catalog.entries.push_back(entry_of(p, inst));
      run.census.instantiations.push_back(inst);
    }
  }
  run.plan_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  // ---- measuring: the catalog probe over every processor ----
  if (!catalog.entries.empty()) run.census.cells = measure(catalog, probe);

  // ---- the search: an overloaded intrinsic none of whose instantiations lowered anywhere tries its next
  // candidates, on one processor of each generation, until one lowers there; that one is then measured on every
  // processor and keeps a row of its own beside the first. ----
  // A candidate of pending `i` that lowered where it was sought keeps a row of its own: into `found`, which
  // measure_everywhere then measures on every processor.
  auto keep = [&](size_t i, const CensusInstantiation& inst, Catalog& found) {
    pending[i].chosen.push_back(inst);
    run.census.instantiations.push_back(inst);
    found.entries.push_back(entry_of(pending[i], inst));
  };
  auto measure_everywhere = [&](const Catalog& found) {
    if (found.entries.empty()) return;
    std::vector<Cell> measured = measure(found, probe);
    run.census.cells.insert(run.census.cells.end(), measured.begin(), measured.end());
  };
  // ---- clang's instantiations: every call clang makes of a builtin that is no row yet, measured everywhere ----
  {
    std::map<std::string, size_t> pending_of;  // intrinsic -> index into pending
    for (size_t i = 0; i < pending.size(); ++i) pending_of[pending[i].name] = i;
    std::set<std::string> rows;
    for (const auto& inst : run.census.instantiations) rows.insert(inst.key);
    std::set<std::string> calls;
    for (const std::string& call : options.clang_calls)
      if (call.rfind(kPrefix, 0) == 0) calls.insert(call);
    std::vector<DeclSpec> specs;
    std::vector<std::pair<size_t, std::string>> owner;  // spec -> (pending, call)
    for (const std::string& call : calls) {
      std::string why;
      std::optional<std::vector<std::string>> types = overload_types_of_mangled(call, why);
      if (!types) {
        run.clang.unread.push_back(call + ": " + why);
        continue;
      }
      llvm::Intrinsic::ID id = compat::lookup_intrinsic_id(call);
      auto p = pending_of.find(llvm::Intrinsic::getBaseName(id).str());
      if (p == pending_of.end()) continue;  // outside the intrinsics asked (--intrinsics)
      ++run.clang.calls;
      if (rows.count(call) || !pending[p->second].not_probed.empty()) continue;
      DeclSpec spec;
      spec.kind = DeclSpec::Kind::kIntrinsic;
      spec.name = pending[p->second].name;
      spec.overloaded = pending[p->second].overloaded;
      spec.overload_types = *types;
      specs.push_back(std::move(spec));
      owner.push_back({p->second, call});
    }
    Catalog found;
    found.path = "(census: clang's instantiations)";
    if (!specs.empty()) {
      std::vector<ResolveOutcome> outcomes = resolve_declarations(specs, probe, *executor);
      for (size_t k = 0; k < specs.size(); ++k) {
        const Resolution& r = outcomes[k].resolution;
        if (r.kind != Resolution::Kind::kResolved || r.intrinsic != owner[k].second) {
          run.clang.unread.push_back(owner[k].second + ": LLVM resolves its declaration " +
                                     (r.kind == Resolution::Kind::kResolved ? "to " + r.intrinsic : "to nothing: " + r.evidence));
          continue;
        }
        keep(owner[k].first, {r.intrinsic, specs[k].name, specs[k].overload_types}, found);
      }
    }
    run.clang.rows = found.entries.size();
    measure_everywhere(found);
  }

  std::vector<std::string> representatives;
  for (const char* r : kSearchProcessors)
    if (std::binary_search(processors.begin(), processors.end(), std::string(r))) representatives.push_back(r);
  for (int round = 0; round < options.search_rounds && !representatives.empty(); ++round) {
    std::set<std::string> lowered;  // intrinsics with an ok cell
    std::map<std::string, std::string> intrinsic_of;
    for (const auto& inst : run.census.instantiations) intrinsic_of[inst.key] = inst.intrinsic;
    for (const auto& c : run.census.cells)
      if (c.status == Status::kOk) lowered.insert(intrinsic_of[c.key]);
    std::vector<size_t> searching;
    for (size_t i = 0; i < pending.size(); ++i) {
      const Pending& p = pending[i];
      if (p.overloaded && !p.chosen.empty() && !lowered.count(p.name) && p.next < p.combos.size()) searching.push_back(i);
    }
    if (searching.empty()) break;
    auto candidates = instantiate(searching, static_cast<size_t>(std::max(1, options.search_width)));
    Catalog tried;
    tried.path = "(census search)";
    for (const auto& [i, insts] : candidates)
      for (const auto& inst : insts) tried.entries.push_back(entry_of(pending[i], inst));
    if (tried.entries.empty()) break;
    run.search_candidates += static_cast<int>(tried.entries.size());
    ProbeOptions on_representatives = probe;
    on_representatives.targets = representatives;
    std::vector<Cell> cells = measure(tried, on_representatives);
    Catalog found;
    found.path = "(census search)";
    for (const auto& [i, insts] : candidates)  // in candidate order: the first that lowers settles its intrinsic
      for (const auto& inst : insts)
        if (std::any_of(cells.begin(), cells.end(),
                        [&](const Cell& c) { return c.key == inst.key && c.status == Status::kOk; })) {
          keep(i, inst, found);
          break;
        }
    run.search.push_back({searching.size(), tried.entries.size(), found.entries.size()});
    measure_everywhere(found);
  }
  // ---- the layout search: an intrinsic whose overload types are a generation's or a wave size's layout (see
  // layout_family) tries its next candidates on each search processor where none of its instantiations lowers
  // but one of its family's intrinsics does (a lane mask: wherever it does not lower); a candidate that lowers
  // on such a processor keeps a row of its own. ----
  if (!representatives.empty() && options.layout_width > 0) {
    std::map<std::string, std::string> intrinsic_of;
    for (const auto& inst : run.census.instantiations) intrinsic_of[inst.key] = inst.intrinsic;
    std::map<std::string, std::set<std::string>> lowers;         // intrinsic -> processors where one instantiation is ok
    std::map<std::string, std::set<std::string>> family_lowers;  // layout family -> processors with an instruction of it
    for (const auto& c : run.census.cells) {
      if (c.status != Status::kOk) continue;
      const std::string& intrinsic = intrinsic_of[c.key];
      lowers[intrinsic].insert(c.target);
      if (!c.lowered_to.empty()) family_lowers[layout_family(intrinsic)].insert(c.target);
    }
    std::map<size_t, std::set<std::string>> wanted_on;  // pending -> search processors it is sought on
    for (size_t i = 0; i < pending.size(); ++i) {
      const Pending& p = pending[i];
      std::string family = layout_family(p.name);
      if (!p.overloaded || p.chosen.empty() || family.empty() || p.next >= p.combos.size()) continue;
      for (const auto& r : representatives) {
        if (lowers[p.name].count(r)) continue;
        if (family != "lane mask" && !family_lowers[family].count(r)) continue;
        wanted_on[i].insert(r);
      }
    }
    std::vector<size_t> searching;
    for (const auto& [i, where] : wanted_on) searching.push_back(i);
    auto candidates = instantiate(searching, static_cast<size_t>(options.layout_width));
    // Each candidate is measured only where its intrinsic is sought: one run per set of processors.
    std::map<std::set<std::string>, Catalog> tried_on;
    for (const auto& [i, insts] : candidates)
      for (const auto& inst : insts) {
        Catalog& tried = tried_on[wanted_on[i]];
        tried.path = "(census layout search)";
        tried.entries.push_back(entry_of(pending[i], inst));
        ++run.layout.candidates;
      }
    run.layout.intrinsics = searching.size();
    run.search_candidates += static_cast<int>(run.layout.candidates);
    std::vector<Cell> cells;
    for (const auto& [where, tried] : tried_on) {
      ProbeOptions on_sought = probe;
      on_sought.targets.assign(where.begin(), where.end());
      std::vector<Cell> measured = measure(tried, on_sought);
      cells.insert(cells.end(), measured.begin(), measured.end());
    }
    Catalog found;
    found.path = "(census layout search)";
    for (const auto& [i, insts] : candidates)  // in candidate order: each that lowers where still sought is kept
      for (const auto& inst : insts) {
        bool kept = false;
        for (const auto& c : cells) {
          if (c.key != inst.key || c.status != Status::kOk || c.lowered_to.empty() || !wanted_on[i].count(c.target)) continue;
          wanted_on[i].erase(c.target);
          kept = true;
        }
        if (kept) keep(i, inst, found);
      }
    run.layout.found = found.entries.size();
    measure_everywhere(found);
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
  posing["search"] = {{"rounds", options.search_rounds}, {"width", options.search_width}, {"processors", representatives}};
  posing["layout_search"] = {{"width", options.layout_width}, {"families", {"matrix (wmma, swmmac)", "lane mask (ballot, inverse.ballot)", "transposing load (*.tr*)"}}};
  posing["retries_in_parallel"] = true;
  if (!options.clang_calls.empty())
    posing["clang_instantiations"] = {{"clang", options.clang}, {"calls", run.clang.calls}, {"rows", run.clang.rows}};
  prov.probe = posing;
  prov.processors = processors;
  for (const auto& p : processors)
    if (std::string defect = executor->target_defect(p); !defect.empty()) prov.processor_notes[p] = defect;
  prov.intrinsics = static_cast<int>(names.size());
  run.census.sort();
  run.census.recount();
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

std::string probe_module_text(const DeclSpec& spec, const std::optional<CallPosing>& posed, std::string& why) {
  initialize_amdgpu();
  Resolution r = resolve_declaration(spec, "LLVM " + linked_toolchain().llvm_version, kDefaultImmargSweep);
  if (r.kind != Resolution::Kind::kResolved) {
    why = r.evidence.empty() ? "LLVM does not resolve the declaration" : r.evidence;
    return "";
  }
  std::string text = r.shape.declare_line + "\n";
  if (r.shape.declare_line != kProbeSupportDeclare) text += std::string(kProbeSupportDeclare) + "\n";
  text += probe_kernel_ir("probe", r.shape,
                          posed ? probe_posing(r.shape, *posed, r.default_imm) : default_posing(r.shape, r.default_imm));
  text += "!llvm.module.flags = !{!0}\n!0 = !{i32 1, !\"amdhsa_code_object_version\", i32 " +
          std::to_string(kCodeObjectVersion * 100) + "}\n";
  return text;
}

}  // namespace archdb
