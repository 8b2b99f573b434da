// tests/kernels_manifest_test.cpp — the kernel manifests against the variants, the catalog, and the device
// code itself: compiled with clang++-22 (when this host has it), each variant's IR uses exactly the
// intrinsics of its manifest's keys, and the MFMA variants' code objects hold the 4x4x4 MFMA and no scratch.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <regex>
#include <sstream>
#include <set>

#include "kernels/wgrad_manifests.h"
#include "kernels/wgrad_problem.h"
#include "schema/catalog.h"
#include "support/error.h"
#include "test_support.h"

namespace archdb::kernels {
namespace {
namespace fs = std::filesystem;

fs::path kernels_dir() { return test::source_dir() / "kernels"; }

TEST(KernelsManifest, EveryVariantHasItsManifestAndNoManifestIsExtra) {
  const std::vector<KernelManifest> manifests = read_wgrad_manifests(kernels_dir() / "manifests");
  std::set<std::string> names;
  for (const KernelManifest& m : manifests) {
    const WgradVariant* v = find_variant(m.kernel);
    ASSERT_NE(v, nullptr) << m.path << " names no bundled variant";
    EXPECT_EQ(fs::path(m.path).filename().string(), fs::path(v->manifest()).filename().string());
    EXPECT_EQ(m.source, v->source) << m.path;
    EXPECT_EQ(m.defines, v->defines) << m.path;
    EXPECT_TRUE(fs::exists(kernels_dir() / m.source)) << m.path;
    EXPECT_TRUE(std::is_sorted(m.keys.begin(), m.keys.end())) << m.path;
    names.insert(m.kernel);
  }
  EXPECT_EQ(names.size(), wgrad_variants().size());
  EXPECT_EQ(wgrad_variants().size(), 12u);
}

TEST(KernelsManifest, KeysAreCatalogKeys) {
  const Catalog catalog = load_catalog((test::source_dir() / "schema" / "catalog.txt").string());
  for (const KernelManifest& m : read_wgrad_manifests(kernels_dir() / "manifests"))
    for (const std::string& key : m.keys) EXPECT_NE(catalog.find(key), nullptr) << m.path << ": " << key;
}

// The bundled manifests are read by the checker's reader, with its rules: an unknown field, a malformed key or a
// key listed twice is refused, as `archdb check --manifest` and the gate refuse it.
TEST(KernelsManifest, ReadByTheCheckersStrictReader) {
  test::TempDir dir;
  fs::create_directories(dir / "m");
  const std::string head = R"({"schema":"archdb.kernel-manifest/v1","kernel":"k","source":"wgrad_portable.hip",)";
  auto message = [&](const std::string& text) {
    test::write(dir / "m" / "k.json", text);
    try {
      read_wgrad_manifests(dir / "m");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string file = (dir / "m" / "k.json").string();
  EXPECT_EQ(message(head + R"("keys":["workitem.x"]})"), "accepted");  // defines may be left out
  EXPECT_EQ(message(head + R"("keys":["workitem.x"],"colour":"red"})"), file + ": unknown manifest field 'colour'");
  EXPECT_EQ(message(head + R"("keys":["Not A Key"]})"), file + ": 'Not A Key' is not a valid key");
  EXPECT_EQ(message(head + R"("keys":["workitem.x","workitem.x"]})"), file + ": key 'workitem.x' listed twice");
}

// ---- Against the compiler ----

// clang++-22 on PATH (or $ARCHDB_HIP_CLANG); empty when this host has none.
fs::path hip_clang() {
  if (const char* env = std::getenv("ARCHDB_HIP_CLANG")) return env;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / "clang++-22";
    if (end > start && fs::exists(candidate)) return candidate;
    start = end + 1;
  }
  return {};
}

// The LLVM tool next to the compiler (on Debian clang++-22 links into the llvm-22 bin folder, beside them).
fs::path llvm_tool(const fs::path& clang, const std::string& name) {
  return fs::canonical(clang).parent_path() / name;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Runs a shell command; returns its stdout, fails the test on a nonzero exit.
std::string run(const std::string& command, const test::TempDir& tmp) {
  const fs::path out = tmp / "stdout", err = tmp / "stderr";
  const int rc = std::system((command + " > " + quoted(out.string()) + " 2> " + quoted(err.string())).c_str());
  EXPECT_EQ(rc, 0) << command << "\n" << test::read(err);
  return test::read(out);
}

std::string compile_command(const fs::path& clang, const WgradVariant& v, const std::string& target) {
  std::string cmd = quoted(clang.string()) +
                    " -x hip --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O3 -std=c++17"
                    " --offload-arch=" + target;
  for (const auto& d : v.defines) cmd += " -D" + d;
  return cmd + " " + quoted((kernels_dir() / v.source).string());
}

// LLVM's name mangling of the overload types catalog entries use ("<4 x i16>" -> "v4i16").
std::string mangle(const std::string& type) {
  static const std::regex vec(R"(<(\d+) x (\w+)>)"), ptr(R"(ptr addrspace\((\d+)\))");
  auto scalar = [](const std::string& t) -> std::string {
    if (t == "half") return "f16";
    if (t == "bfloat") return "bf16";
    if (t == "float") return "f32";
    if (t == "double") return "f64";
    if (t == "ptr") return "p0";
    return t;  // iN
  };
  std::smatch m;
  if (std::regex_match(type, m, vec)) return "v" + m[1].str() + scalar(m[2].str());
  if (std::regex_match(type, m, ptr)) return "p" + m[1].str();
  return scalar(type);
}

// The intrinsic name a catalog key stands for, as a kernel's IR declares it.
std::string intrinsic_of(const CatalogEntry& e) {
  const DeclSpec& spec = e.spec;
  if (spec.kind == DeclSpec::Kind::kDeclare) {
    std::smatch m;
    static const std::regex name(R"(@([\w.]+)\()");
    return std::regex_search(spec.declare_text, m, name) ? m[1].str() : "";
  }
  std::string out = spec.name;
  for (const auto& t : spec.overload_types) out += "." + mangle(t);
  return out;
}

TEST(KernelsManifest, DeviceIrUsesExactlyTheManifestKeys) {
  const fs::path clang = hip_clang();
  if (clang.empty()) GTEST_SKIP() << "clang++-22 not found on PATH (or $ARCHDB_HIP_CLANG): device IR not checked";
  const Catalog catalog = load_catalog((test::source_dir() / "schema" / "catalog.txt").string());
  test::TempDir tmp;
  static const std::regex declare(R"(^declare [^@]*@(llvm\.amdgcn\.[\w.]+)\()");
  for (const KernelManifest& m : read_wgrad_manifests(kernels_dir() / "manifests")) {
    const WgradVariant& v = *find_variant(m.kernel);
    std::set<std::string> want;
    for (const auto& key : m.keys) {
      const CatalogEntry* e = catalog.find(key);
      ASSERT_NE(e, nullptr) << key;
      want.insert(intrinsic_of(*e));
    }
    // Every target of an MFMA variant; for the portable ones a wave64, a wave32 RDNA and gfx1250.
    std::vector<std::string> targets = v.targets;
    if (v.path == WgradPath::kPortable) targets = {"gfx90a", "gfx1201", "gfx1250"};
    for (const std::string& target : targets) {
      const std::string ir = run(compile_command(clang, v, target) + " -S -emit-llvm -o -", tmp);
      std::set<std::string> got;
      std::istringstream lines(ir);
      std::smatch match;
      for (std::string line; std::getline(lines, line);)
        if (std::regex_search(line, match, declare)) got.insert(match[1].str());
      EXPECT_EQ(got, want) << m.kernel << " on " << target;
    }
  }
}

TEST(KernelsManifest, MfmaCodeObjectsHoldTheMfmaAndNoScratch) {
  const fs::path clang = hip_clang();
  if (clang.empty()) GTEST_SKIP() << "clang++-22 not found on PATH (or $ARCHDB_HIP_CLANG): code objects not checked";
  const fs::path objdump = llvm_tool(clang, "llvm-objdump"), readelf = llvm_tool(clang, "llvm-readelf");
  if (!fs::exists(objdump) || !fs::exists(readelf)) GTEST_SKIP() << "no llvm-objdump/llvm-readelf next to " << clang;
  test::TempDir tmp;
  const fs::path hsaco = tmp / "k.hsaco";
  // One target each, cycling through CDNA2, CDNA3 and CDNA4.
  int i = 0;
  for (const WgradVariant& v : wgrad_variants()) {
    if (v.path == WgradPath::kPortable) continue;
    const std::string target = v.targets[i++ % v.targets.size()];
    run(compile_command(clang, v, target) + " -o " + quoted(hsaco.string()), tmp);
    const std::string disasm = run(quoted(objdump.string()) + " -d --mcpu=" + target + " " + quoted(hsaco.string()), tmp);
    const std::string mnemonic = target == "gfx90a" ? (v.dtype == kDTypeF16 ? "v_mfma_f32_4x4x4f16" : "v_mfma_f32_4x4x4bf16_1k")
                                                    : (v.dtype == kDTypeF16 ? "v_mfma_f32_4x4x4_16b_f16" : "v_mfma_f32_4x4x4_16b_bf16");
    EXPECT_NE(disasm.find(mnemonic), std::string::npos) << v.name << " on " << target;
    EXPECT_EQ(disasm.find("ds_read_b64_tr_b16") != std::string::npos, v.path == WgradPath::kMfmaTr16) << v.name;
    const std::string notes = run(quoted(readelf.string()) + " --notes " + quoted(hsaco.string()), tmp);
    static const std::regex scratch(R"(\.private_segment_fixed_size:\s+(\d+))");
    int kernels = 0;
    for (std::sregex_iterator it(notes.begin(), notes.end(), scratch), end; it != end; ++it, ++kernels)
      EXPECT_EQ((*it)[1].str(), "0") << v.name << " on " << target << " uses scratch";
    EXPECT_EQ(kernels, v.kind == WgradKind::kDepthwise ? 4 : 3) << v.name;  // the main kernels + wgrad_reduce_z
  }
}

}  // namespace
}  // namespace archdb::kernels
