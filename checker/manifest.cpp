// checker/manifest.cpp — strict reading of kernel manifests: every field present with its type, no others.
#include "checker/manifest.h"

#include <set>

#include <nlohmann/json.hpp>

#include "schema/catalog.h"
#include "support/error.h"
#include "support/files.h"
#include "support/json_depth.h"

namespace archdb {

namespace {

std::vector<std::string> string_list(const nlohmann::json& j, const char* field, const std::string& path) {
  if (!j.contains(field) || !j[field].is_array()) throw input_error(path + ": manifest field '" + field + "' must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : j[field]) {
    if (!item.is_string() || item.get<std::string>().empty())
      throw input_error(path + ": manifest field '" + field + "' must be a list of non-empty strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

KernelManifest parse_manifest(const std::string& text, const std::string& path) {
  check_json_depth(text, path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number past double's (1e400)
    throw input_error(path + ": not JSON: " + e.what());
  }
  if (!j.is_object()) throw input_error(path + ": a kernel manifest must be a JSON object");
  if (!j.contains("schema") || j["schema"] != KernelManifest::kSchema)  // value("schema", "") throws on a non-string
    throw input_error(path + ": manifest 'schema' must be \"" + std::string(KernelManifest::kSchema) + "\"");
  for (const auto& [field, value] : j.items())
    if (field != "schema" && field != "kernel" && field != "source" && field != "defines" && field != "keys")
      throw input_error(path + ": unknown manifest field '" + field + "'");
  KernelManifest m;
  m.path = path;
  if (!j.contains("kernel") || !j["kernel"].is_string() || j["kernel"].get<std::string>().empty())
    throw input_error(path + ": manifest field 'kernel' must be a non-empty string");
  m.kernel = j["kernel"].get<std::string>();
  if (!j.contains("source") || !j["source"].is_string() || j["source"].get<std::string>().empty())
    throw input_error(path + ": manifest field 'source' must be a non-empty string");
  m.source = j["source"].get<std::string>();
  m.defines = j.contains("defines") ? string_list(j, "defines", path) : std::vector<std::string>{};
  m.keys = string_list(j, "keys", path);
  if (m.keys.empty()) throw input_error(path + ": manifest field 'keys' is empty");
  std::set<std::string> seen;
  for (const std::string& key : m.keys) {
    if (!is_valid_key(key)) throw input_error(path + ": '" + key + "' is not a valid key");
    if (!seen.insert(key).second) throw input_error(path + ": key '" + key + "' listed twice");
  }
  return m;
}

KernelManifest load_manifest(const std::string& path) {
  return parse_manifest(read_file(path), path);
}

}  // namespace archdb
