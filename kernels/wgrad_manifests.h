// kernels/wgrad_manifests.h — reading the kernel manifests (kernels/manifests/<variant>.json): for each bundled
// variant its HIP source, the defines that select it, and the archdb catalog keys its device IR uses. Shape:
//   {"schema":"archdb.kernel-manifest/v1","kernel":NAME,"source":PATH,"defines":[...],"keys":[...]}
// (the build gate reads the same files). Host code, no LLVM.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace archdb::kernels {

struct WgradManifest {
  std::string file;  // for messages
  std::string kernel;
  std::string source;  // relative to kernels/
  std::vector<std::string> defines;
  std::vector<std::string> keys;
};

// Throws input_error naming the file (and the field) when it is not a manifest of that shape.
WgradManifest read_wgrad_manifest(const std::filesystem::path& file);
// Every *.json of `dir`, sorted by file name. Throws input_error when the folder cannot be read.
std::vector<WgradManifest> read_wgrad_manifests(const std::filesystem::path& dir);

}  // namespace archdb::kernels
