// llvm/toolchain.h — the LLVM this build links: its identity (provenance, and the flavor a regen may write),
// AMDGPU target set-up in the manner of llc, and which processor names it knows.
#pragma once

#include <string>
#include <vector>

namespace llvm {
class Module;
class Target;
class Triple;
}  // namespace llvm

namespace archdb {

struct ToolchainInfo {
  std::string llvm_version;  // "22.1.8"
  int llvm_major = 0;
  std::string identity;      // "Debian LLVM version 22.1.8; Optimized build"
  std::string package;       // "1:22.1.8-1~deb12u1" where a dpkg database knows libllvmN
  bool prerelease = false;   // a main-branch snapshot (X.0.0): LLVM releases start at X.1.0

  std::string flavor() const { return "llvm" + std::to_string(llvm_major); }
};

// Every probe module is compiled for this code object version: the generic processors (gfx11-generic...)
// exist only from version 6, which is LLVM 22's default and which LLVM 19 has but does not default to.
constexpr int kCodeObjectVersion = 6;
void set_probe_module_flags(llvm::Module& module);

// Initialises the AMDGPU target (info, target, MC, asm printer and parser) once.
void initialize_amdgpu();
const ToolchainInfo& linked_toolchain();
const llvm::Target& amdgpu_target();
const llvm::Triple& amdgpu_triple();

// Whether this LLVM knows the processor. LLVM itself only warns on an unknown -mcpu and carries on with a
// generic CPU, so a probe that skipped this check would record answers for a target LLVM never saw.
bool knows_processor(const std::string& cpu);

// The name this LLVM's processor table gives `name` (llvm::AMDGPU::parseArchAMDGCN): an alias such as "tahiti"
// or "fiji" becomes its gfx name ("gfx600", "gfx803"), the name every column and cell uses; a canonical name,
// or one this LLVM does not know, comes back as given (so that its error names what the user wrote).
std::string canonical_processor(const std::string& name);

// What an IR function's "target-features" (LLVM's "+a,-b" form) changes on processor `cpu`: the features it
// sets or clears beyond the processor's own, "+name"/"-name" sorted, as LLVM's subtarget tables compute them
// (clang lists every feature the processor has; only a real difference, e.g. +wavefrontsize64 on gfx1100,
// is returned). Empty for a processor this LLVM does not know.
std::vector<std::string> features_beyond_default(const std::string& cpu, const std::string& features);

// A target as a user writes it, as cells name it: the processor through canonical_processor (an alias is its
// gfx name), features in LLVM's -mattr form ("+wavefrontsize64,-xnack") or a target ID's ("xnack+:sramecc-"),
// reduced to what they change on the processor (features_beyond_default: "gfx90a:+wavefrontsize64" is
// "gfx90a"). Throws usage_error for a feature this LLVM's AMDGPU target does not have; a processor it does
// not know comes back as given (so that the error about it names what the user wrote).
std::string canonical_target(const std::string& text);

}  // namespace archdb
