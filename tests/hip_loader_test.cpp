// tests/hip_loader_test.cpp — the HIP runtime loader (Debian's libamdhip64): on a machine with an AMD GPU it
// loads the code object the gate built for the device; without one it says so with a named error, and the
// device tests are named skips. Built only where the HIP runtime is installed.
#include <gtest/gtest.h>

#include "kernels/loader/hip_loader.h"
#include "support/error.h"
#include "test_support.h"

namespace archdb {
namespace {
namespace fs = std::filesystem;

#ifdef ARCHDB_GATE_MANIFEST
const fs::path kGateManifest = ARCHDB_GATE_MANIFEST;
#else
const fs::path kGateManifest;
#endif

TEST(HipDevice, LoadsTheBuiltKernelOnAnAmdGpu) {
  if (kGateManifest.empty()) GTEST_SKIP() << "the bundled kernels were not built";
  DeviceInfo device = probe_hip_device();
  if (!device.present) GTEST_SKIP() << "device test skipped: " << device.message;
  GateManifest gate = GateManifest::load(kGateManifest);
  Selection s = select_code_object(gate, "wgrad_dw_portable_f16", device.gcn_arch_name);
  if (!s.found) GTEST_SKIP() << "device test skipped: " << s.message;
  LoadedKernel kernel = LoadedKernel::load(gate, "wgrad_dw_portable_f16", "wgrad_portable_dw");
  EXPECT_NE(kernel.function(), nullptr);
}

// Without a device, loading is a named error carrying the runtime's answer (not an internal error).
TEST(HipDevice, LoadingWithoutADeviceIsANamedError) {
  DeviceInfo device = probe_hip_device();
  if (device.present) GTEST_SKIP() << "this machine has an AMD GPU (" << device.gcn_arch_name << "): nothing to refuse";
  GateManifest gate;
  gate.dir = "/nonexistent";
  gate.kernels["k"].targets = {"gfx90a"};
  gate.kernels["k"].code_objects = {{"gfx90a", "k/gfx90a.hsaco"}};
  try {
    LoadedKernel::load(gate, "k", "f");
    FAIL() << "loaded without a device";
  } catch (const NoAmdDevice& e) {
    EXPECT_EQ(std::string(e.what()).rfind("no AMD GPU device (hipGetDeviceCount: ", 0), 0u) << e.what();
    EXPECT_NE(e.code(), kExitInternal);
  }
}

}  // namespace
}  // namespace archdb
