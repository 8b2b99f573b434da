// tests/gate_test.cpp — the kernel build gate on the bundled wgrad kernels, as this build compiled them
// (<build>/kernels/wgrad): which (variant, target) pairs were built and refused, what the code objects hold,
// a stale manifest failing the build, the installed package config used by another project, and the HIP
// loader choosing code objects (device tests skip, named, where no AMD GPU exists).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "checker/checker.h"
#include "checker/manifest.h"
#include "kernels/gate/code_object.h"
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

nlohmann::json gate_manifest() {
  if (kGateManifest.empty()) return nullptr;
  return nlohmann::json::parse(test::read(kGateManifest));
}

#define REQUIRE_GATE()                                                                                  \
  if (kGateManifest.empty())                                                                            \
    GTEST_SKIP() << "the bundled kernels were not built (no clang++ of this LLVM, or ARCHDB_BUILD_KERNELS=OFF)"

int run(const std::string& command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> manifests() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(test::source_dir() / "kernels" / "manifests"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<std::string> kGateTargets = {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250"};

TEST(Gate, Llvm22BuildsMfmaOnCdnaTr16OnGfx950AndPortableEverywhere) {
  REQUIRE_GATE();
  nlohmann::json gate = gate_manifest();
  if (gate["flavor"] != "llvm22") GTEST_SKIP() << "the expectations are llvm22's; this gate ran " << gate["flavor"];
  const std::vector<std::string> cdna = {"gfx90a", "gfx942", "gfx950"};
  for (const auto& [kernel, k] : gate["kernels"].items()) {
    auto targets = k["targets"].get<std::vector<std::string>>();
    if (kernel.find("tr16") != std::string::npos) {
      EXPECT_EQ(targets, std::vector<std::string>{"gfx950"}) << kernel;
    } else if (kernel.find("mfma") != std::string::npos) {
      EXPECT_EQ(targets, cdna) << kernel;
      for (const auto& refusal : k["not_built"]) {
        std::string message = refusal["check"]["message"];
        EXPECT_EQ(refusal["verdict"], "refused") << message;
        EXPECT_NE(message.find("mfma.f32.4x4x4"), std::string::npos) << message;
        EXPECT_NE(message.find("is arch_absent — LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma.f32.4x4x4"),
                  std::string::npos)
            << message;
      }
    } else {
      EXPECT_EQ(targets, kGateTargets) << kernel;
    }
  }
  EXPECT_EQ(gate["kernels"].size(), manifests().size());
}

TEST(Gate, BuiltExactlyWhereTheCheckerClears) {
  REQUIRE_GATE();
  nlohmann::json gate = gate_manifest();
  test::TempDir dir;
  auto store = Store::open(dir / "db.sqlite");
  sync_store_from_data(*store, test::source_dir() / "data");
  Checker checker(*store, load_catalog((test::source_dir() / "schema" / "catalog.txt").string()),
                  load_targets((test::source_dir() / "schema" / "targets.txt").string()));
  for (const std::string& path : manifests()) {
    KernelManifest m = load_manifest(path);
    const auto& k = gate["kernels"][m.kernel];
    auto built = k["targets"].get<std::vector<std::string>>();
    for (const std::string& target : kGateTargets) {
      CheckRequest r;
      r.subject = m.kernel;
      r.target = target;
      r.flavor = gate["flavor"];
      r.keys = m.keys;
      bool cleared = checker.check(r).verdict == Verdict::kCleared;
      bool was_built = std::find(built.begin(), built.end(), target) != built.end();
      EXPECT_EQ(cleared, was_built) << m.kernel << " on " << target;
      EXPECT_EQ(fs::exists(kGateManifest.parent_path() / m.kernel / (target + ".hsaco")), was_built) << m.kernel << " on " << target;
    }
  }
}

TEST(Gate, CodeObjectsHoldTheirInstructionsAndNoScratch) {
  REQUIRE_GATE();
  nlohmann::json gate = gate_manifest();
  int mfma_objects = 0;
  for (const auto& [kernel, k] : gate["kernels"].items()) {
    for (const auto& [target, object] : k["code_objects"].items()) {
      fs::path path = kGateManifest.parent_path() / object.get<std::string>();
      CodeObjectReport report = read_code_object(path.string());
      EXPECT_EQ(report.target, "amdgcn-amd-amdhsa--" + target);
      const auto& recorded = k["reports"][target];
      ASSERT_EQ(recorded["kernels"].size(), report.kernels.size()) << kernel << " on " << target;
      for (size_t i = 0; i < report.kernels.size(); ++i) {
        const auto& r = recorded["kernels"][i];
        EXPECT_EQ(r["name"], report.kernels[i].name);
        EXPECT_EQ(r["vgpr"], report.kernels[i].vgpr_count);
        EXPECT_EQ(r["scratch_bytes"], 0) << kernel << "/" << r["name"] << " on " << target;
        EXPECT_GE(r["occupancy_waves_per_simd"].get<int>(), 1);
      }
      std::set<std::string> mnemonics;
      for (const auto& [m, n] : recorded["mnemonics"].items()) mnemonics.insert(m);
      bool has_mfma_4x4x4 = false, has_any_mfma = false;
      for (const auto& m : mnemonics) {
        has_mfma_4x4x4 |= m.rfind("v_mfma_f32_4x4x4", 0) == 0;
        has_any_mfma |= m.rfind("v_mfma", 0) == 0;
      }
      if (kernel.find("mfma") != std::string::npos) {
        EXPECT_TRUE(has_mfma_4x4x4) << kernel << " on " << target;
        ++mfma_objects;
      } else {
        EXPECT_FALSE(has_any_mfma) << kernel << " on " << target;
      }
      EXPECT_EQ(kernel.find("tr16") != std::string::npos, mnemonics.count("ds_read_b64_tr_b16") == 1) << kernel;
    }
  }
  EXPECT_GT(mfma_objects, 0);
}

// A step of the gate run by hand on a manifest that lacks a key its IR uses: the build must fail.
TEST(Gate, StaleManifestFailsTheBuild) {
  REQUIRE_GATE();
  test::TempDir dir;
  fs::path manifest_path = test::source_dir() / "kernels" / "manifests" / "wgrad_dw_portable_f16.json";
  nlohmann::json manifest = nlohmann::json::parse(test::read(manifest_path));
  auto keys = manifest["keys"].get<std::vector<std::string>>();
  ASSERT_NE(std::find(keys.begin(), keys.end(), "workitem.x"), keys.end());
  keys.erase(std::find(keys.begin(), keys.end(), "workitem.x"));
  manifest["keys"] = keys;
  test::write(dir / "stale.json", manifest.dump());
  std::string flags;
  for (const char* f : {"-x", "hip", "--cuda-device-only", "-nogpulib", "-nogpuinc", "-O3", "-std=c++17"})
    flags += std::string(flags.empty() ? "" : ";") + f;
  for (const auto& d : manifest["defines"]) flags += ";-D" + d.get<std::string>();
  test::write(dir / "step.cmake",
              "set(ARCHDB [==[" ARCHDB_BINARY "]==])\n"
              "set(ARCHDB_ARGS [==[--db;" + (dir / "db.sqlite").string() + ";--data;" + (test::source_dir() / "data").string() + "]==])\n"
              "set(KERNEL wgrad_dw_portable_f16)\n"
              "set(MANIFEST [==[" + (dir / "stale.json").string() + "]==])\n"
              "set(SOURCE [==[" + (test::source_dir() / "kernels" / manifest["source"].get<std::string>()).string() + "]==])\n"
              "set(TARGET gfx90a)\nset(COMPILER [==[" ARCHDB_KERNEL_COMPILER "]==])\nset(FLAVOR \"\")\n"
              "set(FLAGS [==[" + flags + "]==])\nset(OBJDUMP llvm-objdump)\n"
              "set(OUT_DIR [==[" + (dir / "out").string() + "]==])\nset(ALLOW_UNVALIDATED FALSE)\n");
  std::string log = (dir / "log.txt").string();
  int rc = run("cmake -DCONFIG=" + (dir / "step.cmake").string() + " -P " +
               (test::source_dir() / "kernels" / "gate" / "ArchdbGateStep.cmake").string() + " >" + log + " 2>&1");
  std::string text = test::read(log);
  EXPECT_NE(rc, 0) << text;
  EXPECT_NE(text.find("stale"), std::string::npos) << text;
  EXPECT_NE(text.find("llvm.amdgcn.workitem.id.x is used but its key workitem.x is not in the manifest"),
            std::string::npos)
      << text;
  EXPECT_FALSE(fs::exists(dir / "out" / "gfx90a.hsaco"));
}

// Another project finds the installed archdb and gates its own kernel with it.
TEST(Gate, InstalledPackageGatesAnotherProject) {
  REQUIRE_GATE();
  test::TempDir dir;
  std::string build_dir = fs::path(ARCHDB_BINARY).parent_path().string();
  ASSERT_EQ(run("cmake --install " + build_dir + " --prefix " + (dir / "prefix").string() + " >" +
                (dir / "install.log").string() + " 2>&1"),
            0)
      << test::read(dir / "install.log");
  fs::create_directories(dir / "app" / "manifests");
  test::write(dir / "app" / "axpy.hip",
              "#define __global__ __attribute__((global))\n"
              "typedef short v4s __attribute__((ext_vector_type(4)));\n"
              "typedef float v4f __attribute__((ext_vector_type(4)));\n"
              "extern \"C\" __global__ void atom(v4f* out, const v4s* a) {\n"
              "  int i = __builtin_amdgcn_workitem_id_x();\n"
              "  out[i] = __builtin_amdgcn_mfma_f32_4x4x4bf16_1k(a[i], a[i + 1], out[i], 0, 0, 0);\n"
              "}\n");
  test::write(dir / "app" / "manifests" / "atom.json",
              R"({"schema":"archdb.kernel-manifest/v1","kernel":"atom_bf16","source":"axpy.hip",)"
              R"("keys":["mfma.f32.4x4x4bf16.1k","workitem.x"]})");
  test::write(dir / "app" / "CMakeLists.txt",
              "cmake_minimum_required(VERSION 3.20)\nproject(app NONE)\n"
              "find_package(archdb CONFIG REQUIRED)\n"
              "archdb_add_gated_kernels(app_kernels MANIFESTS manifests/atom.json TARGETS gfx942 gfx1201\n"
              "  COMPILER " ARCHDB_KERNEL_COMPILER " ARCHDB_ARGS --db " + (dir / "app.sqlite").string() + ")\n");
  std::string log = (dir / "app.log").string();
  ASSERT_EQ(run("cmake -S " + (dir / "app").string() + " -B " + (dir / "app-build").string() +
                " -DCMAKE_PREFIX_PATH=" + (dir / "prefix").string() + " >" + log + " 2>&1 && cmake --build " +
                (dir / "app-build").string() + " >>" + log + " 2>&1"),
            0)
      << test::read(log);
  std::string text = test::read(log);
  EXPECT_NE(text.find("archdb gate: refused: atom_bf16 on gfx1201 (llvm"), std::string::npos) << text;
  GateManifest gate = GateManifest::load(dir / "app-build" / "app_kernels" / "gate-manifest.json");
  EXPECT_EQ(gate.kernels["atom_bf16"].targets, std::vector<std::string>{"gfx942"});
  EXPECT_TRUE(fs::exists(dir / "app-build" / "app_kernels" / "atom_bf16" / "gfx942.hsaco"));
  EXPECT_EQ(test::read(dir / "app-build" / "app_kernels" / "atom_bf16.targets"), "gfx942");
}

TEST(HipLoader, PicksTheCodeObjectForTheDevicesProcessor) {
  REQUIRE_GATE();
  GateManifest gate = GateManifest::load(kGateManifest);
  Selection exact = select_code_object(gate, "wgrad_dw_portable_f16", "gfx90a:sramecc+:xnack-");
  ASSERT_TRUE(exact.found) << exact.message;
  EXPECT_EQ(exact.built_for, "gfx90a");
  EXPECT_TRUE(fs::exists(exact.code_object));
  EXPECT_EQ(read_code_object(exact.code_object.string()).target, "amdgcn-amd-amdhsa--gfx90a");

  Selection refused = select_code_object(gate, "wgrad_dw_mfma_bf16", "gfx1201");
  EXPECT_FALSE(refused.found);
  if (gate.flavor == "llvm22") {
    EXPECT_EQ(refused.message.rfind("refused: wgrad_dw_mfma_bf16 on gfx1201 (llvm22): mfma.f32.4x4x4bf16.1k is "
                                    "arch_absent — LLVM ERROR: Cannot select",
                                    0),
              0u)
        << refused.message;
  }
  Selection absent = select_code_object(gate, "wgrad_dw_portable_f16", "gfx1036");
  EXPECT_FALSE(absent.found);
  EXPECT_EQ(absent.message.rfind("wgrad_dw_portable_f16 was not built for gfx1036 (built for: gfx90a", 0), 0u) << absent.message;
  EXPECT_FALSE(select_code_object(gate, "no_such_kernel", "gfx90a").found);
}

TEST(HipLoader, GenericProcessorsCoverTheirMembers) {
  EXPECT_EQ(processor_of("gfx942:sramecc+:xnack-"), "gfx942");
  EXPECT_EQ(generic_processor_for("gfx1151"), "gfx11-generic");
  EXPECT_EQ(generic_processor_for("gfx1201"), "gfx12-generic");
  EXPECT_EQ(generic_processor_for("gfx90a"), std::nullopt);
  GateManifest gate;
  gate.dir = "/objects";
  gate.kernels["k"].targets = {"gfx11-generic"};
  gate.kernels["k"].code_objects = {{"gfx11-generic", "k/gfx11-generic.hsaco"}};
  Selection s = select_code_object(gate, "k", "gfx1151");
  EXPECT_TRUE(s.found);
  EXPECT_EQ(s.built_for, "gfx11-generic");
}

TEST(HipLoader, MalformedGateManifestIsRefused) {
  test::TempDir dir;
  test::write(dir / "g.json", R"({"schema":"archdb.gate-manifest/v1","kernels":{"k":{"targets":3}}})");
  EXPECT_THROW(GateManifest::load(dir / "g.json"), Error);
  test::write(dir / "h.json", "{}");
  EXPECT_THROW(GateManifest::load(dir / "h.json"), Error);
}

TEST(HipDevice, LoadsTheBuiltKernelOnAnAmdGpu) {
  REQUIRE_GATE();
  DeviceInfo device = probe_hip_device();
  if (!device.present) GTEST_SKIP() << "device test skipped: " << device.message;
  GateManifest gate = GateManifest::load(kGateManifest);
  Selection s = select_code_object(gate, "wgrad_dw_portable_f16", device.gcn_arch_name);
  if (!s.found) GTEST_SKIP() << "device test skipped: " << s.message;
  LoadedKernel kernel = LoadedKernel::load(gate, "wgrad_dw_portable_f16", "wgrad_portable_dw");
  EXPECT_NE(kernel.function(), nullptr);
}

}  // namespace
}  // namespace archdb

namespace archdb {
namespace {

TEST(GateReport, TabulatesBuiltPairsAndNamesEveryRefusal) {
  REQUIRE_GATE();
  auto r = test::run_archdb({"gate-report", kGateManifest.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json gate = gate_manifest();
  size_t refusals = 0;
  for (const auto& [kernel, k] : gate["kernels"].items()) {
    for (const auto& target : k["targets"]) {
      bool row = false;  // a table row whose first two columns are the variant and the target
      std::istringstream lines(r.out);
      for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        std::string first, second;
        fields >> first >> second;
        row |= first == kernel && second == target.get<std::string>();
      }
      EXPECT_TRUE(row) << kernel << " on " << target;
    }
    for (const auto& n : k["not_built"]) {
      EXPECT_NE(r.out.find(n["check"]["message"].get<std::string>()), std::string::npos);
      ++refusals;
    }
  }
  EXPECT_NE(r.out.find("not built (" + std::to_string(refusals) + "):"), std::string::npos) << r.out;
}

TEST(GateReport, RefusesWhatIsNotAGateManifestOrCodeObject) {
  test::TempDir dir;
  test::write(dir / "x.json", R"({"schema":"something-else"})");
  auto bad = test::run_archdb({"gate-report", (dir / "x.json").string()});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("not an archdb gate manifest"), std::string::npos) << bad.err;
  test::write(dir / "k.hsaco", "not an elf file at all");
  auto object = test::run_archdb({"code-object", (dir / "k.hsaco").string()});
  EXPECT_EQ(object.exit_code, 3);
  EXPECT_NE(object.err.find("k.hsaco: not an ELF code object"), std::string::npos) << object.err;
}

}  // namespace
}  // namespace archdb

namespace archdb {
namespace {

TEST(CodeObject, CountsInstructionsButNotThePaddingAfterEachFunction) {
  const std::string listing =
      "\nk.hsaco:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n"
      "0000000000001600 <k>:\n"
      "\ts_load_dwordx4 s[0:3], s[4:5], 0x0                         // 000000001600: C00A0002 00000000\n"
      "\ts_nop 4                                                    // 000000001608: BF800004\n"
      "\tv_mfma_f32_4x4x4f16 v[0:3], v[6:7], v[8:9], v[0:3]         // 00000000160C: D3C40000 04021106\n"
      "\ts_endpgm                                                   // 000000001614: BF810000\n"
      "\ts_nop 0                                                    // 000000001618: BF800000\n"
      "\ts_code_end                                                 // 00000000161C: BF9F0000\n"
      "0000000000001700 <j>:\n"
      "\ts_endpgm                                                   // 000000001700: BF810000\n"
      "\ts_nop 0                                                    // 000000001704: BF800000\n";
  auto counts = count_mnemonics(listing);
  EXPECT_EQ(counts["s_nop"], 1);
  EXPECT_EQ(counts["s_endpgm"], 2);
  EXPECT_EQ(counts["v_mfma_f32_4x4x4f16"], 1);
  EXPECT_EQ(counts.count("s_code_end"), 0u);
}

}  // namespace
}  // namespace archdb
