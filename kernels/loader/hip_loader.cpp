// kernels/loader/hip_loader.cpp — the HIP device query and module calls (see hip_loader.h).
#include "kernels/loader/hip_loader.h"

#include <hip/hip_runtime_api.h>

#include "support/error.h"

namespace archdb {

DeviceInfo probe_hip_device() {
  DeviceInfo info;
  int count = 0;
  hipError_t e = hipGetDeviceCount(&count);
  if (e != hipSuccess || count == 0) {
    info.message = std::string("no AMD GPU device (hipGetDeviceCount: ") +
                   (e != hipSuccess ? hipGetErrorName(e) : "0 devices") + ")";
    return info;
  }
  hipDeviceProp_t props{};
  e = hipGetDeviceProperties(&props, 0);
  if (e != hipSuccess) {
    info.message = std::string("hipGetDeviceProperties: ") + hipGetErrorName(e);
    return info;
  }
  info.present = true;
  info.gcn_arch_name = props.gcnArchName;
  return info;
}

LoadedKernel LoadedKernel::load(const GateManifest& manifest, const std::string& kernel, const std::string& function) {
  DeviceInfo device = probe_hip_device();
  if (!device.present) throw NoAmdDevice(device.message);
  Selection s = select_code_object(manifest, kernel, device.gcn_arch_name);
  if (!s.found) throw usage_error(s.message);
  LoadedKernel loaded;
  hipModule_t module = nullptr;
  hipError_t e = hipModuleLoad(&module, s.code_object.c_str());
  if (e != hipSuccess) throw internal_error(s.code_object.string() + ": hipModuleLoad: " + hipGetErrorName(e));
  loaded.module_ = module;
  hipFunction_t fn = nullptr;
  e = hipModuleGetFunction(&fn, module, function.c_str());
  if (e != hipSuccess) throw internal_error(s.code_object.string() + ": no function '" + function + "': " + hipGetErrorName(e));
  loaded.function_ = fn;
  loaded.built_for_ = s.built_for;
  return loaded;
}

LoadedKernel::LoadedKernel(LoadedKernel&& other) noexcept
    : module_(other.module_), function_(other.function_), built_for_(std::move(other.built_for_)) {
  other.module_ = nullptr;
  other.function_ = nullptr;
}

LoadedKernel::~LoadedKernel() {
  if (module_) (void)hipModuleUnload(static_cast<hipModule_t>(module_));  // nothing to do about a failure here
}

}  // namespace archdb
