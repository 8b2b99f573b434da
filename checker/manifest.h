// checker/manifest.h — a kernel manifest (kernels/manifests/*.json): which catalog keys one kernel variant
// needs. The gate checks the keys before compiling and the compiled IR against the keys after.
#pragma once

#include <string>
#include <vector>

namespace archdb {

struct KernelManifest {
  static constexpr const char* kSchema = "archdb.kernel-manifest/v1";
  std::string path;  // for messages
  std::string kernel;
  std::string source;
  std::vector<std::string> defines;
  std::vector<std::string> keys;
};

// Throws input_error naming the file and the field on anything malformed.
KernelManifest parse_manifest(const std::string& text, const std::string& path);
KernelManifest load_manifest(const std::string& path);

}  // namespace archdb
