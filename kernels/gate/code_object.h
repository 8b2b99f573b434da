// kernels/gate/code_object.h — what a built AMDGPU code object says about its kernels: the resources its
// metadata records (registers, LDS, scratch), the occupancy the backend computed from them (its
// kernel-resource-usage remarks, cross-checked against the metadata), and which instructions its
// disassembly holds.
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
  int64_t occupancy = -1;         // waves per SIMD, from the backend's remark; -1 when no remark was given
};

struct CodeObjectReport {
  std::string path;
  std::string target;  // amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx90a"
  std::vector<KernelResources> kernels;
  std::map<std::string, int64_t> mnemonics;  // instruction -> count, from the disassembly, when given

  nlohmann::ordered_json to_json() const;
};

// Reads the ELF notes (NT_AMDGPU_METADATA, msgpack). Throws input_error naming the file when it is not an
// AMDGPU code object.
CodeObjectReport read_code_object(const std::string& path);

// Fills occupancy from `clang -Rpass-analysis=kernel-resource-usage` output, after checking that the remark's
// registers, LDS and scratch are the metadata's (a mismatch means the two describe different builds).
void apply_resource_remarks(CodeObjectReport& report, const std::string& remarks_text);

// Counts the mnemonics of an `llvm-objdump -d` listing (the s_nop / s_code_end padding after each function
// excluded).
std::map<std::string, int64_t> count_mnemonics(const std::string& disassembly);

}  // namespace archdb
