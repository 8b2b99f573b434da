// llvm/toolchain.cpp — identity and set-up of the linked LLVM (see toolchain.h).
#include "llvm/toolchain.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>

#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include "llvm/llvm_compat.h"
#include "support/error.h"

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTarget();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmPrinter();
void LLVMInitializeAMDGPUAsmParser();
}

namespace archdb {
namespace {

// LLVM prints its vendor and build kind only through the --version printer, to stdout.
std::string version_message() {
  llvm::outs().flush();
  int saved = ::dup(1);
  int mem = ::memfd_create("archdb-version", MFD_CLOEXEC);
  if (saved < 0 || mem < 0) return "";
  ::dup2(mem, 1);
  llvm::cl::PrintVersionMessage();
  llvm::outs().flush();
  ::dup2(saved, 1);
  ::close(saved);
  std::string text;
  char buf[4096];
  ssize_t n;
  ::lseek(mem, 0, SEEK_SET);
  while ((n = ::read(mem, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(mem);
  return text;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n.") - b + 1);
}

std::string dpkg_version(const std::string& package) {
  std::ifstream status("/var/lib/dpkg/status");
  std::string line;
  bool in_package = false;
  while (std::getline(status, line)) {
    if (line.rfind("Package: ", 0) == 0) in_package = line.substr(9) == package;
    else if (in_package && line.rfind("Version: ", 0) == 0) return line.substr(9);
  }
  return "";
}

ToolchainInfo detect() {
  ToolchainInfo t;
  t.llvm_version = LLVM_VERSION_STRING;
  t.llvm_major = LLVM_VERSION_MAJOR;
  t.prerelease = LLVM_VERSION_MINOR == 0 || t.llvm_version.find("git") != std::string::npos;
  // The first two lines: "<vendor> LLVM version X" and the build kind. The rest names the host CPU and the
  // default target, which vary by machine and do not identify the toolchain.
  std::istringstream lines(version_message());
  std::string line, identity;
  for (int i = 0; i < 2 && std::getline(lines, line); ++i) {
    std::string part = trim(line);
    if (part.empty()) {
      --i;
      continue;
    }
    identity += (identity.empty() ? "" : "; ") + part;
  }
  t.identity = identity.empty() ? "LLVM version " + t.llvm_version : identity;
  t.package = dpkg_version("libllvm" + std::to_string(t.llvm_major));
  return t;
}

}  // namespace

void initialize_amdgpu() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
  });
}

const ToolchainInfo& linked_toolchain() {
  static const ToolchainInfo info = detect();
  return info;
}

const llvm::Triple& amdgpu_triple() {
  static const llvm::Triple triple("amdgcn-amd-amdhsa");
  return triple;
}

const llvm::Target& amdgpu_target() {
  initialize_amdgpu();
  static const llvm::Target* target = [] {
    std::string error;
    const llvm::Target* t = compat::lookup_target(amdgpu_triple(), error);
    if (!t) throw internal_error("this LLVM has no AMDGPU target: " + error);
    return t;
  }();
  return *target;
}

void set_probe_module_flags(llvm::Module& module) {
  module.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", kCodeObjectVersion * 100);
}

bool knows_processor(const std::string& cpu) {
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      compat::create_subtarget_info(amdgpu_target(), amdgpu_triple(), "generic"));
  return sti && sti->isCPUStringValid(cpu);
}

std::vector<std::string> features_beyond_default(const std::string& cpu, const std::string& features) {
  if (!knows_processor(cpu)) return {};
  std::unique_ptr<llvm::MCSubtargetInfo> plain(compat::create_subtarget_info(amdgpu_target(), amdgpu_triple(), cpu)),
      asked(compat::create_subtarget_info(amdgpu_target(), amdgpu_triple(), cpu, features));
  if (!plain || !asked) return {};
  std::vector<std::string> out;
  for (const llvm::SubtargetFeatureKV& feature : asked->getAllProcessorFeatures()) {
    const bool by_default = plain->getFeatureBits().test(feature.Value), set = asked->getFeatureBits().test(feature.Value);
    if (by_default != set) out.push_back(std::string(set ? "+" : "-") + compat::feature_name(feature).str());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string canonical_target(const std::string& text) {
  size_t colon = text.find(':');
  const std::string processor = canonical_processor(text.substr(0, colon));
  if (colon == std::string::npos) return processor;
  if (!knows_processor(processor)) return text;
  std::unique_ptr<llvm::MCSubtargetInfo> info(compat::create_subtarget_info(amdgpu_target(), amdgpu_triple(), processor));
  std::vector<std::string> features;
  std::string token;
  const std::string rest = text.substr(colon + 1) + ",";
  for (char c : rest) {
    if (c != ',' && c != ':') {
      token += c;
      continue;
    }
    if (token.empty()) throw usage_error("target '" + text + "': an empty feature");
    std::string feature;
    if (token[0] == '+' || token[0] == '-') feature = token;
    else if (token.back() == '+' || token.back() == '-') feature = token.back() + token.substr(0, token.size() - 1);
    else throw usage_error("target '" + text + "': feature '" + token + "' is neither +name/-name nor name+/name-");
    const std::string name = feature.substr(1);
    bool known = false;
    for (const llvm::SubtargetFeatureKV& kv : info->getAllProcessorFeatures()) known = known || name == compat::feature_name(kv);
    if (!known) throw usage_error("target '" + text + "': '" + name + "' is not a feature of LLVM's AMDGPU target");
    features.push_back(feature);
    token.clear();
  }
  std::string list;
  for (const auto& f : features) list += (list.empty() ? "" : ",") + f;
  std::vector<std::string> changed = features_beyond_default(processor, list);
  std::string name = processor;
  for (size_t i = 0; i < changed.size(); ++i) name += (i ? "," : ":") + changed[i];
  return name;
}

std::string canonical_processor(const std::string& name) {
  const llvm::AMDGPU::GPUKind kind = llvm::AMDGPU::parseArchAMDGCN(name);
  if (kind == llvm::AMDGPU::GK_NONE) return name;
  return llvm::AMDGPU::getArchNameAMDGCN(kind).str();
}

}  // namespace archdb
