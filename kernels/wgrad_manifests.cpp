// kernels/wgrad_manifests.cpp — see wgrad_manifests.h.
#include "kernels/wgrad_manifests.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/files.h"

namespace archdb::kernels {
namespace {

std::string text_field(const nlohmann::json& j, const char* field, const std::string& file) {
  if (!j.contains(field) || !j[field].is_string() || j[field].get<std::string>().empty())
    throw input_error(file + ": manifest field '" + field + "' must be a non-empty string");
  return j[field].get<std::string>();
}

std::vector<std::string> list_field(const nlohmann::json& j, const char* field, const std::string& file) {
  if (!j.contains(field) || !j[field].is_array())
    throw input_error(file + ": manifest field '" + field + "' must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : j[field]) {
    if (!item.is_string() || item.get<std::string>().empty())
      throw input_error(file + ": manifest field '" + field + "' must be a list of non-empty strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

WgradManifest read_wgrad_manifest(const std::filesystem::path& file) {
  const std::string name = file.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::parse_error& e) {
    throw input_error(name + ": not JSON: " + e.what());
  }
  if (!j.is_object() || j.value("schema", "") != "archdb.kernel-manifest/v1")
    throw input_error(name + ": not a kernel manifest (schema must be \"archdb.kernel-manifest/v1\")");
  WgradManifest m;
  m.file = name;
  m.kernel = text_field(j, "kernel", name);
  m.source = text_field(j, "source", name);
  m.defines = list_field(j, "defines", name);
  m.keys = list_field(j, "keys", name);
  return m;
}

std::vector<WgradManifest> read_wgrad_manifests(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") files.push_back(it->path());
  if (ec) throw input_error(dir.string() + ": cannot read the manifest folder: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<WgradManifest> out;
  for (const auto& f : files) out.push_back(read_wgrad_manifest(f));
  return out;
}

}  // namespace archdb::kernels
