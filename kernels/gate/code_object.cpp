// kernels/gate/code_object.cpp — reading code-object metadata with LLVM's ELF and msgpack readers, the
// occupancy its resources give (the processor's limits from LLVM's AMDGPU subtarget), and the text of the
// backend's remarks and of llvm-objdump.
#include "kernels/gate/code_object.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <regex>
#include <sstream>

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

#include "llvm/llvm_compat.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"

namespace archdb {

namespace {

int64_t divide_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t align_to(int64_t a, int64_t b) { return divide_ceil(a, b) * b; }

// Waves per SIMD the workgroup sizes [min_wg, max_wg] allow with `lds` bytes per workgroup: the larger of the
// two bounds LLVM's AMDGPUSubtarget::getOccupancyWithWorkGroupSizes gives (the one the backend's occupancy
// uses): how many workgroups fit a CU by LDS and by barriers, spread evenly over its SIMDs.
int64_t occupancy_with_workgroup_sizes(const OccupancyLimits& l, int64_t wave_size, int64_t lds, int64_t min_wg,
                                       int64_t max_wg) {
  const int64_t max_wgs_lds = l.lds_bytes_per_cu / std::max<int64_t>(lds, 1);
  if (max_wgs_lds == 0) return 1;  // more LDS than a CU has: the backend counts that as occupancy 1
  auto wgs_per_cu_by_barriers = [&](int64_t wg) {
    const int64_t slots = l.max_waves_per_simd * l.simds_per_cu, waves = divide_ceil(wg, wave_size);
    return waves == 1 ? slots : std::min(slots / waves, l.max_barriers);  // a one-wave group needs no barrier
  };
  const int64_t min_waves_per_wg = divide_ceil(min_wg, wave_size), max_waves_per_wg = divide_ceil(max_wg, wave_size);
  const int64_t max_wgs_per_cu = std::min(wgs_per_cu_by_barriers(min_wg), max_wgs_lds);
  const int64_t min_wgs_per_cu = std::min(wgs_per_cu_by_barriers(max_wg), max_wgs_lds);
  int64_t max_waves_per_cu = min_waves_per_wg * max_wgs_per_cu;
  int64_t min_waves_per_cu = max_waves_per_wg * min_wgs_per_cu;
  if (min_waves_per_cu >= max_waves_per_cu) {
    std::swap(min_waves_per_cu, max_waves_per_cu);
  } else {
    // A group size between the bounds may fit more waves for as many groups: the leftover wave slots.
    const int64_t slots = l.max_waves_per_simd * l.simds_per_cu;
    const int64_t leftover_per_wg = (slots - max_wgs_per_cu * min_waves_per_wg) / max_wgs_per_cu;
    if (leftover_per_wg > 0)
      max_waves_per_cu += max_wgs_per_cu * std::min(leftover_per_wg, (max_wg - 1) / wave_size + 1 - min_waves_per_wg);
  }
  return std::clamp<int64_t>(divide_ceil(max_waves_per_cu, l.simds_per_cu), 1, l.max_waves_per_simd);
}

int64_t int_field(llvm::msgpack::MapDocNode& map, const char* key) {
  auto it = map.find(key);
  if (it == map.end()) return 0;
  llvm::msgpack::DocNode& node = it->second;
  if (node.getKind() == llvm::msgpack::Type::Int) return node.getInt();
  if (node.getKind() == llvm::msgpack::Type::UInt) return static_cast<int64_t>(node.getUInt());
  return 0;
}

std::string string_field(llvm::msgpack::MapDocNode& map, const char* key) {
  auto it = map.find(key);
  if (it == map.end() || it->second.getKind() != llvm::msgpack::Type::String) return "";
  return it->second.getString().str();
}

}  // namespace

OccupancyLimits occupancy_limits(const std::string& processor, int64_t wavefront_size) {
  initialize_amdgpu();
  if (!knows_processor(processor)) throw input_error("'" + processor + "' is not a processor this LLVM knows");
  std::unique_ptr<llvm::MCSubtargetInfo> sti(compat::create_subtarget_info(amdgpu_target(), amdgpu_triple(), processor));
  auto has = [&](llvm::StringRef feature) {
    for (const llvm::SubtargetFeatureKV& kv : sti->getAllProcessorFeatures())
      if (feature == compat::feature_name(kv)) return sti->getFeatureBits().test(kv.Value);
    return false;
  };
  const bool gfx90a = has("gfx90a-insts"), gfx10_plus = has("gfx10") || has("gfx11") || has("gfx12");
  const bool gfx10_3 = has("gfx10-3-insts"), vgprs_1_5x = has("allocate1_5xvgprs"), cu_mode = has("cumode");
  const bool wave32 = wavefront_size == 32;
  OccupancyLimits l;
  l.processor = processor;
  // AMDGPUBaseInfo.cpp, IsaInfo: getMaxWavesPerEU, getTotalNumVGPRs, getVGPRAllocGranule, getLocalMemorySize,
  // getEUsPerCU, getMaxWorkGroupsPerCU, getOccupancyWithNumSGPRs.
  l.max_waves_per_simd = gfx90a ? 8 : !gfx10_plus ? 10 : gfx10_3 ? 16 : 20;
  l.total_vgprs = gfx90a ? 512 : !gfx10_plus ? 256 : vgprs_1_5x ? (wave32 ? 1536 : 768) : (wave32 ? 1024 : 512);
  l.unified_agprs = gfx90a;
  l.vgpr_granule = gfx90a ? 8 : vgprs_1_5x ? (wave32 ? 24 : 12) : gfx10_3 ? (wave32 ? 16 : 8) : (wave32 ? 8 : 4);
  l.sgprs_limit = !gfx10_plus;
  l.volcanic_islands_or_later = has("volcanic-islands") || has("gfx9");
  int64_t lds = 0;
  for (auto [feature, bytes] : {std::pair{"addressablelocalmemorysize32768", 32768},
                                std::pair{"addressablelocalmemorysize65536", 65536},
                                std::pair{"addressablelocalmemorysize163840", 163840},
                                std::pair{"addressablelocalmemorysize327680", 327680}})
    if (has(feature)) lds = bytes;
  l.lds_bytes_per_cu = gfx10_plus && !cu_mode ? 2 * lds : lds;  // a WGP's two CUs share it
  l.simds_per_cu = gfx10_plus && cu_mode ? 2 : 4;
  l.max_barriers = gfx10_plus && !cu_mode ? 32 : 16;
  return l;
}

int64_t occupancy_from_metadata(const KernelResources& k, const OccupancyLimits& l) {
  const int64_t wave = k.wavefront_size > 0 ? k.wavefront_size : 64;
  const int64_t max_wg = k.max_flat_workgroup_size > 0 ? k.max_flat_workgroup_size : 1024;
  int64_t occupancy = std::min(l.max_waves_per_simd, occupancy_with_workgroup_sizes(l, wave, k.lds_bytes, 1, max_wg));
  if (l.sgprs_limit) {
    const int64_t sgprs = std::max<int64_t>(k.sgpr_count, 1);
    int64_t by_sgprs;
    if (l.volcanic_islands_or_later) by_sgprs = sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7;
    else by_sgprs = sgprs <= 48 ? 10 : sgprs <= 56 ? 9 : sgprs <= 64 ? 8 : sgprs <= 72 ? 7 : sgprs <= 80 ? 6 : 5;
    occupancy = std::min(occupancy, by_sgprs);
  }
  // .vgpr_count counts the AGPRs too where they share one file (gfx90a+); before that they are a file of
  // their own, as large as the VGPRs'.
  const int64_t vgprs = std::max<int64_t>({k.vgpr_count, l.unified_agprs ? 0 : k.agpr_count, 1});
  const int64_t by_vgprs = vgprs < l.vgpr_granule ? l.max_waves_per_simd
                                                  : std::min(std::max<int64_t>(l.total_vgprs / align_to(vgprs, l.vgpr_granule), 1),
                                                             l.max_waves_per_simd);
  return std::min(occupancy, by_vgprs);
}

CodeObjectReport read_code_object(const std::string& path) {
  std::string bytes = read_file(path);
  auto buffer = llvm::MemoryBuffer::getMemBuffer(bytes, path, false);
  auto object = llvm::object::ObjectFile::createELFObjectFile(buffer->getMemBufferRef());
  if (!object) {
    llvm::consumeError(object.takeError());
    throw input_error(path + ": not an ELF code object");
  }
  auto* elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(object->get());
  if (!elf || elf->getELFFile().getHeader().e_machine != llvm::ELF::EM_AMDGPU) throw input_error(path + ": not an AMDGPU code object");

  CodeObjectReport report;
  report.path = path;
  llvm::msgpack::Document document;
  bool found = false;
  const auto& file = elf->getELFFile();
  auto sections = file.sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    throw input_error(path + ": unreadable ELF sections");
  }
  for (const auto& section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    for (const auto& note : file.notes(section, err)) {
      if (note.getType() != llvm::ELF::NT_AMDGPU_METADATA || note.getName() != "AMDGPU") continue;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(section.sh_addralign);
      llvm::StringRef blob(reinterpret_cast<const char*>(desc.data()), desc.size());
      if (!document.readFromBlob(blob, false)) throw input_error(path + ": unreadable AMDGPU metadata note");
      found = true;
    }
    if (err) {
      llvm::consumeError(std::move(err));
      throw input_error(path + ": unreadable ELF note");
    }
  }
  if (!found || document.getRoot().getKind() != llvm::msgpack::Type::Map)
    throw input_error(path + ": no AMDGPU metadata note (code object v3 or newer expected)");

  llvm::msgpack::MapDocNode& root = document.getRoot().getMap();
  report.target = string_field(root, "amdhsa.target");
  auto kernels = root.find("amdhsa.kernels");
  if (kernels != root.end() && kernels->second.getKind() == llvm::msgpack::Type::Array) {
    for (llvm::msgpack::DocNode& node : kernels->second.getArray()) {
      if (node.getKind() != llvm::msgpack::Type::Map) continue;
      llvm::msgpack::MapDocNode& k = node.getMap();
      KernelResources r;
      r.name = string_field(k, ".name");
      r.vgpr_count = int_field(k, ".vgpr_count");
      r.agpr_count = int_field(k, ".agpr_count");
      r.sgpr_count = int_field(k, ".sgpr_count");
      r.vgpr_spill_count = int_field(k, ".vgpr_spill_count");
      r.sgpr_spill_count = int_field(k, ".sgpr_spill_count");
      r.lds_bytes = int_field(k, ".group_segment_fixed_size");
      r.scratch_bytes = int_field(k, ".private_segment_fixed_size");
      r.wavefront_size = int_field(k, ".wavefront_size");
      r.max_flat_workgroup_size = int_field(k, ".max_flat_workgroup_size");
      report.kernels.push_back(std::move(r));
    }
  }
  if (report.kernels.empty()) throw input_error(path + ": the metadata lists no kernels");
  // "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-" -> "gfx90a"
  size_t dashes = report.target.rfind("--");
  report.processor = dashes == std::string::npos ? "" : report.target.substr(dashes + 2);
  report.processor = report.processor.substr(0, report.processor.find(':'));
  if (report.processor.empty()) throw input_error(path + ": the metadata's amdhsa.target names no processor");
  for (KernelResources& k : report.kernels) {
    try {
      k.occupancy = occupancy_from_metadata(k, occupancy_limits(report.processor, k.wavefront_size));
    } catch (const Error& e) {
      throw input_error(path + ": " + e.what());
    }
  }
  return report;
}

void apply_resource_remarks(CodeObjectReport& report, const std::string& remarks_text) {
  // remark: Function Name: k / remark:     VGPRs: 10 / ... / remark:     Occupancy [waves/SIMD]: 8
  static const std::regex line_re(R"(remark:\s+([A-Za-z][A-Za-z ]*?)(?: \[[^\]]*\])?: (\S+) \[-Rpass-analysis=kernel-resource-usage\])");
  std::map<std::string, std::map<std::string, std::string>> by_function;
  std::string current;
  std::istringstream in(remarks_text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, line_re)) continue;
    if (m[1] == "Function Name") current = m[2];
    else if (!current.empty()) by_function[current][m[1]] = m[2];
  }
  for (KernelResources& k : report.kernels) {
    auto it = by_function.find(k.name);
    if (it == by_function.end())
      throw input_error(report.path + ": no kernel-resource-usage remark for kernel '" + k.name + "'");
    auto& fields = it->second;
    auto number = [&](const char* field) -> int64_t {
      auto f = fields.find(field);
      if (f == fields.end()) throw input_error(report.path + ": the remark for '" + k.name + "' has no " + field);
      int64_t value = 0;
      const std::string& text = f->second;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || ptr != text.data() + text.size())
        throw input_error(report.path + ": the remark for '" + k.name + "' has " + field + " '" + text +
                          "', not a number");
      return value;
    };
    auto agree = [&](const char* field, int64_t metadata) {
      if (number(field) != metadata)
        throw input_error(report.path + ": kernel '" + k.name + "': the remark's " + field + " " +
                          std::to_string(number(field)) + " is not the metadata's " + std::to_string(metadata));
    };
    if (fields.count("AGPRs")) agree("AGPRs", k.agpr_count);  // targets without AGPRs (RDNA) do not say
    agree("TotalSGPRs", k.sgpr_count);
    agree("ScratchSize", k.scratch_bytes);
    agree("LDS Size", k.lds_bytes);
    k.remark_occupancy = number("Occupancy");
    if (k.remark_occupancy != k.occupancy)
      throw input_error(report.path + ": kernel '" + k.name + "': the remark's occupancy " +
                        std::to_string(k.remark_occupancy) + " is not the " + std::to_string(k.occupancy) +
                        " waves per SIMD its metadata gives on " + report.processor);
  }
}

std::map<std::string, std::map<std::string, int64_t>> count_mnemonics_by_function(const std::string& disassembly) {
  // llvm-objdump -d: "0000000000001600 <k>:" opens a function; "	v_mfma_f32_4x4x4f16 a[0:3], ...	// 000000001A00: D3C4..."
  // is an instruction. The code section is padded with s_nop / s_code_end after each function's last
  // instruction: that padding is not code and is not counted.
  std::map<std::string, std::map<std::string, int64_t>> counts;
  std::string name;
  std::vector<std::string> function;
  auto flush = [&] {
    while (!function.empty() && (function.back() == "s_nop" || function.back() == "s_code_end")) function.pop_back();
    if (!name.empty() || !function.empty()) {
      auto& c = counts[name];
      for (const auto& m : function) ++c[m];
    }
    function.clear();
  };
  std::istringstream in(disassembly);
  static const std::regex label(R"(^[0-9A-Fa-f]+ <([^>]+)>:)");
  static const std::regex insn(R"(^\s+([a-z][a-z0-9_]*)\b.*//\s*[0-9A-Fa-f]+:)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, label)) {
      flush();
      name = m[1];
    } else if (std::regex_search(line, m, insn)) {
      function.push_back(m[1]);
    }
  }
  flush();
  return counts;
}

std::map<std::string, int64_t> count_mnemonics(const std::string& disassembly) {
  std::map<std::string, int64_t> total;
  for (const auto& [function, counts] : count_mnemonics_by_function(disassembly))
    for (const auto& [m, n] : counts) total[m] += n;
  return total;
}

void apply_disassembly(CodeObjectReport& report, const std::string& disassembly) {
  auto by_function = count_mnemonics_by_function(disassembly);
  report.mnemonics.clear();
  for (const auto& [function, counts] : by_function)
    for (const auto& [m, n] : counts) report.mnemonics[m] += n;
  for (KernelResources& k : report.kernels)
    if (auto it = by_function.find(k.name); it != by_function.end()) k.mnemonics = it->second;
}

nlohmann::ordered_json CodeObjectReport::to_json() const {
  nlohmann::ordered_json j;
  j["code_object"] = path;
  j["target"] = target;
  j["processor"] = processor;
  j["kernels"] = nlohmann::ordered_json::array();
  for (const KernelResources& k : kernels) {
    nlohmann::ordered_json kj;
    kj["name"] = k.name;
    kj["vgpr"] = k.vgpr_count;
    kj["agpr"] = k.agpr_count;
    kj["sgpr"] = k.sgpr_count;
    kj["vgpr_spill"] = k.vgpr_spill_count;
    kj["sgpr_spill"] = k.sgpr_spill_count;
    kj["lds_bytes"] = k.lds_bytes;
    kj["scratch_bytes"] = k.scratch_bytes;
    kj["wavefront_size"] = k.wavefront_size;
    kj["max_flat_workgroup_size"] = k.max_flat_workgroup_size;
    kj["occupancy_waves_per_simd"] = k.occupancy;
    if (k.remark_occupancy >= 0) kj["remark_occupancy_waves_per_simd"] = k.remark_occupancy;
    if (!k.mnemonics.empty()) {
      nlohmann::ordered_json mj = nlohmann::ordered_json::object();
      for (const auto& [m, n] : k.mnemonics) mj[m] = n;
      kj["mnemonics"] = mj;
    }
    j["kernels"].push_back(std::move(kj));
  }
  if (!mnemonics.empty()) {
    nlohmann::ordered_json mj = nlohmann::ordered_json::object();
    for (const auto& [m, n] : mnemonics) mj[m] = n;
    j["mnemonics"] = mj;
  }
  return j;
}

}  // namespace archdb
