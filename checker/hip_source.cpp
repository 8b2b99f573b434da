// checker/hip_source.cpp — HIP source through the flavor's clang (hip_source.h): the command, the child, and
// clang's diagnostics read for refused builtins.
#include "checker/hip_source.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

#include "schema/targets.h"
#include "support/error.h"
#include "support/files.h"
#include "support/spawn.h"
#include "support/text.h"

namespace archdb {

namespace fs = std::filesystem;

bool is_hip_source(const std::string& path) {
  static const std::set<std::string> kExtensions = {".hip", ".cu", ".cpp", ".cc", ".cxx"};
  return kExtensions.count(fs::path(path).extension().string()) > 0;
}

std::string clang_for_flavor(const std::string& flavor, const std::string& compiler) {
  if (!compiler.empty()) {
    std::string found = find_program(compiler);
    if (found.empty()) throw usage_error("cannot run compiler '" + compiler + "': not found");
    return found;
  }
  return find_program("clang-" + flavor.substr(4));  // flavor: "llvm<major>"
}

std::vector<std::string> hip_device_command(const std::string& clang, const std::string& target, const std::string& source,
                                            const std::string& out, const std::vector<std::string>& extra_args) {
  std::vector<std::string> command = {clang, "-x", "hip", "--cuda-device-only", "-nogpulib", "-nogpuinc",
                                      "--offload-arch=" + target_processor(target)};
  for (const std::string& feature : split(target_features(target), ',')) {
    if (feature.empty() || feature == "-wavefrontsize32") continue;
    if (feature != "+wavefrontsize64")
      throw usage_error("target '" + target + "': a HIP source is compiled with the features clang has a flag for "
                        "(+wavefrontsize64: -mwavefrontsize64), not '" + feature + "'");
    command.push_back("-mwavefrontsize64");
  }
  command.insert(command.end(), {"-O3", "-std=c++17", "-ferror-limit=0", "-fno-color-diagnostics", "-S", "-emit-llvm"});
  command.insert(command.end(), extra_args.begin(), extra_args.end());
  command.insert(command.end(), {"-o", out, source});
  return command;
}

std::vector<BuiltinRefusal> builtin_refusals(const std::string& clang_stderr) {
  static const std::regex kNeedsFeature(R"(error: '(__builtin_amdgcn_\w+)' needs target feature \S+)");
  static const std::regex kUndeclared(R"(error: use of undeclared identifier '(__builtin_amdgcn_\w+)')");
  std::vector<BuiltinRefusal> out;
  std::set<std::string> seen;
  for (const std::string& line : split(clang_stderr, '\n')) {
    std::smatch m;
    bool unknown = false;
    if (std::regex_search(line, m, kNeedsFeature)) {
    } else if (std::regex_search(line, m, kUndeclared)) {
      unknown = true;
    } else {
      continue;
    }
    std::string builtin = m[1].str();
    if (!seen.insert(builtin).second) continue;
    // clang's words from "error:" on, without a spelling suggestion that names another builtin.
    std::string diagnostic = line.substr(static_cast<size_t>(m.position(0)));
    if (size_t hint = diagnostic.find("; did you mean"); hint != std::string::npos) diagnostic.resize(hint);
    out.push_back({builtin, diagnostic, unknown});
  }
  return out;
}

HipCompile compile_hip(const std::string& clang, const std::string& source, const std::string& target,
                       const std::vector<std::string>& extra_args) {
  std::error_code ec;
  if (!fs::is_regular_file(source, ec)) throw input_error(source + ": not a regular file");
  TempFolder dir("archdb-hip");
  const std::string ir_path = (dir.path() / "device.ll").string();
  const std::string err_path = (dir.path() / "clang.err").string();
  ChildIo io;
  io.err = ChildStream::file(err_path);
  int rc = run_child(hip_device_command(clang, target, source, ir_path, extra_args), io);
  std::string diagnostics = fs::exists(err_path) ? read_file(err_path) : "";
  HipCompile result;
  if (rc == 0) {
    result.ir = read_file(ir_path);
    return result;
  }
  result.refused = builtin_refusals(diagnostics);
  if (!result.refused.empty()) return result;
  std::string first;
  for (const std::string& line : split(diagnostics, '\n'))
    if (line.find("error:") != std::string::npos) {
      first = line;
      break;
    }
  if (rc > 128) first = "clang ended by signal " + std::to_string(rc - 128) + (first.empty() ? "" : "; " + first);
  if (first.empty()) first = "clang exited " + std::to_string(rc);
  throw input_error(source + ": " + fs::path(clang).filename().string() + " cannot compile it for " + target + ": " + first);
}

std::vector<std::string> builtins_named(const std::string& source_text) {
  static const std::regex kBuiltin(R"(__builtin_amdgcn_\w+)");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(source_text.begin(), source_text.end(), kBuiltin); it != std::sregex_iterator(); ++it)
    names.insert(it->str());
  return {names.begin(), names.end()};
}

}  // namespace archdb
