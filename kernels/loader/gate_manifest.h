// kernels/loader/gate_manifest.h — the runtime side of the build gate without the GPU runtime: reads the gate
// manifest and picks the code object built for a device's processor (exactly, else the generic processor
// that covers it), or says why there is none (an arch the gate refused, in the checker's own message).
// hip_loader.h loads the pick through HIP.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace archdb {

struct GateManifest {
  struct Kernel {
    std::vector<std::string> targets;                 // the resolved target list: what was built
    std::map<std::string, std::string> code_objects;  // target -> path relative to the manifest's folder
    std::map<std::string, std::string> not_built;     // target -> the checker's message
  };
  std::filesystem::path dir;
  std::string flavor;
  std::map<std::string, Kernel> kernels;

  // Throws input_error naming the file when it is not a gate manifest.
  static GateManifest load(const std::filesystem::path& path);
};

// "gfx90a:sramecc+:xnack-" -> "gfx90a".
std::string processor_of(const std::string& gcn_arch_name);
// The generic processor whose code objects run on `processor` ("gfx1151" -> "gfx11-generic"), if any.
std::optional<std::string> generic_processor_for(const std::string& processor);

struct Selection {
  bool found = false;
  std::filesystem::path code_object;  // when found
  std::string built_for;              // the target it was built for (the processor, or its generic one)
  std::string message;                // when not found: why, in the checker's words where it refused
};
Selection select_code_object(const GateManifest& manifest, const std::string& kernel, const std::string& gcn_arch_name);

}  // namespace archdb
