// kernels/wgrad_manifests.cpp — see wgrad_manifests.h.
#include "kernels/wgrad_manifests.h"

#include <algorithm>

#include "support/error.h"

namespace archdb::kernels {

std::vector<KernelManifest> read_wgrad_manifests(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") files.push_back(it->path());
  if (ec) throw input_error(dir.string() + ": cannot read the manifest folder: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<KernelManifest> out;
  for (const auto& f : files) out.push_back(load_manifest(f.string()));
  return out;
}

}  // namespace archdb::kernels
