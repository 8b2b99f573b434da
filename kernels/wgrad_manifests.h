// kernels/wgrad_manifests.h — the bundled variants' kernel manifests (kernels/manifests/<variant>.json): for
// each its HIP source, the defines that select it, and the archdb catalog keys its device IR uses. They are
// read by the checker's one manifest reader (checker/manifest.h), as the build gate reads them. No LLVM.
#pragma once

#include <filesystem>
#include <vector>

#include "checker/manifest.h"

namespace archdb::kernels {

// Every *.json of `dir`, sorted by file name, each read strictly by load_manifest. Throws input_error when
// the folder cannot be read or a manifest is malformed (naming the file and the field).
std::vector<KernelManifest> read_wgrad_manifests(const std::filesystem::path& dir);

}  // namespace archdb::kernels
