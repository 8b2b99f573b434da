// kernels/loader/gate_manifest.cpp — gate manifest reading and processor matching (see gate_manifest.h).
#include "kernels/loader/gate_manifest.h"

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/files.h"
#include "support/json_depth.h"

namespace archdb {

GateManifest GateManifest::load(const std::filesystem::path& path) {
  nlohmann::json j;
  const std::string text = read_file(path);
  check_json_depth(text, path.string());
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw input_error(path.string() + ": not JSON: " + e.what());
  }
  if (!j.is_object() || j.value("schema", "") != "archdb.gate-manifest/v1" || !j.contains("kernels") ||
      !j["kernels"].is_object())
    throw input_error(path.string() + ": not an archdb gate manifest (schema archdb.gate-manifest/v1)");
  GateManifest m;
  m.dir = path.parent_path();
  m.flavor = j.value("flavor", "");
  try {
    for (const auto& [name, k] : j["kernels"].items()) {
      Kernel kernel;
      kernel.targets = k.at("targets").get<std::vector<std::string>>();
      kernel.code_objects = k.at("code_objects").get<std::map<std::string, std::string>>();
      for (const auto& entry : k.at("not_built"))
        kernel.not_built[entry.at("target").get<std::string>()] = entry.at("check").at("message").get<std::string>();
      m.kernels.emplace(name, std::move(kernel));
    }
  } catch (const nlohmann::json::exception& e) {
    throw input_error(path.string() + ": malformed gate manifest: " + e.what());
  }
  return m;
}

std::string processor_of(const std::string& gcn_arch_name) {
  return gcn_arch_name.substr(0, gcn_arch_name.find(':'));
}

std::optional<std::string> generic_processor_for(const std::string& processor) {
  // LLVM's generic processors (AMDGPUUsage, "Generic Processor Versioning") and the processors they cover.
  static const std::map<std::string, std::vector<std::string>> families = {
      {"gfx9-generic", {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}},
      {"gfx9-4-generic", {"gfx940", "gfx941", "gfx942", "gfx950"}},
      {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
      {"gfx10-3-generic", {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"}},
      {"gfx11-generic", {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"}},
      {"gfx12-generic", {"gfx1200", "gfx1201"}},
  };
  for (const auto& [generic, members] : families)
    for (const auto& m : members)
      if (m == processor) return generic;
  return std::nullopt;
}

Selection select_code_object(const GateManifest& manifest, const std::string& kernel, const std::string& gcn_arch_name) {
  Selection s;
  auto k = manifest.kernels.find(kernel);
  if (k == manifest.kernels.end()) {
    s.message = "kernel '" + kernel + "' is not in the gate manifest";
    return s;
  }
  const std::string processor = processor_of(gcn_arch_name);
  std::vector<std::string> candidates = {processor};
  if (auto generic = generic_processor_for(processor)) candidates.push_back(*generic);
  for (const std::string& c : candidates) {
    auto object = k->second.code_objects.find(c);
    if (object != k->second.code_objects.end()) {
      s.found = true;
      s.code_object = manifest.dir / object->second;
      s.built_for = c;
      return s;
    }
  }
  for (const std::string& c : candidates) {
    auto refusal = k->second.not_built.find(c);
    if (refusal != k->second.not_built.end()) {
      s.message = refusal->second;
      return s;
    }
  }
  std::string built;
  for (const auto& t : k->second.targets) built += (built.empty() ? "" : ", ") + t;
  s.message = kernel + " was not built for " + processor + " (built for: " + (built.empty() ? "none" : built) + ")";
  return s;
}

}  // namespace archdb
