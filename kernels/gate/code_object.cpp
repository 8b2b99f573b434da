// kernels/gate/code_object.cpp — reading code-object metadata with LLVM's ELF and msgpack readers, and the
// text of the backend's remarks and of llvm-objdump.
#include "kernels/gate/code_object.h"

#include <regex>
#include <sstream>

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

#include "support/error.h"
#include "support/files.h"

namespace archdb {

namespace {

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
      return std::stoll(f->second);
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
    k.occupancy = number("Occupancy");
  }
}

std::map<std::string, int64_t> count_mnemonics(const std::string& disassembly) {
  // llvm-objdump -d: "0000000000001600 <k>:" opens a function; "	v_mfma_f32_4x4x4f16 a[0:3], ...	// 000000001A00: D3C4..."
  // is an instruction. The code section is padded with s_nop / s_code_end after each function's last
  // instruction: that padding is not code and is not counted.
  std::map<std::string, int64_t> counts;
  std::vector<std::string> function;
  auto flush = [&] {
    while (!function.empty() && (function.back() == "s_nop" || function.back() == "s_code_end")) function.pop_back();
    for (const auto& m : function) ++counts[m];
    function.clear();
  };
  std::istringstream in(disassembly);
  static const std::regex label(R"(^[0-9A-Fa-f]+ <[^>]+>:)");
  static const std::regex insn(R"(^\s+([a-z][a-z0-9_]*)\b.*//\s*[0-9A-Fa-f]+:)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, label)) flush();
    else if (std::regex_search(line, m, insn)) function.push_back(m[1]);
  }
  flush();
  return counts;
}

nlohmann::ordered_json CodeObjectReport::to_json() const {
  nlohmann::ordered_json j;
  j["code_object"] = path;
  j["target"] = target;
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
    if (k.occupancy >= 0) kj["occupancy_waves_per_simd"] = k.occupancy;
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
