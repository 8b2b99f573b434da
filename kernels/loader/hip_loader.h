// kernels/loader/hip_loader.h — loads the code object the gate built for this machine's AMD GPU through
// Debian's HIP runtime (gate_manifest.h picks it). With no AMD device it says so, and callers skip.
#pragma once

#include <string>

#include "kernels/loader/gate_manifest.h"
#include "support/error.h"

namespace archdb {

// The HIP runtime's view of this machine.
struct DeviceInfo {
  bool present = false;
  std::string gcn_arch_name;  // device 0's, when present
  std::string message;        // when absent: e.g. "no AMD GPU device (hipGetDeviceCount: hipErrorNoDevice)"
};
DeviceInfo probe_hip_device();

// Thrown when the HIP runtime sees no AMD GPU (the message says what it answered): a fact about this
// machine, not a defect, so callers can name a skip.
class NoAmdDevice : public Error {
 public:
  explicit NoAmdDevice(const std::string& message) : Error(kExitBadInput, message) {}
};

// Loads the selected code object on device 0 and resolves `function`; throws NoAmdDevice without a device,
// an Error with the selection's message when nothing was built for the device, or the HIP error when
// loading fails.
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
