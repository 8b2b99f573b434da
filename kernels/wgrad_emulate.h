// kernels/wgrad_emulate.h — runs a kernel variant's algorithm on the CPU: every work-group of its launch plan,
// all 64 lanes of each MFMA wave, through the same program and mapping the device code is compiled from
// (wgrad_program.h, wgrad_mapping.h), with LDS as host memory and the MFMA and ds_read_b64_tr_b16 as the models
// of mfma_model.h. The portable variant runs its work-items' own code (portable_output) one after another.
// Host code only.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/wgrad_problem.h"

namespace archdb::kernels {

// Deliberate defects, for the tests that show the numerics tests can fail. kNone in every real use.
enum class EmulationFault {
  kNone,
  kSwapBSlices,      // B fragments reach the MFMA with slices k0 and k1 exchanged
  kTr16NoTranspose,  // the transposing read returns what each lane addressed, untransposed
  kSkipReduce,       // with target_blocks > 1, dW is slice 0's partial only
};

struct WgradEmulation {
  WgradPlan plan;
  std::vector<float> dw;  // [C][cpg][R][S]
};

// Plans the launch (validating problem and variant: usage_error), checks the buffer sizes, runs it.
WgradEmulation emulate_wgrad(const WgradProblem& p, const WgradVariant& v, const std::vector<uint16_t>& x,
                             const std::vector<uint16_t>& dy, EmulationFault fault = EmulationFault::kNone);

}  // namespace archdb::kernels
