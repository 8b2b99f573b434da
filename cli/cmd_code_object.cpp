// cli/cmd_code_object.cpp — `archdb code-object FILE`: a built code object's kernels with their registers,
// LDS, scratch and occupancy, and what its disassembly holds (the build gate writes one per built pair); and
// `archdb gate-report`: the gate manifest as a table.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/table.h"
#include "kernels/gate/code_object.h"
#include "support/error.h"
#include "support/files.h"
#include "support/json_depth.h"

namespace archdb::cli {
namespace {

struct CodeObjectArgs {
  std::string path;
  std::string remarks;
  std::string disassembly;
  bool json = false;
  bool require_no_scratch = false;
};

int code_object(const CodeObjectArgs& args) {
  CodeObjectReport report = read_code_object(args.path);
  if (!args.remarks.empty()) apply_resource_remarks(report, read_file(args.remarks));
  if (!args.disassembly.empty()) apply_disassembly(report, read_file(args.disassembly));
  if (args.json) {
    std::printf("%s\n", report.to_json().dump(2).c_str());
  } else {
    std::printf("%s (%s)\n", report.path.c_str(), report.target.c_str());
    Table table({"kernel", "VGPR", "AGPR", "SGPR", "LDS bytes", "scratch", "wave", "occupancy"});
    for (const KernelResources& k : report.kernels)
      table.add({k.name, std::to_string(k.vgpr_count), std::to_string(k.agpr_count), std::to_string(k.sgpr_count),
                 std::to_string(k.lds_bytes), std::to_string(k.scratch_bytes), std::to_string(k.wavefront_size),
                 std::to_string(k.occupancy) + (k.remark_occupancy >= 0 ? " (remark agrees)" : "")});
    std::printf("%s", table.render().c_str());
  }
  if (args.require_no_scratch)
    for (const KernelResources& k : report.kernels)
      if (k.scratch_bytes != 0)
        throw input_error(args.path + ": kernel '" + k.name + "' uses " + std::to_string(k.scratch_bytes) +
                          " bytes of scratch per lane (must be 0)");
  return kExitOk;
}

// The gate manifest as a report a reviewer reads: per built (variant, target) and kernel function, the
// resources and occupancy and the MFMA instructions that function holds (counted under its own symbol in
// the disassembly); then every pair not built, and why.
int gate_report(const std::string& path) {
  nlohmann::json gate;
  const std::string text = read_file(path);
  check_json_depth(text, path);
  try {
    gate = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw input_error(path + ": not JSON: " + e.what());
  }
  if (!gate.is_object() || gate.value("schema", "") != "archdb.gate-manifest/v1")
    throw input_error(path + ": not an archdb gate manifest (schema archdb.gate-manifest/v1)");
  try {
    std::printf("gate manifest %s (%s)\n", path.c_str(), gate.value("flavor", "").c_str());
    Table built({"variant", "target", "function", "VGPR", "AGPR", "SGPR", "LDS bytes", "scratch", "occupancy", "MFMA"});
    std::vector<std::string> refusals;
    for (const auto& [kernel, k] : gate.at("kernels").items()) {
      for (const auto& [target, report] : k.at("reports").items()) {
        for (const auto& f : report.at("kernels")) {
          int64_t mfma = 0;
          std::string mfma_names;
          const nlohmann::json mnemonics = f.value("mnemonics", nlohmann::json::object());
          for (const auto& [m, n] : mnemonics.items())
            if (m.rfind("v_mfma", 0) == 0) {
              mfma += n.get<int64_t>();
              mfma_names += (mfma_names.empty() ? "" : ",") + m;
            }
          built.add({kernel, target, f.at("name").get<std::string>(), std::to_string(f.at("vgpr").get<int64_t>()),
                     std::to_string(f.at("agpr").get<int64_t>()), std::to_string(f.at("sgpr").get<int64_t>()),
                     std::to_string(f.at("lds_bytes").get<int64_t>()), std::to_string(f.at("scratch_bytes").get<int64_t>()),
                     f.contains("occupancy_waves_per_simd") ? std::to_string(f["occupancy_waves_per_simd"].get<int64_t>()) : "-",
                     mfma ? std::to_string(mfma) + " " + mfma_names : "-"});
        }
      }
      for (const auto& n : k.at("not_built")) refusals.push_back(n.at("check").at("message").get<std::string>());
    }
    std::printf("%s", built.render().c_str());
    std::printf("not built (%zu):\n", refusals.size());
    for (const auto& r : refusals) std::printf("  %s\n", r.c_str());
  } catch (const nlohmann::json::exception& e) {
    throw input_error(path + ": malformed gate manifest: " + e.what());
  }
  return kExitOk;
}

}  // namespace

void add_code_object(CLI::App& app, Context& context, int& exit_code) {
  auto args = std::make_shared<CodeObjectArgs>();
  CLI::App* cmd = app.add_subcommand("code-object", "a built AMDGPU code object's kernels: registers, LDS, scratch, occupancy");
  cmd->add_option("file", args->path, "the code object (.hsaco)")->required();
  cmd->add_option("--remarks", args->remarks, "clang's -Rpass-analysis=kernel-resource-usage output (gives occupancy)");
  cmd->add_option("--disassembly", args->disassembly, "llvm-objdump -d output (gives instruction counts)");
  cmd->add_flag("--json", args->json, "JSON output");
  cmd->add_flag("--require-no-scratch", args->require_no_scratch, "fail (exit 3) when a kernel uses scratch");
  cmd->callback([args, &exit_code] { exit_code = code_object(*args); });

  auto manifest = std::make_shared<std::string>();
  CLI::App* report = app.add_subcommand("gate-report", "the build gate's manifest as a table: what was built, its resources, what was not and why");
  report->add_option("file", *manifest, "gate-manifest.json")->required();
  report->callback([manifest, &exit_code] { exit_code = gate_report(*manifest); });
}

}  // namespace archdb::cli
