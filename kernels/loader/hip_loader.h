// kernels/loader/hip_loader.h — the runtime side of the build gate: reads the gate manifest, picks the code
// object built for the device's processor (exactly, else the generic processor that covers it), refuses an
// arch the gate refused with the checker's own message, and loads it through Debian's HIP runtime. With no
// AMD device it says so, and callers skip.
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

// The HIP runtime's view of this machine.
struct DeviceInfo {
  bool present = false;
  std::string gcn_arch_name;  // device 0's, when present
  std::string message;        // when absent: e.g. "no AMD GPU device (hipGetDeviceCount: hipErrorNoDevice)"
};
DeviceInfo probe_hip_device();

// Loads the selected code object on device 0 and resolves `function`; throws an Error with the selection's
// message when nothing was built for the device, or the HIP error when loading fails.
class LoadedKernel {
 public:
  static LoadedKernel load(const GateManifest& manifest, const std::string& kernel, const std::string& function);
  ~LoadedKernel();
  LoadedKernel(LoadedKernel&& other) noexcept;
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  LoadedKernel& operator=(LoadedKernel&&) = delete;

  void* function() const { return function_; }  // a hipFunction_t
  const std::string& built_for() const { return built_for_; }

 private:
  LoadedKernel() = default;
  void* module_ = nullptr;
  void* function_ = nullptr;
  std::string built_for_;
};

}  // namespace archdb
