// kernels/gate/code_object.h — what a built AMDGPU code object says about its kernels: the resources its
// metadata records (registers, LDS, scratch, wavefront and workgroup size), the occupancy those give on the
// code object's processor (computed here; the backend's kernel-resource-usage remark, when given, must agree),
// and which instructions its disassembly holds, per function.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace archdb {

struct KernelResources {
  std::string name;
  int64_t vgpr_count = 0, agpr_count = 0, sgpr_count = 0;
  int64_t vgpr_spill_count = 0, sgpr_spill_count = 0;
  int64_t lds_bytes = 0;          // .group_segment_fixed_size
  int64_t scratch_bytes = 0;      // .private_segment_fixed_size, per lane
  int64_t wavefront_size = 0;
  int64_t max_flat_workgroup_size = 0;
  int64_t occupancy = 0;          // waves per SIMD, from the metadata (occupancy_from_metadata)
  int64_t remark_occupancy = -1;  // the backend's remark, when remarks were given; -1 otherwise
  std::map<std::string, int64_t> mnemonics;  // this function's instructions, from the disassembly
};

// The limits of a processor's register files and LDS that occupancy depends on, from LLVM's AMDGPU target:
// the processor's subtarget features (MCSubtargetInfo) decide which of the rules of LLVM's
// AMDGPUBaseInfo.cpp (IsaInfo) and AMDGPUSubtarget.cpp apply — the rules the backend's own occupancy follows.
struct OccupancyLimits {
  std::string processor;
  int64_t max_waves_per_simd = 0;  // 8 (gfx90a+), 10 (gfx9 and older), 16 (gfx10.3+), 20 (gfx10.1)
  int64_t total_vgprs = 0;         // per SIMD lane, for the code object's wavefront size (AGPRs included on gfx90a+)
  int64_t vgpr_granule = 0;        // allocation granule
  bool unified_agprs = false;      // gfx90a+: .vgpr_count counts the AGPRs, in one file with the VGPRs
  bool sgprs_limit = false;        // before gfx10 the SGPR file limits waves too
  bool volcanic_islands_or_later = false;
  int64_t lds_bytes_per_cu = 0;    // what the waves of one workgroup share (a WGP on gfx10+ outside CU mode)
  int64_t simds_per_cu = 4;
  int64_t max_barriers = 16;       // workgroups of more than one wave each need a barrier
};
// Throws input_error for a processor the linked LLVM does not know.
OccupancyLimits occupancy_limits(const std::string& processor, int64_t wavefront_size);
// Waves per SIMD a kernel reaches with its metadata's VGPR/AGPR, SGPR, LDS, wavefront and workgroup sizes.
int64_t occupancy_from_metadata(const KernelResources& kernel, const OccupancyLimits& limits);

struct CodeObjectReport {
  std::string path;
  std::string target;  // amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx90a"
  std::string processor;  // "gfx90a"
  std::vector<KernelResources> kernels;
  std::map<std::string, int64_t> mnemonics;  // instruction -> count over all functions, when a disassembly is given

  nlohmann::ordered_json to_json() const;
};

// Reads the ELF notes (NT_AMDGPU_METADATA, msgpack) and computes each kernel's occupancy. Throws input_error
// naming the file when it is not an AMDGPU code object.
CodeObjectReport read_code_object(const std::string& path);

// Cross-checks against `clang -Rpass-analysis=kernel-resource-usage` output: the remark's registers, LDS,
// scratch and occupancy must be the metadata's and the computed occupancy (a mismatch means the two describe
// different builds, or the occupancy rules here are not the backend's). Throws input_error naming the kernel
// and the field, also for a remark whose number does not read.
void apply_resource_remarks(CodeObjectReport& report, const std::string& remarks_text);

// Counts the mnemonics of an `llvm-objdump -d` listing per function symbol ("<name>:" labels; the s_nop /
// s_code_end padding after each function excluded).
std::map<std::string, std::map<std::string, int64_t>> count_mnemonics_by_function(const std::string& disassembly);
// The same summed over the functions.
std::map<std::string, int64_t> count_mnemonics(const std::string& disassembly);
// Fills the report's and each kernel's mnemonics from a disassembly.
void apply_disassembly(CodeObjectReport& report, const std::string& disassembly);

}  // namespace archdb
