// tests/gate_test.cpp — the kernel build gate on the bundled wgrad kernels, as this build compiled them
// (<build>/kernels/wgrad): which (variant, target) pairs were built and refused, what the code objects hold,
// a stale manifest failing the build, the installed package config used by another project, and choosing
// the code object for a device's processor. Needs no GPU runtime (hip_loader_test.cpp has the device tests).
#include <cctype>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "checker/checker.h"
#include "checker/manifest.h"
#include "kernels/gate/code_object.h"
#include "kernels/loader/gate_manifest.h"
#include "support/error.h"
#include "support/file_lock.h"
#include "test_support.h"

namespace archdb {
namespace {
namespace fs = std::filesystem;

#ifdef ARCHDB_GATE_MANIFEST
const fs::path kGateManifest = ARCHDB_GATE_MANIFEST;
#else
const fs::path kGateManifest;
#define ARCHDB_KERNEL_COMPILER ""
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

// CMake wraps a message's text over several indented lines: compare with each run of whitespace one space.
std::string fold_whitespace(const std::string& text) {
  std::string folded;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)) || (!folded.empty() && folded.back() != ' '))
      folded += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
  return folded;
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
        // The kernel's source is HIP: clang refuses the MFMA builtin there before the back end is asked (the
        // front-end axis, where the flavor has one), else the back end's own refusal.
        EXPECT_TRUE(message.find("is arch_absent — " + gate["flavor"].get<std::string>() +
                                 "'s clang refuses __builtin_amdgcn_mfma_f32_4x4x4") != std::string::npos ||
                    message.find("is arch_absent — LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma.f32.4x4x4") !=
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

// Occupancy comes from the code object's metadata on its processor; the backend's remark for the same build
// must say the same, on every code object the gate built (CDNA2/3/4 wave64, RDNA wave32, gfx1250).
TEST(Gate, OccupancyFromTheMetadataIsTheBackendsOnEveryBuiltCodeObject) {
  REQUIRE_GATE();
  nlohmann::json gate = gate_manifest();
  int kernels = 0;
  std::set<std::string> processors;
  for (const auto& [kernel, k] : gate["kernels"].items()) {
    for (const auto& [target, object] : k["code_objects"].items()) {
      fs::path hsaco = kGateManifest.parent_path() / object.get<std::string>();
      CodeObjectReport report = read_code_object(hsaco.string());
      fs::path remarks = hsaco;
      remarks.replace_extension(".remarks");
      ASSERT_TRUE(fs::exists(remarks)) << remarks;
      EXPECT_NO_THROW(apply_resource_remarks(report, test::read(remarks))) << kernel << " on " << target;
      for (const KernelResources& r : report.kernels) {
        EXPECT_EQ(r.occupancy, r.remark_occupancy) << kernel << "/" << r.name << " on " << target;
        EXPECT_GE(r.occupancy, 1);
        ++kernels;
      }
      processors.insert(report.processor);
      // The gate's recorded report carries both.
      for (const auto& f : k["reports"][target]["kernels"])
        EXPECT_EQ(f["occupancy_waves_per_simd"], f["remark_occupancy_waves_per_simd"]) << kernel << " on " << target;
    }
  }
  EXPECT_GT(kernels, 0);
  EXPECT_GE(processors.size(), 3u);
}

// The cross-check bites: a remark that disagrees with the metadata, or does not read, is a one-line input error.
TEST(Gate, ARemarkThatDisagreesWithTheMetadataIsRefused) {
  REQUIRE_GATE();
  nlohmann::json gate = gate_manifest();
  const auto& k = gate["kernels"]["wgrad_dw_mfma_bf16"];
  fs::path hsaco = kGateManifest.parent_path() / k["code_objects"]["gfx90a"].get<std::string>();
  fs::path remarks_path = hsaco;
  remarks_path.replace_extension(".remarks");
  const std::string remarks = test::read(remarks_path);
  test::TempDir dir;
  auto code_object = [&](const std::string& text) {
    test::write(dir / "r.txt", text);
    return test::run_archdb({"code-object", hsaco.string(), "--remarks", (dir / "r.txt").string()});
  };
  ASSERT_EQ(code_object(remarks).exit_code, 0);
  static const std::regex occupancy(R"(Occupancy \[waves/SIMD\]: (\d+))"), sgprs(R"(TotalSGPRs: (\d+))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(remarks, m, occupancy));
  auto wrong_occupancy = code_object(std::regex_replace(remarks, occupancy, "Occupancy [waves/SIMD]: 3",
                                                        std::regex_constants::format_first_only));
  if (m[1] != "3") {
    EXPECT_EQ(wrong_occupancy.exit_code, 3);
    EXPECT_NE(wrong_occupancy.err.find("the remark's occupancy 3 is not the " + m[1].str() + " waves per SIMD"),
              std::string::npos)
        << wrong_occupancy.err;
  }
  auto wrong_sgprs = code_object(std::regex_replace(remarks, sgprs, "TotalSGPRs: 1000", std::regex_constants::format_first_only));
  EXPECT_EQ(wrong_sgprs.exit_code, 3);
  EXPECT_NE(wrong_sgprs.err.find("the remark's TotalSGPRs 1000 is not the metadata's"), std::string::npos) << wrong_sgprs.err;
  auto malformed = code_object(std::regex_replace(remarks, occupancy, "Occupancy [waves/SIMD]: x8",
                                                  std::regex_constants::format_first_only));
  EXPECT_EQ(malformed.exit_code, 3) << malformed.err;
  EXPECT_NE(malformed.err.find("has Occupancy 'x8', not a number"), std::string::npos) << malformed.err;
  EXPECT_EQ(std::count(malformed.err.begin(), malformed.err.end(), '\n'), 1);
}

// --require-no-scratch fails a code object whose kernel spills to scratch, naming it.
TEST(Gate, RequireNoScratchFailsAKernelThatUsesScratch) {
  REQUIRE_GATE();
  test::TempDir dir;
  test::write(dir / "s.hip",
              "extern \"C\" __attribute__((global)) void spills(int* out, int i) {\n"
              "  volatile int a[64];\n"
              "  for (int j = 0; j < 64; ++j) a[j] = out[j];\n"
              "  out[0] = a[i & 63];\n"
              "}\n");
  const std::string hsaco = (dir / "s.hsaco").string();
  ASSERT_EQ(run(std::string(ARCHDB_KERNEL_COMPILER) + " -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc "
                "-nogpulib -O1 --offload-arch=gfx90a -o " + hsaco + " " + (dir / "s.hip").string() + " 2>" +
                (dir / "cc.log").string()),
            0)
      << test::read(dir / "cc.log");
  CodeObjectReport report = read_code_object(hsaco);
  ASSERT_EQ(report.kernels.size(), 1u);
  ASSERT_GT(report.kernels[0].scratch_bytes, 0) << "the test kernel was meant to use scratch";
  EXPECT_EQ(test::run_archdb({"code-object", hsaco}).exit_code, 0);
  auto r = test::run_archdb({"code-object", hsaco, "--require-no-scratch"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "archdb: " + hsaco + ": kernel 'spills' uses " + std::to_string(report.kernels[0].scratch_bytes) +
                       " bytes of scratch per lane (must be 0)\n");
}

// The gate's step run by hand for a pair the column cannot answer: not built (and said so), unless
// ALLOW_UNVALIDATED, which builds it with a warning.
// The gate's decision for one manifest on one target, as ArchdbGate.cmake has it made (ArchdbGateDecide.cmake,
// one `archdb check` of every pair): the file a step reads, DIR/decisions/<kernel>.json.
fs::path decide(const fs::path& dir, const fs::path& manifest, const std::string& kernel, const std::string& target) {
  test::write(dir / "manifests.txt", manifest.string() + "\n");
  test::write(dir / "decide.cmake",
              "set(ARCHDB [==[" ARCHDB_BINARY "]==])\n"
              "set(ARCHDB_ARGS [==[--db;" + (dir / "db.sqlite").string() + ";--data;" + (test::source_dir() / "data").string() + "]==])\n"
              "set(MANIFEST_LIST [==[" + (dir / "manifests.txt").string() + "]==])\n"
              "set(TARGETS " + target + ")\nset(COMPILER [==[" ARCHDB_KERNEL_COMPILER "]==])\nset(FLAVOR \"\")\n"
              "set(DECISIONS_DIR [==[" + (dir / "decisions").string() + "]==])\n");
  int rc = run("cmake -DCONFIG=" + (dir / "decide.cmake").string() + " -P " +
               (test::source_dir() / "kernels" / "gate" / "ArchdbGateDecide.cmake").string());
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(fs::exists(dir / "decisions" / ".stamp"));
  return dir / "decisions" / (kernel + ".json");
}

TEST(Gate, UnvalidatedPairsAreNotBuiltUnlessAllowed) {
  REQUIRE_GATE();
  if (gate_manifest()["flavor"] != "llvm22") GTEST_SKIP() << "needs llvm22's end.cf.i32 crash on gfx942";
  fs::path manifest_path = test::source_dir() / "kernels" / "manifests" / "wgrad_dw_portable_f16.json";
  nlohmann::json manifest = nlohmann::json::parse(test::read(manifest_path));
  auto keys = manifest["keys"].get<std::vector<std::string>>();
  keys.push_back("llvm.amdgcn.end.cf.i32");  // the census's toolchain_crash on gfx942 in llvm22: no answer
  std::sort(keys.begin(), keys.end());
  manifest["keys"] = keys;
  std::string flags;
  for (const char* f : {"-x", "hip", "--cuda-device-only", "-nogpulib", "-nogpuinc", "-O3", "-std=c++17"})
    flags += std::string(flags.empty() ? "" : ";") + f;
  for (const auto& d : manifest["defines"]) flags += ";-D" + d.get<std::string>();
  for (bool allow : {false, true}) {
    test::TempDir dir;
    test::write(dir / "m.json", manifest.dump());
    test::write(dir / "step.cmake",
                "set(ARCHDB [==[" ARCHDB_BINARY "]==])\n"
                "set(ARCHDB_ARGS [==[--db;" + (dir / "db.sqlite").string() + ";--data;" + (test::source_dir() / "data").string() + "]==])\n"
                "set(KERNEL wgrad_dw_portable_f16)\n"
                "set(MANIFEST [==[" + (dir / "m.json").string() + "]==])\n"
                "set(DECISION [==[" + decide(dir.path(), dir / "m.json", "wgrad_dw_portable_f16", "gfx942").string() + "]==])\n"
                "set(SOURCE [==[" + (test::source_dir() / "kernels" / manifest["source"].get<std::string>()).string() + "]==])\n"
                "set(TARGET gfx942)\nset(TARGET_STEM gfx942)\nset(COMPILER [==[" ARCHDB_KERNEL_COMPILER "]==])\nset(FLAVOR \"\")\n"
                "set(FLAGS [==[" + flags + "]==])\nset(OBJDUMP llvm-objdump-22)\n"
                "set(OUT_DIR [==[" + (dir / "out").string() + "]==])\nset(ALLOW_UNVALIDATED " + (allow ? "TRUE" : "FALSE") + ")\n");
    std::string log = (dir / "log.txt").string();
    int rc = run("cmake -DCONFIG=" + (dir / "step.cmake").string() + " -P " +
                 (test::source_dir() / "kernels" / "gate" / "ArchdbGateStep.cmake").string() + " >" + log + " 2>&1");
    std::string text = test::read(log);
    EXPECT_EQ(rc, 0) << text;
    std::string folded = fold_whitespace(text);
    nlohmann::json result = nlohmann::json::parse(test::read(dir / "out" / "gfx942.result.json"));
    EXPECT_EQ(result["check"]["verdict"], "unvalidated");
    EXPECT_EQ(result["keys"], nlohmann::json(keys));
    if (!allow) {
      EXPECT_EQ(result["built"], false);
      EXPECT_FALSE(fs::exists(dir / "out" / "gfx942.hsaco"));
      EXPECT_NE(folded.find("archdb gate: unvalidated: wgrad_dw_portable_f16 on gfx942 (llvm22): llvm.amdgcn.end.cf.i32 is "
                          "toolchain_crash"),
                std::string::npos)
          << text;
    } else {
      EXPECT_EQ(result["built"], true);
      EXPECT_TRUE(fs::exists(dir / "out" / "gfx942.hsaco"));
      EXPECT_NE(folded.find("archdb gate: building without validation: unvalidated: wgrad_dw_portable_f16 on gfx942"),
                std::string::npos)
          << text;
      // Run again with the same inputs (as make does after the gate's decision): nothing is compiled again.
      fs::path object = dir / "out" / "gfx942.hsaco";
      fs::last_write_time(object, fs::last_write_time(object) - std::chrono::hours(1));
      const auto old_time = fs::last_write_time(object);
      const std::string step = "cmake -DCONFIG=" + (dir / "step.cmake").string() + " -P " +
                               (test::source_dir() / "kernels" / "gate" / "ArchdbGateStep.cmake").string() + " >" + log +
                               " 2>&1";
      EXPECT_EQ(run(step), 0) << test::read(log);
      EXPECT_EQ(fs::last_write_time(object), old_time) << "compiled again with unchanged inputs";
      // Another input (a flag): compiled again.
      std::string config = test::read(dir / "step.cmake");
      config.replace(config.find("set(FLAGS [==["), 14, "set(FLAGS [==[-DARCHDB_GATE_TEST_FLAG;");
      test::write(dir / "step.cmake", config);
      EXPECT_EQ(run(step), 0) << test::read(log);
      EXPECT_NE(fs::last_write_time(object), old_time) << "not compiled again after a flag changed";
    }
  }
}

// Built pairs carry the keys they were checked for, as refused ones do.
TEST(Gate, BuiltEntriesCarryTheirKeys) {
  REQUIRE_GATE();
  nlohmann::json gate = gate_manifest();
  for (const std::string& path : manifests()) {
    KernelManifest m = load_manifest(path);
    const auto& k = gate["kernels"][m.kernel];
    EXPECT_EQ(k["keys"], nlohmann::json(m.keys)) << m.kernel;
    EXPECT_EQ(k["built"].size(), k["targets"].size()) << m.kernel;
    for (const auto& b : k["built"]) {
      EXPECT_EQ(b["keys"], nlohmann::json(m.keys)) << m.kernel;
      EXPECT_EQ(b["verdict"], "cleared") << m.kernel;
    }
    for (const auto& n : k["not_built"]) EXPECT_EQ(n["keys"], nlohmann::json(m.keys)) << m.kernel;
  }
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
              "set(DECISION [==[" + decide(dir.path(), dir / "stale.json", "wgrad_dw_portable_f16", "gfx90a").string() + "]==])\n"
              "set(SOURCE [==[" + (test::source_dir() / "kernels" / manifest["source"].get<std::string>()).string() + "]==])\n"
              "set(TARGET gfx90a)\nset(TARGET_STEM gfx90a)\nset(COMPILER [==[" ARCHDB_KERNEL_COMPILER "]==])\nset(FLAVOR \"\")\n"
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

// A project of its own that finds archdb by `find_package(archdb CONFIG)` under `prefix_path` and gates an
// MFMA kernel on gfx942 (cleared) and gfx1201 (refused): what it built, and its log.
struct Consumer {
  int rc;
  std::string log;
};
Consumer gate_a_consumer_project(const fs::path& dir, const fs::path& prefix_path) {
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
              "get_target_property(exe archdb::archdb IMPORTED_LOCATION)\n"
              "message(STATUS \"archdb at ${exe}\")\n"
              "archdb_add_gated_kernels(app_kernels MANIFESTS manifests/atom.json TARGETS gfx942 gfx1201\n"
              "  COMPILER " ARCHDB_KERNEL_COMPILER " ARCHDB_ARGS --db " + (dir / "app.sqlite").string() + ")\n");
  std::string log = (dir / "app.log").string();
  int rc = run("cmake -S " + (dir / "app").string() + " -B " + (dir / "app-build").string() +
               " -DCMAKE_PREFIX_PATH=" + prefix_path.string() + " >" + log + " 2>&1 && cmake --build " +
               (dir / "app-build").string() + " >>" + log + " 2>&1");
  return {rc, test::read(log)};
}

void expect_the_consumer_gated_its_kernel(const fs::path& dir, const Consumer& app) {
  EXPECT_NE(app.log.find("archdb gate: refused: atom_bf16 on gfx1201 (llvm"), std::string::npos) << app.log;
  GateManifest gate = GateManifest::load(dir / "app-build" / "app_kernels" / "gate-manifest.json");
  EXPECT_EQ(gate.kernels["atom_bf16"].targets, std::vector<std::string>{"gfx942"});
  EXPECT_TRUE(fs::exists(dir / "app-build" / "app_kernels" / "atom_bf16" / "gfx942.hsaco"));
  EXPECT_EQ(test::read(dir / "app-build" / "app_kernels" / "atom_bf16.targets"), "gfx942");
}

// Every file under `root` with its modification time (ctest's own Testing/ and the build's default database,
// which other tests running beside this one may write, left out).
std::map<std::string, fs::file_time_type> files_with_times(const fs::path& root) {
  std::map<std::string, fs::file_time_type> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = fs::relative(it->path(), root).string();
    if (rel == "Testing" || rel.rfind("archdb.sqlite", 0) == 0) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    std::error_code ec;
    if (it->is_regular_file(ec)) files[rel] = fs::last_write_time(it->path(), ec);
  }
  return files;
}

// Another project finds archdb in its build tree, with no install, and gates its own kernel with it.
TEST(Gate, BuildTreePackageGatesAnotherProject) {
  REQUIRE_GATE();
  test::TempDir dir;
  const fs::path build_dir = fs::path(ARCHDB_BINARY).parent_path();
  Consumer app = gate_a_consumer_project(dir.path(), build_dir);
  ASSERT_EQ(app.rc, 0) << app.log;
  EXPECT_NE(app.log.find("archdb at " + fs::path(ARCHDB_BINARY).string()), std::string::npos) << app.log;
  expect_the_consumer_gated_its_kernel(dir.path(), app);
}

// Another project finds the installed archdb and gates its own kernel with it. The install writes under its
// prefix only (CMake's own install_manifest.txt aside) and none of data/'s lock files; the installed archdb
// answers from the prefix and keeps its database there, or where ARCHDB_DB says.
TEST(Gate, InstalledPackageGatesAnotherProject) {
  REQUIRE_GATE();
  test::TempDir dir;
  const fs::path build_dir = fs::path(ARCHDB_BINARY).parent_path();
  const fs::path prefix = dir / "prefix";
  { FileLock writer(test::source_dir() / "data" / ".llvm22.write-lock"); }  // as a regeneration leaves it
  auto build_before = files_with_times(build_dir);
  ASSERT_EQ(run("cmake --install " + build_dir.string() + " --prefix " + prefix.string() + " >" +
                (dir / "install.log").string() + " 2>&1"),
            0)
      << test::read(dir / "install.log");
  auto build_after = files_with_times(build_dir);
  std::vector<std::string> written;
  for (const auto& [file, time] : build_after)
    if (!build_before.count(file) || build_before[file] != time) written.push_back(file);
  EXPECT_EQ(written, std::vector<std::string>{"install_manifest.txt"});
  for (const auto& entry : fs::recursive_directory_iterator(prefix))
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
  EXPECT_TRUE(fs::exists(prefix / "share" / "archdb" / "data" / "llvm22" / "cells.jsonl"));

  Consumer app = gate_a_consumer_project(dir.path(), prefix);
  ASSERT_EQ(app.rc, 0) << app.log;
  EXPECT_NE(app.log.find("archdb at " + (prefix / "bin" / "archdb").string()), std::string::npos) << app.log;
  expect_the_consumer_gated_its_kernel(dir.path(), app);

  // The installed archdb on its own: the prefix's columns, its database made under the prefix, nothing in the
  // user's cache; ARCHDB_DB moves the database.
  fs::create_directories(dir / "home");
  const std::string env = "env -u ARCHDB_DB -u ARCHDB_DATA -u XDG_CACHE_HOME HOME=" + (dir / "home").string() + " ";
  const std::string query = (prefix / "bin" / "archdb").string() + " query amdgcn.permlane64 --flavor llvm22 --target gfx1100 --json";
  ASSERT_EQ(run(env + query + " >" + (dir / "q.json").string() + " 2>&1"), 0) << test::read(dir / "q.json");
  EXPECT_NE(test::read(dir / "q.json").find("\"ok\""), std::string::npos) << test::read(dir / "q.json");
  EXPECT_TRUE(fs::is_regular_file(prefix / "var" / "cache" / "archdb" / "archdb.sqlite"));
  EXPECT_FALSE(fs::exists(dir / "home" / ".cache"));
  fs::remove_all(prefix / "var");
  ASSERT_EQ(run(env + "ARCHDB_DB=" + (dir / "own.sqlite").string() + " " + query + " >/dev/null 2>&1"), 0);
  EXPECT_TRUE(fs::is_regular_file(dir / "own.sqlite"));
  EXPECT_FALSE(fs::exists(dir / "home" / ".cache"));
  EXPECT_FALSE(fs::exists(prefix / "var")) << "another database named: nothing is made under the prefix";
}

// A target with features is decided with them and compiled with them: a wave64 gfx1100 has the WMMA key (in its
// wave64 layout), but this source calls the wave32 builtin, which clang refuses there: the pair is refused with
// clang's words and the build goes on; a kernel without it is built as wave64 code. A feature the gate has no
// clang flag for is refused when it is configured.
TEST(Gate, TargetsWithFeaturesAreDecidedAndCompiledWithThem) {
  REQUIRE_GATE();
  test::TempDir dir;
  fs::create_directories(dir / "app" / "manifests");
  test::write(dir / "app" / "k.hip",
              "#define __global__ __attribute__((global))\n"
              "typedef _Float16 v16h __attribute__((ext_vector_type(16)));\n"
              "typedef float v8f __attribute__((ext_vector_type(8)));\n"
              "extern \"C\" __global__ void ids(int* out) { out[__builtin_amdgcn_workitem_id_x()] = 1; }\n"
              "#ifdef WMMA\n"
              "extern \"C\" __global__ void w(v8f* out, const v16h* a) {\n"
              "  int i = __builtin_amdgcn_workitem_id_x();\n"
              "  out[i] = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a[i], a[i + 1], out[i]);\n"
              "}\n"
              "#endif\n");
  test::write(dir / "app" / "manifests" / "ids.json",
              R"({"schema":"archdb.kernel-manifest/v1","kernel":"ids","source":"k.hip","keys":["workitem.x"]})");
  test::write(dir / "app" / "manifests" / "wmma.json",
              R"({"schema":"archdb.kernel-manifest/v1","kernel":"wmma","source":"k.hip","defines":["WMMA"],)"
              R"("keys":["wmma.f32.16x16x16.f16","workitem.x"]})");
  auto configure = [&](const std::string& targets) {
    test::write(dir / "app" / "CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.20)\nproject(app NONE)\n"
                "include(" + (test::source_dir() / "kernels" / "gate" / "ArchdbGate.cmake").string() + ")\n"
                "archdb_add_gated_kernels(app_kernels MANIFESTS manifests/ids.json manifests/wmma.json TARGETS " +
                    targets + "\n  ARCHDB " ARCHDB_BINARY " ARCHDB_ARGS --db " + (dir / "app.sqlite").string() +
                    " COMPILER " ARCHDB_KERNEL_COMPILER " OBJDUMP llvm-objdump-22)\n");
    std::string log = (dir / "app.log").string();
    int rc = run("cmake -S " + (dir / "app").string() + " -B " + (dir / "app-build").string() + " >" + log +
                 " 2>&1 && cmake --build " + (dir / "app-build").string() + " >>" + log + " 2>&1");
    return std::make_pair(rc, test::read(log));
  };

  auto [rc, log] = configure("gfx1100 gfx1100:+wavefrontsize64");
  ASSERT_EQ(rc, 0) << log;
  fs::path out = dir / "app-build" / "app_kernels";
  GateManifest gate = GateManifest::load(out / "gate-manifest.json");
  const std::string wave64 = "gfx1100:+wavefrontsize64,-wavefrontsize32";
  EXPECT_EQ(gate.kernels["ids"].targets, (std::vector<std::string>{"gfx1100", wave64}));
  EXPECT_EQ(gate.kernels["wmma"].targets, std::vector<std::string>{"gfx1100"});
  EXPECT_NE(log.find("archdb gate: refused: wmma on gfx1100:+wavefrontsize64: clang refuses a builtin of "), std::string::npos) << log;
  EXPECT_NE(log.find("needs target feature"), std::string::npos) << log;
  // Compiled as wave64: the IR's functions carry the feature, and the code object exists under the target's name.
  EXPECT_NE(test::read(out / "ids" / "gfx1100@+wavefrontsize64.ll").find("+wavefrontsize64"), std::string::npos);
  EXPECT_EQ(test::read(out / "ids" / "gfx1100.ll").find("+wavefrontsize64"), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "ids" / "gfx1100@+wavefrontsize64.hsaco"));
  EXPECT_FALSE(fs::exists(out / "wmma" / "gfx1100@+wavefrontsize64.hsaco"));

  fs::remove_all(dir / "app-build");
  auto [bad_rc, bad_log] = configure("gfx90a:+xnack");
  EXPECT_NE(bad_rc, 0);
  std::string folded = fold_whitespace(bad_log);
  EXPECT_NE(folded.find("TARGETS 'gfx90a:+xnack': the gate compiles the features it knows a clang flag for"),
            std::string::npos) << folded;
}

// The package config finds its prefix from where it is installed: a distribution layout (prefix /usr,
// GNUInstallDirs' multiarch LIBDIR, staged with DESTDIR) must give the real bin/archdb to a consumer.
TEST(Gate, InstalledPackageConfigWorksWithAMultiarchLibdir) {
  test::TempDir dir;
  const std::string src = test::source_dir().string();
  fs::create_directories(dir / "pkg");
  test::write(dir / "pkg" / "CMakeLists.txt",
              "cmake_minimum_required(VERSION 3.20)\nproject(pkg NONE)\n"
              "include([==[" + src + "/kernels/gate/ArchdbPackage.cmake]==])\n"
              "install(PROGRAMS [==[" ARCHDB_BINARY "]==] DESTINATION ${CMAKE_INSTALL_BINDIR})\n"
              "archdb_install_package(SOURCE_DIR [==[" + src + "]==] BINARY_DIR ${CMAKE_BINARY_DIR} VERSION 0.1.0 "
              "LLVM_MAJOR 22)\n");
  const fs::path stage = dir / "stage";
  std::string log = (dir / "pkg.log").string();
  ASSERT_EQ(run("cmake -S " + (dir / "pkg").string() + " -B " + (dir / "pkg-build").string() +
                " -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu >" + log + " 2>&1 && "
                "DESTDIR=" + stage.string() + " cmake --install " + (dir / "pkg-build").string() + " >>" + log + " 2>&1"),
            0)
      << test::read(log);
  ASSERT_TRUE(fs::exists(stage / "usr/lib/x86_64-linux-gnu/cmake/archdb/archdbConfig.cmake")) << test::read(log);

  fs::create_directories(dir / "app");
  test::write(dir / "app" / "CMakeLists.txt",
              "cmake_minimum_required(VERSION 3.20)\nproject(app CXX)\n"
              "find_package(archdb CONFIG REQUIRED)\n"
              "get_target_property(exe archdb::archdb IMPORTED_LOCATION)\n"
              "message(STATUS \"archdb at ${exe}\")\n"
              "execute_process(COMMAND ${exe} --version OUTPUT_VARIABLE v RESULT_VARIABLE rc)\n"
              "if(NOT rc EQUAL 0)\n  message(FATAL_ERROR \"${exe} --version failed: ${rc}\")\nendif()\n"
              "message(STATUS \"version: ${v}\")\n"
              "if(NOT COMMAND archdb_add_gated_kernels)\n  message(FATAL_ERROR \"no gate function\")\nendif()\n");
  std::string app_log = (dir / "app.log").string();
  EXPECT_EQ(run("cmake -S " + (dir / "app").string() + " -B " + (dir / "app-build").string() + " -DCMAKE_PREFIX_PATH=" +
                (stage / "usr").string() + " >" + app_log + " 2>&1"),
            0)
      << test::read(app_log);
  std::string text = test::read(app_log);
  EXPECT_NE(text.find("archdb at " + (stage / "usr" / "bin" / "archdb").string()), std::string::npos) << text;
  EXPECT_NE(text.find("version: archdb "), std::string::npos) << text;
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
                                    "arch_absent — llvm22's clang refuses __builtin_amdgcn_mfma_f32_4x4x4bf16_1k for "
                                    "gfx1201: error: '__builtin_amdgcn_mfma_f32_4x4x4bf16_1k' needs target feature mai-insts",
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

// The MFMA column counts each function's own instructions: the reduction kernel has none, whatever the
// variant's main kernels hold.
TEST(GateReport, CountsMfmaPerFunction) {
  REQUIRE_GATE();
  auto r = test::run_archdb({"gate-report", kGateManifest.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json gate = gate_manifest();
  int reduce_rows = 0, mfma_rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.size() < 10 || !gate["kernels"].contains(f[0])) continue;
    const auto& report = gate["kernels"][f[0]]["reports"][f[1]];
    int64_t expected = 0;
    for (const auto& fn : report["kernels"])
      if (fn["name"] == f[2]) {
        const nlohmann::json mnemonics = fn.value("mnemonics", nlohmann::json::object());
        for (const auto& [m, n] : mnemonics.items())
          if (m.rfind("v_mfma", 0) == 0) expected += n.get<int64_t>();
      }
    EXPECT_EQ(f[9], expected ? std::to_string(expected) : "-") << line;
    if (f[2] == "wgrad_reduce_z") {
      EXPECT_EQ(f[9], "-") << line;
      ++reduce_rows;
    }
    mfma_rows += expected > 0;
  }
  EXPECT_GT(reduce_rows, 0);
  EXPECT_GT(mfma_rows, 0);
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
  auto by_function = count_mnemonics_by_function(listing);
  EXPECT_EQ(by_function["k"]["v_mfma_f32_4x4x4f16"], 1);
  EXPECT_EQ(by_function["j"].count("v_mfma_f32_4x4x4f16"), 0u);
  EXPECT_EQ(by_function["j"]["s_endpgm"], 1);
  auto counts = count_mnemonics(listing);
  EXPECT_EQ(counts["s_nop"], 1);
  EXPECT_EQ(counts["s_endpgm"], 2);
  EXPECT_EQ(counts["v_mfma_f32_4x4x4f16"], 1);
  EXPECT_EQ(counts.count("s_code_end"), 0u);
}

}  // namespace
}  // namespace archdb
