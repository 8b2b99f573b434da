// cli/cmd_frontend.cpp — `archdb frontend` (the front-end axis), `archdb disagreements` (where clang and the
// back end part), `archdb findings` (the generated report), and the census fallback of `query`.
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <cstdio>
#include <map>
#include <functional>
#include <regex>
#include <set>

#include "support/compiler_flavor.h"
#include "cli/census_view.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "db/census.h"
#include "db/frontend.h"
#include "probe/census.h"
#include "probe/frontend.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"
#include "support/text.h"

namespace archdb::cli {
namespace fs = std::filesystem;

namespace {

std::string cell_detail(const Cell& c) {
  if (c.status != Status::kOk) return c.evidence;
  std::string s = join(c.lowered_to, " ");
  if (s.empty() && !c.note.empty()) s = "(" + c.note + ")";
  if (c.posed) s += "  [posed: " + c.posed->describe() + "]";
  if (!c.mc_check.empty()) s += "  [mc_check: " + c.mc_check + "]";
  return s;
}

int major_of(const std::string& flavor) { return std::stoi(flavor.substr(4)); }

// ---- the back end's answer beside the front end's ----

struct BackendAnswer {
  const Cell* cell = nullptr;
  std::string source;  // "catalog" or "census"
};

struct Views {
  std::vector<Cell> column;                      // the flavor's measured catalog column
  std::optional<Census> census;
  std::optional<Frontend> frontend;
  std::map<std::string, std::string> intrinsic_of_key;  // catalog key -> the intrinsic LLVM resolved

  BackendAnswer backend(const std::string& key, const std::string& target, const FrontendCell* fe) const {
    auto it = std::lower_bound(column.begin(), column.end(), std::make_pair(key, target),
                               [](const Cell& c, const std::pair<std::string, std::string>& kt) {
                                 return c.key != kt.first ? c.key < kt.first : c.target < kt.second;
                               });
    if (it != column.end() && it->key == key && it->target == target) return {&*it, "catalog"};
    if (!census) return {};
    std::vector<std::string> names;
    if (fe)
      for (const auto& e : fe->emitted)
        if (e.rfind("llvm.amdgcn.", 0) == 0) names.push_back(e);
    // Where clang refuses the builtin, the calls it makes of it where it accepts it.
    if (names.empty() && frontend)
      for (auto [other, end] = frontend->cells_of(key); other != end; ++other)
        if (other->accepted)
          for (const auto& e : other->emitted)
            if (e.rfind("llvm.amdgcn.", 0) == 0 && std::find(names.begin(), names.end(), e) == names.end()) names.push_back(e);
    if (auto i = intrinsic_of_key.find(key); i != intrinsic_of_key.end()) names.push_back(i->second);
    for (const auto& n : names)
      if (const Cell* c = census->find(n, target)) return {c, "census"};
    return {};
  }
};

Views load_views(const Store& store, const std::string& flavor) {
  Views v;
  std::optional<FlavorRow> row = store.flavor(flavor);
  if (row && row->origin == Origin::kMeasured) v.column = store.cells(flavor);
  for (const auto& c : v.column) v.intrinsic_of_key.emplace(c.key, c.intrinsic);
  v.census = load_census(store, flavor);
  v.frontend = load_frontend(store, flavor);
  return v;
}

struct Disagreement {
  std::string key, target, builtin, call;
  std::string kind;  // "front end accepts, back end refuses" / "front end refuses, back end lowers"
  const FrontendCell* fe = nullptr;
  BackendAnswer be;
};

std::vector<Disagreement> disagreements_of(const Views& v) {
  std::vector<Disagreement> out;
  if (!v.frontend) return out;
  for (const auto& c : v.frontend->cells) {
    const FrontendKey* k = v.frontend->key(c.key);
    BackendAnswer be = v.backend(c.key, c.target, &c);
    if (!be.cell) continue;
    Status s = be.cell->status;
    std::string kind;
    if (c.accepted && (s == Status::kArchAbsent || s == Status::kNameAbsent || s == Status::kSignatureMismatch))
      kind = "front end accepts, back end cannot lower";
    else if (!c.accepted && !c.crashed && s == Status::kOk)
      kind = "front end refuses, back end lowers";
    else if (c.accepted && is_toolchain_failure(s))
      kind = "front end accepts, back end crashes or hangs";
    if (kind.empty()) continue;
    out.push_back({c.key, c.target, k ? k->builtin : "", k ? k->call : "", kind, &c, be});
  }
  return out;
}

std::string fe_text(const FrontendCell& c) {
  return c.accepted  ? "accepted" + (c.emitted.empty() ? std::string(" (no intrinsic call)") : " (" + join(c.emitted, ", ") + ")")
         : c.crashed ? "crashed: " + c.diagnostic
                     : "rejected: " + c.diagnostic;
}

// ---- reproducers: one line each, stock LLVM tools ----

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string printf_lines(const std::string& text) {
  std::string out = "printf '%s\\n'";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (!line.empty()) out += " " + shell_quote(line);
  }
  return out;
}

std::string llc_reproducer(const std::string& module, const std::string& flavor, const std::string& target, bool to_mc) {
  std::string m = std::to_string(major_of(flavor));
  std::string cmd = printf_lines(module) + " | llc-" + m + " -mtriple=amdgcn-amd-amdhsa -mcpu=" + target + " -O0";
  if (to_mc)
    return cmd + " -o - | llvm-mc-" + m + " -triple=amdgcn-amd-amdhsa -mcpu=" + target + " -filetype=obj -o /dev/null";
  return cmd + " -o -";
}

std::string clang_reproducer(const std::string& call, const std::string& flavor, const std::string& target) {
  return "printf '%s\\n' " + shell_quote(call) + " | clang-" + std::to_string(major_of(flavor)) +
         " -x hip --cuda-device-only -nogpulib -nogpuinc --offload-arch=" + target + " -S -emit-llvm -O0 -o - -";
}

std::string md_escape(std::string s) {
  for (size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2) s.replace(at, 1, "\\|");
  return s;
}

// A cell to report, with what poses it.
struct Subject {
  std::string name;  // key (catalog) or instantiation (census)
  std::string source;
  DeclSpec spec;
  const CatalogEntry* entry = nullptr;  // a catalog key's: the spec of a cell's target (its wave64 layout)
};

std::string module_of(const Subject& s, const Cell& c, const std::string& flavor, std::string& why) {
  if (c.cause == Cause::kDeclaration) {  // LLVM died on the declaration itself
    why = "LLVM dies reading the declaration";
    return "";
  }
  return probe_module_text(s.entry ? s.entry->spec_for(flavor, c.target) : s.spec, c.posed, why);
}

// What a finding is, without what names its one case: the intrinsic's name and, for the assembler, the
// instruction text after the last ": ". Findings of one class are most likely one LLVM bug.
std::string finding_class(const Cell& c) {
  static const std::regex kIntrinsic(R"(llvm\.amdgcn\.[A-Za-z0-9_.]+)");
  static const std::regex kProcessor(R"(\(gfx[0-9a-z-]+\))");
  static const std::regex kInstruction(R"(: [a-z][a-z0-9_]*( |$))");  // where the rejected instruction starts
  std::string e = std::regex_replace(c.status == Status::kOk ? c.mc_check : c.evidence, kIntrinsic, "<intrinsic>");
  e = std::regex_replace(e, kProcessor, "(<processor>)");
  static const std::regex kSelected(R"(^LLVM selects [a-z][a-z0-9_]*)");
  e = std::regex_replace(e, kSelected, "LLVM selects <instruction>");
  const std::string rejects = "MC assembler rejects it: ";
  if (c.status == Status::kOk && e.rfind(rejects, 0) == 0) {
    std::smatch m;
    std::string reason = e.substr(rejects.size());
    if (std::regex_search(reason, m, kInstruction)) e = rejects + reason.substr(0, static_cast<size_t>(m.position(0)));
  }
  return std::string(status_name(c.status)) + ": " + e;
}

// The intrinsic's family: the two name parts after the prefix ("image.sample", "workitem.id").
std::string family_of(const std::string& intrinsic) {
  std::string rest = intrinsic.rfind("llvm.amdgcn.", 0) == 0 ? intrinsic.substr(12) : intrinsic;
  size_t dot = rest.find('.');
  if (dot != std::string::npos) dot = rest.find('.', dot + 1);
  return rest.substr(0, dot);
}

struct Finding {
  std::string what;                                        // the class
  size_t cells = 0;
  std::vector<std::pair<const Subject*, std::vector<const Cell*>>> cases;  // per intrinsic, its cells
};

std::vector<Finding> classify(const std::vector<std::pair<const Subject*, const Cell*>>& cells,
                              const std::function<std::string(const Subject&, const Cell&)>& class_of) {
  std::vector<Finding> out;
  std::map<std::string, size_t> index;
  for (const auto& [s, c] : cells) {
    auto [it, fresh] = index.emplace(class_of(*s, *c), out.size());
    if (fresh) out.push_back({it->first, 0, {}});
    Finding& f = out[it->second];
    ++f.cells;
    if (f.cases.empty() || f.cases.back().first != s) f.cases.push_back({s, {}});
    f.cases.back().second.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.cells > b.cells; });
  return out;
}

int findings(const Context& ctx, const std::string& flavor, const std::string& out_file) {
  auto store = ctx.open_store();
  Views v = load_views(*store, flavor);
  if (v.column.empty() && !v.census)
    throw usage_error("no measured column and no census of " + flavor + " in the database");
  initialize_amdgpu();
  const ToolchainInfo& tc = linked_toolchain();
  bool can_pose = tc.flavor() == flavor;  // reproducer modules are posed by this build's LLVM

  // Subjects: catalog keys and census instantiations.
  Catalog catalog = ctx.load_catalog();
  std::deque<Subject> subjects;
  std::map<std::string, const Subject*> by_name;
  for (const auto& e : catalog.entries) {
    subjects.push_back({e.key, "catalog", e.spec_for(flavor), &e});
    by_name["catalog\t" + e.key] = &subjects.back();
  }
  if (v.census)
    for (const auto& i : v.census->instantiations) {
      DeclSpec s;
      s.kind = DeclSpec::Kind::kIntrinsic;
      s.name = i.intrinsic;
      s.overloaded = !i.overload_types.empty();
      s.overload_types = i.overload_types;
      subjects.push_back({i.key, "census", s, nullptr});
      by_name["census\t" + i.key] = &subjects.back();
    }
  std::vector<std::pair<const Subject*, const Cell*>> crashes, empty, mc, unencodable, absent, declared;
  bool any_declared = false;  // this flavor's LLVM declares the features of some intrinsics (LLVM 23 on)
  auto scan = [&](const std::vector<Cell>& cells, const std::string& source) {
    for (const auto& c : cells) {
      auto s = by_name.find(source + "\t" + c.key);
      if (s == by_name.end()) continue;
      if (is_toolchain_failure(c.status)) crashes.push_back({s->second, &c});
      if (c.status == Status::kOk && c.lowered_to.empty()) empty.push_back({s->second, &c});
      // Codegen selected an instruction the assembler says this processor lacks (docs/measuring.md "ok means an instruction"):
      // the cell is a refusal, and LLVM disagrees with itself.
      if ((c.status == Status::kOk && !c.mc_check.empty()) || c.cause == Cause::kRejectedInstruction)
        mc.push_back({s->second, &c});
      // Selected as an instruction with no encoding there, then a crash: LLVM's tables refuse it, its code
      // generator should have.
      if (c.cause == Cause::kUnencodable) unencodable.push_back({s->second, &c});
      // A crash or hang before selection, on a call whose instruction (where it lowers) has no encoding there.
      if (c.cause == Cause::kInstructionAbsent) absent.push_back({s->second, &c});
      // LLVM's intrinsic table declares the target has what the intrinsic needs and its code generator refuses it,
      // or declares it has not and the call lowers.
      any_declared |= c.declared.has_value();
      if (c.declared && ((c.declared->holds && c.status == Status::kArchAbsent) || (!c.declared->holds && c.status == Status::kOk)))
        declared.push_back({s->second, &c});
    }
  };
  scan(v.column, "catalog");
  if (v.census) scan(v.census->cells, "census");

  std::string md = "# archdb findings: " + flavor + "\n\n";
  md += "Generated by `archdb findings --flavor " + flavor + "` from the measured catalog column";
  md += v.census ? " and the census" : "";
  md += v.frontend ? " and the front-end axis" : "";
  md += " of " + flavor + " (LLVM " + (v.census ? v.census->provenance.llvm_version : tc.llvm_version) +
        "). Every reproducer is one line with stock LLVM tools (Debian names: `llc-N`, `llvm-mc-N`, `clang-N`), in a "
        "shell block after its table, named in the table's row (R1, R2, ...): copy it as it stands. The module is the "
        "probe's own, at -O0 as the probe compiles it. Processors after the first in a row answered the same way; "
        "the reproducer names the first.\n\n";
  // Reproducers go in shell blocks after each table, not in its cells, where `|` would have to be escaped.
  int reproducers = 0;
  std::string blocks;
  auto reproducer_ref = [&](const std::string& title, const std::string& command) {
    std::string name = "R" + std::to_string(++reproducers);
    blocks += "#### " + name + ": " + title + "\n\n```sh\n" + command + "\n```\n\n";
    return name;
  };
  auto flush_blocks = [&] {
    md += blocks;
    blocks.clear();
  };
  auto section = [&](const std::string& title, const std::string& what, const std::vector<Finding>& found, bool to_mc) {
    size_t cells = 0;
    for (const auto& f : found) cells += f.cells;
    md += "## " + title + " (" + std::to_string(cells) + " cells, " + std::to_string(found.size()) + " kinds)\n\n" +
          what + "\n\n";
    if (found.empty()) {
      md += "None.\n\n";
      return;
    }
    md += "| what LLVM did | cells | intrinsics (processors) | reproducer (the first of them) |\n|---|---|---|---|\n";
    for (const Finding& f : found) {
      const Subject& s = *f.cases.front().first;
      const Cell& c = *f.cases.front().second.front();
      std::string why;
      std::string module = can_pose ? module_of(s, c, flavor, why) : "";
      std::string repro = module.empty() ? "(not posed: " + (can_pose ? why : "built against another LLVM") + ")"
                                         : reproducer_ref(c.intrinsic + " on " + c.target + ": " + f.what,
                                                          llc_reproducer(module, flavor, c.target, to_mc));
      std::string cases;
      for (const auto& [subject, list] : f.cases) {
        std::vector<std::string> procs;
        for (const Cell* x : list) procs.push_back(x->target);
        cases += (cases.empty() ? "" : "; ") + std::string("`") + list.front()->intrinsic + "`" +
                 (subject->source == "catalog" ? " (key " + subject->name + ")" : "") + " (" + join(procs, ", ") + ")";
      }
      md += "| " + md_escape(f.what) + " | " + std::to_string(f.cells) + " | " + md_escape(cases) + " | " +
            md_escape(repro) + " |\n";
    }
    md += "\n";
    flush_blocks();
  };
  auto by_evidence = [](const Subject&, const Cell& c) { return finding_class(c); };
  auto by_family = [](const Subject&, const Cell& c) {
    std::optional<int64_t> imm = c.posed ? c.posed->alike_immediate() : std::nullopt;
    return family_of(c.intrinsic) + ": " + c.note + (imm && *imm != 0 ? " (imm " + std::to_string(*imm) + ")" : "");
  };
  std::vector<Finding> crash_kinds = classify(crashes, by_evidence), empty_kinds = classify(empty, by_family),
                       mc_kinds = classify(mc, by_evidence), unencodable_kinds = classify(unencodable, by_evidence),
                       absent_kinds = classify(absent, by_evidence);
  auto by_declaration = [](const Subject&, const Cell& c) {
    return std::string(c.declared->holds ? "declared to need " : "declared to need what the processor lacks: ") +
           c.declared->features + "; measured " + std::string(status_name(c.status));
  };
  std::vector<Finding> declared_kinds = classify(declared, by_declaration);
  section("LLVM crashes and hangs",
          "Asking LLVM crashed it (a signal, or a fatal error that is not a refusal to lower) or it did not finish in "
          "the probe's budget, again when retried alone. One row per kind (the evidence without the intrinsic's "
          "name), most cells first.",
          crash_kinds, false);
  section("LLVM selects an instruction the processor has no encoding for, then crashes",
          "Codegen selected, as LLVM's tables say (docs/measuring.md \"Selected but unencodable\"), an instruction this processor "
          "has no encoding for, and crashed further on (most often asking the instruction's size in branch "
          "relaxation) instead of refusing the call: the cell is arch_absent. One row per kind.",
          unencodable_kinds, false);
  section("LLVM crashes or hangs on a call whose instruction the processor has no encoding for",
          "LLVM crashed or ran out of time before it selected anything, and wherever the same call lowers it becomes "
          "an instruction this processor's assembler refuses as another processor's (docs/measuring.md \"Selected but "
          "unencodable\"): the cell is arch_absent, and LLVM should have refused the call. One row per kind.",
          absent_kinds, false);
  section("LLVM's declaration and its code generator disagree",
          std::string(any_declared
                          ? "LLVM's intrinsic table declares the target features an intrinsic needs "
                            "(Intrinsic::getRequiredTargetFeatures, LLVM 23 on); where the processor satisfies them "
                            "and the call is refused, or does not and the call lowers, the table or the code generator is "
                            "wrong. One row per declaration and answer."
                          : "LLVM " + (v.census ? v.census->provenance.llvm_version : tc.llvm_version) +
                                " declares no target features per intrinsic (Intrinsic::getRequiredTargetFeatures is "
                                "LLVM 23's)."),
          declared_kinds, false);
  section("Intrinsics that lower to no instruction",
          "Codegen succeeded and the object links, but the call became no instruction beyond the probe's baseline "
          "however it was posed (docs/measuring.md \"How the probe measures\": immediates that ask for work were tried). "
          "One row per intrinsic family.",
          empty_kinds, false);
  section("Back end and assembler disagree",
          "Codegen printed assembly that LLVM's own MC assembler rejects for the same processor: an instruction "
          "the processor does not have (the cell is arch_absent), or one the assembler rejects otherwise (the object "
          "codegen writes itself was accepted). One row per kind of rejection.",
          mc_kinds, true);

  std::vector<Disagreement> d = disagreements_of(v);
  md += "## Front end and back end disagree (" + std::to_string(d.size()) + ")\n\n";
  if (!v.frontend) {
    md += "No front-end measurement for " + flavor + " (`archdb frontend --flavor " + flavor + "`).\n\n";
  } else {
    md += "Clang (" + v.frontend->provenance.clang + ") accepts the builtin for the processor and the back end "
          "cannot lower its intrinsic there, or the reverse. Both diagnostics, then a reproducer for each side, on the "
          "first of the processors where they are the same.\n\n";
    if (d.empty()) md += "None.\n\n";
    else
      md += "| key | processors | disagreement | front end | back end | clang reproducer | llc reproducer |\n"
            "|---|---|---|---|---|---|---|\n";
    // One row per key, kind and pair of diagnostics, the processors listed.
    std::vector<std::pair<const Disagreement*, std::vector<std::string>>> rows;
    std::map<std::string, size_t> row_of;
    for (const auto& x : d) {
      std::string id = x.key + "\t" + x.kind + "\t" + fe_text(*x.fe) + "\t" + std::string(status_name(x.be.cell->status)) +
                       x.be.source + cell_detail(*x.be.cell);
      auto [it, fresh] = row_of.emplace(id, rows.size());
      if (fresh) rows.push_back({&x, {}});
      rows[it->second].second.push_back(x.target);
    }
    for (const auto& [first, targets] : rows) {
      const Disagreement& x = *first;
      std::string why, llc = "(not posed)";
      std::string title = x.key + " on " + x.target + ": " + x.kind;
      std::string clang = reproducer_ref(title + " (front end)", clang_reproducer(x.call, flavor, x.target));
      if (can_pose) {
        auto s = by_name.find((x.be.source == "catalog" ? "catalog\t" + x.key : "census\t" + x.be.cell->key));
        if (s != by_name.end()) {
          std::string module = module_of(*s->second, *x.be.cell, flavor, why);
          if (!module.empty()) llc = reproducer_ref(title + " (back end)", llc_reproducer(module, flavor, x.target, false));
        }
      }
      md += "| " + x.key + " | " + join(targets, ", ") + " | " + x.kind + " | " + md_escape(fe_text(*x.fe)) + " | " +
            md_escape(std::string(status_name(x.be.cell->status)) + " (" + x.be.source + "): " + cell_detail(*x.be.cell)) +
            " | " + clang + " | " + llc + " |\n";
    }
    md += "\n";
    flush_blocks();
  }
  fs::path out = out_file.empty() ? fs::path(ctx.data) / flavor / "findings.md" : fs::path(out_file);
  std::unique_ptr<FileLock> writing;
  if (out_file.empty()) writing = ctx.lock_column(flavor);  // a regeneration carries findings.md over
  write_file_atomically(out, md);
  std::printf("wrote %s: %zu crashes and hangs (%zu kinds), %zu selections with no encoding (%zu kinds), %zu "
              "crashes and hangs on an instruction with no encoding (%zu kinds), %zu no-instruction lowerings (%zu "
              "families), %zu assembler disagreements (%zu kinds), %zu front-end disagreements\n",
              out.string().c_str(), crashes.size(), crash_kinds.size(), unencodable.size(), unencodable_kinds.size(),
              absent.size(), absent_kinds.size(), empty.size(), empty_kinds.size(), mc.size(), mc_kinds.size(), d.size());
  return kExitOk;
}

int frontend_command(const Context& ctx, const std::string& flavor, std::string clang, int jobs,
                     const std::string& processors_arg) {
  if (!is_valid_flavor(flavor)) throw usage_error("invalid flavor '" + flavor + "' (expected e.g. llvm22)");
  if (clang.empty()) clang = "clang-" + std::to_string(major_of(flavor));
  std::string clang_flavor = flavor_of_compiler(clang);
  if (clang_flavor != flavor)
    throw usage_error("'" + clang + "' is " + clang_flavor + ", not " + flavor + ": the front end must be the same flavor");
  auto store = ctx.open_store();
  FrontendOptions options;
  options.flavor = flavor;
  options.clang = clang;
  options.jobs = jobs;
  options.progress = ::isatty(2);
  options.processors = split_list(processors_arg);
  bool partial = !options.processors.empty();
  if (options.processors.empty()) {
    if (std::optional<Census> c = load_census(*store, flavor)) options.processors = c->provenance.processors;
    else if (linked_toolchain().flavor() == flavor) options.processors = amdgpu_processor_names();
    else options.processors = ctx.load_targets().names;
  }
  Catalog catalog = ctx.load_catalog();
  std::map<std::string, std::string> resolved;
  std::optional<FlavorRow> row = store->flavor(flavor);
  if (row && row->origin == Origin::kMeasured)
    for (const auto& c : store->cells(flavor)) resolved.emplace(c.key, c.intrinsic);
  for (const auto& e : catalog.entries) {
    const DeclSpec& s = e.spec_for(flavor);
    if (s.name.rfind("llvm.amdgcn.", 0) != 0) continue;
    auto measured = resolved.find(e.key);
    options.keys.push_back({e.key, s.name, measured == resolved.end() ? "" : measured->second});
  }
  options.builtins = clang_builtin_names(clang);
  Frontend fe = measure_frontend(options);
  std::printf("%s front end (%s): %zu catalog keys posing llvm.amdgcn.* intrinsics and %d other builtins (of %d names in "
              "clang's files, %d declared) on %zu processors: %d accepted, %d rejected; %d keys without a builtin, %d "
              "builtins not posed\n",
              flavor.c_str(), fe.provenance.clang.c_str(), options.keys.size(),
              static_cast<int>(fe.keys.size() - options.keys.size()), fe.provenance.builtin_names["in_clang"],
              fe.provenance.builtin_names["declared"], fe.provenance.processors.size(), fe.provenance.counts["accepted"],
              fe.provenance.counts["rejected"], fe.provenance.counts["no_builtin"], fe.provenance.counts["not_posed"]);
  if (partial) {
    std::printf("a partial front end (--processors) is not stored or committed\n");
    return kExitOk;
  }
  std::string text = render_frontend(fe);
  auto writing = ctx.lock_column(flavor);  // a regeneration carries frontend.txt over
  store_frontend(*store, fe, digest_hex(text));
  write_file_atomically(fs::path(ctx.data) / flavor / kFrontendFile, text);
  std::printf("wrote %s and %s\n", (fs::path(ctx.data) / flavor / kFrontendFile).string().c_str(), ctx.db.c_str());
  return kExitOk;
}

int disagreements_command(const Context& ctx, const std::string& flavor, bool json) {
  auto store = ctx.open_store();
  Views v = load_views(*store, flavor);
  if (!v.frontend) throw usage_error("no front-end measurement of " + flavor + " (run `archdb frontend --flavor " + flavor + "`)");
  std::vector<Disagreement> d = disagreements_of(v);
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& x : d) {
      nlohmann::ordered_json j;
      j["key"] = x.key;
      j["target"] = x.target;
      j["kind"] = x.kind;
      j["builtin"] = x.builtin;
      j["call"] = x.call;
      j["frontend"] = x.fe->accepted ? nlohmann::ordered_json{{"status", "accepted"}, {"emitted", x.fe->emitted}}
                                     : nlohmann::ordered_json{{"status", x.fe->crashed ? "crashed" : "rejected"},
                                                              {"diagnostic", x.fe->diagnostic}};
      nlohmann::ordered_json be = cell_to_json(*x.be.cell);
      be["source"] = x.be.source;
      j["backend"] = be;
      out.push_back(j);
    }
    std::printf("%s\n", out.dump(2).c_str());
    return kExitOk;
  }
  Table table({"key", "processor", "disagreement", "front end", "back end"});
  for (const auto& x : d)
    table.add({x.key, x.target, x.kind, fe_text(*x.fe),
               std::string(status_name(x.be.cell->status)) + " (" + x.be.source + "): " + cell_detail(*x.be.cell)});
  if (!d.empty()) std::fputs(table.render().c_str(), stdout);
  std::map<std::string, int> kinds;
  for (const auto& x : d) kinds[x.kind]++;
  std::string summary;
  for (const auto& [k, n] : kinds) summary += (summary.empty() ? "" : "; ") + std::to_string(n) + " " + k;
  std::printf("%s: %zu disagreements between clang and the back end%s\n", flavor.c_str(), d.size(),
              summary.empty() ? "" : (" (" + summary + ")").c_str());
  return kExitOk;
}

// A mangled name the census did not measure (`llvm.amdgcn.cos.f64`) of an intrinsic it did measure under
// another (`llvm.amdgcn.cos.f32`): an error saying so, not "unknown key" — and not the other's answer, which
// says nothing of this one. The intrinsic is found by dropping the name's last dotted parts in turn.
void refuse_unmeasured_instantiation(const Store& store, const std::vector<std::string>& flavors, const std::string& name) {
  const std::string full = full_intrinsic_name(name);
  const size_t prefix = full_intrinsic_name("").size();  // "llvm.amdgcn.": never dropped
  std::string base = full;
  for (size_t dot; (dot = base.rfind('.')) >= prefix;) {
    base.resize(dot);
    for (const auto& f : flavors) {
      std::vector<std::string> measured;
      for (const auto& i : find_census(store, f, base).instantiations)
        if (i.intrinsic == base) measured.push_back(i.key);
      if (measured.empty()) continue;
      throw usage_error("'" + full + "' is not in the " + f + " census: it measured " + base + " as " +
                        join(measured, ", ") + " only (one instantiation's answer says nothing of another's)");
    }
  }
}
}  // namespace

namespace {
// The intrinsic's answer on each processor (intrinsic_answers) where the name is an intrinsic with more than one
// instantiation; empty otherwise.
std::map<std::string, Cell> weighed(const CensusMatch& m, const std::vector<std::string>& only_targets) {
  if (m.instantiations.size() < 2) return {};
  return intrinsic_answers(m.instantiations, m.cells, only_targets);
}
}  // namespace

bool query_census(const Context& ctx, const Store& store, const std::string& name,
                  const std::vector<std::string>& only_flavors, const std::vector<std::string>& only_targets, bool json,
                  const std::pair<std::string, std::string>& resolved) {
  std::vector<std::string> flavors = census_flavors(store);
  if (!only_flavors.empty()) {
    std::vector<std::string> keep;
    for (const auto& f : flavors)
      if (std::find(only_flavors.begin(), only_flavors.end(), f) != only_flavors.end()) keep.push_back(f);
    flavors = keep;
  }
  std::vector<std::pair<std::string, CensusMatch>> found;
  for (const auto& f : flavors) {
    CensusMatch m = find_census(store, f, name);
    if (!m.instantiations.empty() || m.not_probed) found.push_back({f, std::move(m)});
  }
  if (found.empty()) {
    refuse_unmeasured_instantiation(store, flavors, name);
    return false;
  }
  auto shown = [&](const Cell& c) {
    return only_targets.empty() || std::find(only_targets.begin(), only_targets.end(), c.target) != only_targets.end();
  };
  if (json) {
    nlohmann::ordered_json out;
    out["key"] = name;
    out["source"] = "census";
    if (!resolved.second.empty()) out["resolved"] = {{"asked", resolved.first}, {"how", resolved.second}};
    nlohmann::ordered_json fl = nlohmann::ordered_json::object();
    for (const auto& [f, m] : found) {
      nlohmann::ordered_json col;
      col["origin"] = "census";
      if (m.not_probed) col["not_probed"] = m.not_probed->reason;
      nlohmann::ordered_json insts = nlohmann::ordered_json::array();
      for (const auto& i : m.instantiations) {
        nlohmann::ordered_json ij;
        ij["instantiation"] = i.key;
        ij["overload_types"] = i.overload_types;
        nlohmann::ordered_json cells = nlohmann::ordered_json::object();
        for (const auto& c : m.cells)
          if (c.key == i.key && shown(c)) cells[c.target] = cell_to_json(c);
        ij["cells"] = cells;
        insts.push_back(ij);
      }
      col["instantiations"] = insts;
      nlohmann::ordered_json answers = nlohmann::ordered_json::object();
      for (const auto& [target, c] : weighed(m, only_targets))
        answers[target] = {{"status", status_name(c.status)}, {"instantiation", c.key}, {"evidence", c.evidence}};
      if (!answers.empty()) col["intrinsic_answer"] = answers;
      fl[f] = col;
    }
    out["flavors"] = fl;
    std::printf("%s\n", out.dump(2).c_str());
    return true;
  }
  if (!resolved.second.empty()) std::printf("%s: %s\n", resolved.first.c_str(), resolved.second.c_str());
  std::printf("%s (census: not a catalog key)\n", name.c_str());
  for (const auto& [f, m] : found) {
    if (m.not_probed) std::printf("\n%s census: %s not probed: %s\n", f.c_str(), m.not_probed->intrinsic.c_str(), m.not_probed->reason.c_str());
    for (const auto& i : m.instantiations) {
      std::printf("\n%s census: %s%s\n", f.c_str(), i.key.c_str(),
                  i.overload_types.empty() ? "" : (" [" + join(i.overload_types, ", ") + "]").c_str());
      Table t({"  processor", "status", "lowered to / evidence"});
      for (const auto& c : m.cells)
        if (c.key == i.key && shown(c)) t.add({"  " + c.target, std::string(status_name(c.status)), cell_detail(c)});
      std::fputs(t.render().c_str(), stdout);
    }
    std::map<std::string, Cell> answers = weighed(m, only_targets);
    if (answers.empty()) continue;
    std::printf("\n%s census: %s on each processor, over its %zu instantiations (ok where any lowers, refused where "
                "every one is)\n",
                f.c_str(), m.instantiations.front().intrinsic.c_str(), m.instantiations.size());
    Table t({"  processor", "status", "instantiation"});
    for (const auto& [target, c] : answers) t.add({"  " + target, std::string(status_name(c.status)), c.key});
    std::fputs(t.render().c_str(), stdout);
  }
  return true;
}

void add_census_reports(CLI::App& app, Context& context, int& exit_code) {
  struct FrontendArgs {
    std::string flavor, clang, processors;
    int jobs = 0;
  };
  auto fa = std::make_shared<FrontendArgs>();
  CLI::App* fe = app.add_subcommand(
      "frontend", "Ask clang of the flavor whether it accepts each catalog key's builtin for each processor; store it "
                  "and write data/<flavor>/frontend.txt");
  fe->add_option("--flavor", fa->flavor, "the flavor (clang-<major> by default)")->required();
  fe->add_option("--clang", fa->clang, "the clang driver (must be of the same flavor)");
  fe->add_option("--jobs,-j", fa->jobs, "clang processes at once, at least 1 (default: the CPUs this process may use)")
      ->check(CLI::Range(1, 4096));
  fe->add_option("--processors", fa->processors, "only these processors (comma-separated); not stored")->group("Partial");
  fe->callback([&context, &exit_code, fa] {
    exit_code = frontend_command(context, fa->flavor, fa->clang, fa->jobs, fa->processors);
  });

  auto flavor = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* d = app.add_subcommand(
      "disagreements", "List the (key, processor) pairs where clang accepts the builtin and the back end cannot lower "
                       "its intrinsic, or the reverse, with both diagnostics");
  d->add_option("--flavor", *flavor, "the flavor")->required();
  d->add_flag("--json", *json, "print JSON");
  d->callback([&context, &exit_code, flavor, json] { exit_code = disagreements_command(context, *flavor, *json); });

  auto fflavor = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  CLI::App* f = app.add_subcommand(
      "findings", "Write the findings report (Markdown): LLVM crashes and hangs, intrinsics that lower to no "
                  "instruction, back-end/assembler and front-end/back-end disagreements, each with a reproducer");
  f->add_option("--flavor", *fflavor, "the flavor")->required();
  f->add_option("--out", *out, "the report (default: data/<flavor>/findings.md)");
  f->callback([&context, &exit_code, fflavor, out] { exit_code = findings(context, *fflavor, *out); });
}

}  // namespace archdb::cli
