// kernels/wgrad_problem.h — a weight-gradient problem, its validation, the bundled kernel variants, and the
// launch plan of a variant for a problem (which kernels, grids, work-group sizes, LDS and workspace). Nothing
// is launched or emulated that did not pass validate_problem and plan_launch. Host code, no LLVM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/wgrad_mapping.h"

namespace archdb::kernels {

enum class WgradKind { kDepthwise, kGrouped };
enum class WgradPath { kMfma, kMfmaTr16, kPortable };

std::string kind_name(WgradKind k);   // "depthwise", "grouped"
std::string dtype_name(WgradDType d);  // "f16", "bf16"
std::string path_name(WgradPath p);   // "mfma", "mfma_tr16", "portable"

// Sizes are 64-bit so that what a user typed (0, -1, 2^40) reaches validation intact.
struct WgradProblem {
  WgradKind kind = WgradKind::kDepthwise;
  WgradDType dtype = kDTypeF16;
  int64_t n = 1, c = 16, h = 16, w = 16;
  int64_t filter = 3;  // R = S, odd, 3..11
  int64_t stride = 1;  // 1 or 2
  int64_t pad = 1;     // 0 <= pad < filter
  int64_t cpg = 1;     // channels per group: 1 for depthwise, 4 or 8 for grouped
  int64_t target_blocks = 1;  // z split of the reduction, >= 1

  int64_t ho() const { return (h + 2 * pad - filter) / stride + 1; }
  int64_t wo() const { return (w + 2 * pad - filter) / stride + 1; }
  int64_t x_elems() const { return n * c * h * w; }
  int64_t dy_elems() const { return n * c * ho() * wo(); }
  int64_t dw_elems() const { return c * cpg * filter * filter; }
  int64_t terms() const { return n * ho() * wo(); }  // products summed into each weight (padding included)
  std::string describe() const;  // "depthwise f16 N=2 C=24 H=9 W=13 filter=5 stride=2 pad=1 target_blocks=3"
};

constexpr int64_t kMaxTargetBlocks = 65535;  // the grid's z extent

// Throws usage_error with one line naming the parameter and its value, e.g.
// "target_blocks must be >= 1 (got 0)".
void validate_problem(const WgradProblem& p);

// The arguments the kernels get (pointers null): only for a validated problem.
WgradArgs make_args(const WgradProblem& p);

struct WgradVariant {
  std::string name;    // wgrad_dw_mfma_f16, ... (the manifest's "kernel")
  WgradKind kind;
  WgradDType dtype;
  WgradPath path;
  std::string source;  // relative to kernels/
  std::vector<std::string> defines;
  std::vector<std::string> targets;  // where it is meant to be built (what it was compile-tested for)
  std::string manifest() const { return "manifests/" + name + ".json"; }
};

// The bundled variants, in a fixed order: depthwise then grouped; f16 then bf16; mfma, mfma_tr16, portable.
const std::vector<WgradVariant>& wgrad_variants();
const WgradVariant* find_variant(const std::string& name);
// The variant a problem gets by default: the MFMA one (no tr16) of its kind and dtype.
const WgradVariant& default_variant(WgradKind kind, WgradDType dtype);

struct Dim3 {
  int x = 1, y = 1, z = 1;
};
enum class WgradKernel { kDw1, kDw2, kDw3, kGroupedCpg4, kGroupedCpg8, kPortableDw, kPortableGrouped, kReduceZ };
struct WgradLaunch {
  WgradKernel kernel;
  std::string symbol;  // the extern "C" name in the variant's code object
  Dim3 grid;
  int block = 64;      // work-items per work-group
  int lds_bytes = 0;   // static LDS of the kernel
  int tiles = 0;       // MT = NT of an MFMA kernel
};
struct WgradPlan {
  WgradArgs args;                     // pointers null; out = workspace when workspace_floats > 0
  std::vector<WgradLaunch> launches;  // in order; a second launch (wgrad_reduce_z) when target_blocks > 1
  int64_t workspace_floats = 0;
};

// Validates the problem and that the variant serves it (kind, dtype), then plans. Throws usage_error.
WgradPlan plan_launch(const WgradProblem& p, const WgradVariant& v);

}  // namespace archdb::kernels
