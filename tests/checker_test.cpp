// tests/checker_test.cpp — the checker against the committed columns in a real SQLite file, kernel IR read by
// the real LLVM (text and bitcode), manifests, and `archdb check` end to end with its exit codes.
#include <gtest/gtest.h>

#include <llvm/AsmParser/Parser.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <thread>

#include "checker/checker.h"
#include "checker/hip_source.h"
#include "checker/ir_uses.h"
#include "llvm/toolchain.h"
#include "checker/manifest.h"
#include "db/census.h"
#include "support/compiler_flavor.h"
#include "support/error.h"
#include "test_support.h"

namespace archdb {
namespace {
namespace fs = std::filesystem;
using test::run_archdb;

// A kernel as clang emits one for the 4x4x4 bf16 MFMA: the atom, a work-item id, a generic intrinsic.
constexpr const char* kKernelIr = R"(
declare <4 x float> @llvm.amdgcn.mfma.f32.4x4x4bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32 immarg, i32 immarg, i32 immarg)
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.fmuladd.f32(float, float, float)

define amdgpu_kernel void @wgrad_dw7x7_bf16(ptr addrspace(1) %out, <4 x i16> %a, <4 x i16> %b) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %f = sitofp i32 %id to float
  %g = call float @llvm.fmuladd.f32(float %f, float %f, float %f)
  %c = insertelement <4 x float> zeroinitializer, float %g, i32 0
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.4x4x4bf16.1k(<4 x i16> %a, <4 x i16> %b, <4 x float> %c, i32 0, i32 0, i32 0)
  store <4 x float> %d, ptr addrspace(1) %out
  ret void
}
)";

class CheckerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    store_ = Store::open(*dir_ / "db.sqlite").release();
    sync_store_from_data(*store_, test::source_dir() / "data");
    sync_census_from_data(*store_, test::source_dir() / "data");
    sync_frontend_from_data(*store_, test::source_dir() / "data");
  }
  static void TearDownTestSuite() {
    delete store_;
    delete dir_;
  }
  Checker checker() const {
    return Checker(*store_, load_catalog((test::source_dir() / "schema" / "catalog.txt").string()),
                   load_targets((test::source_dir() / "schema" / "targets.txt").string()));
  }
  static CheckRequest keys(std::string target, std::vector<std::string> keys, std::string flavor = "llvm22") {
    CheckRequest r;
    r.subject = "wgrad_dw7x7_bf16";
    r.target = std::move(target);
    r.flavor = std::move(flavor);
    r.keys = std::move(keys);
    return r;
  }
  static test::TempDir* dir_;
  static Store* store_;
};
test::TempDir* CheckerTest::dir_ = nullptr;
Store* CheckerTest::store_ = nullptr;

TEST_F(CheckerTest, MfmaAtomClearedOnCdnaRefusedOnRdnaWithTheBackendsWords) {
  CheckResult on_cdna = checker().check(keys("gfx90a", {"mfma.f32.4x4x4bf16.1k", "workitem.x"}));
  EXPECT_EQ(on_cdna.verdict, Verdict::kCleared);
  EXPECT_EQ(on_cdna.headline(), "cleared: wgrad_dw7x7_bf16 on gfx90a (llvm22): 2 intrinsics, all ok");
  ASSERT_EQ(on_cdna.items.size(), 2u);
  EXPECT_EQ(on_cdna.items[0].source, "measured");
  EXPECT_NE(std::find(on_cdna.items[0].lowered_to.begin(), on_cdna.items[0].lowered_to.end(), "v_mfma_f32_4x4x4bf16_1k"),
            on_cdna.items[0].lowered_to.end());

  CheckResult on_rdna = checker().check(keys("gfx1201", {"workitem.x", "mfma.f32.4x4x4bf16.1k"}));
  EXPECT_EQ(on_rdna.verdict, Verdict::kRefused);
  EXPECT_EQ(on_rdna.headline().rfind("refused: wgrad_dw7x7_bf16 on gfx1201 (llvm22): mfma.f32.4x4x4bf16.1k is "
                                     "arch_absent — LLVM ERROR: Cannot select: intrinsic "
                                     "%llvm.amdgcn.mfma.f32.4x4x4bf16.1k",
                                     0),
            0u)
      << on_rdna.headline();
  EXPECT_EQ(on_rdna.items[0].verdict, Verdict::kCleared);
  EXPECT_EQ(on_rdna.items[1].verdict, Verdict::kRefused);
}

TEST_F(CheckerTest, NonAnswersWithholdClearanceButNeverRefuse) {
  // LLVM 22 crashes printing end.cf's i32 mask on the wave64 gfx942 (the census's cell, named as a key): no
  // answer, so no verdict either way.
  CheckResult crash = checker().check(keys("gfx942", {"workitem.x", "llvm.amdgcn.end.cf.i32"}));
  EXPECT_EQ(crash.verdict, Verdict::kUnvalidated);
  EXPECT_EQ(crash.items[1].status, "toolchain_crash");
  EXPECT_EQ(crash.items[1].source, "census");
  // One "no" decides even beside an unknown.
  CheckResult both = checker().check(keys("gfx942", {"llvm.amdgcn.end.cf.i32", "s.barrier.signal"}));
  EXPECT_EQ(both.verdict, Verdict::kRefused);
  // A processor LLVM 19 does not know is no opinion about it.
  CheckResult unknown_cpu = checker().check(keys("gfx950", {"mfma.f32.4x4x4bf16.1k"}, "llvm19"));
  EXPECT_EQ(unknown_cpu.verdict, Verdict::kUnvalidated);
  EXPECT_EQ(unknown_cpu.items[0].status, "target_unsupported");
}

TEST_F(CheckerTest, FlavorsWithoutMeasuredCellsAreUnvalidatedNamingWhy) {
  CheckResult descriptor = checker().check(keys("gfx90a", {"mfma.f32.4x4x4bf16.1k"}, "llvm20"));
  EXPECT_EQ(descriptor.verdict, Verdict::kUnvalidated);
  EXPECT_NE(descriptor.headline().find("llvm20 has a descriptor but no measured cells"), std::string::npos);
  CheckResult future = checker().check(keys("gfx90a", {"mfma.f32.4x4x4bf16.1k"}, "llvm99"));
  EXPECT_EQ(future.verdict, Verdict::kUnvalidated);
  EXPECT_NE(future.headline().find("no measured column for llvm99"), std::string::npos);
}

TEST_F(CheckerTest, UnknownTargetFlavorOrKeyIsAnError) {
  auto message = [&](const CheckRequest& r) {
    try {
      checker().check(r);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(keys("gfx9999", {"workitem.x"})).rfind("unknown target 'gfx9999' (wired targets: gfx908", 0), 0u);
  EXPECT_EQ(message(keys("gfx90a", {"workitem.x"}, "gcc12")).rfind("unknown flavor 'gcc12'", 0), 0u);
  EXPECT_EQ(message(keys("gfx90a", {"no.such.key"})).rfind("unknown key 'no.such.key'", 0), 0u);
  // A kernel that calls no target intrinsic has nothing to gate.
  CheckRequest generic_only = keys("gfx1201", {});
  generic_only.generic_intrinsics = {"llvm.fmuladd.f32"};
  EXPECT_EQ(checker().check(generic_only).verdict, Verdict::kCleared);
}

TEST_F(CheckerTest, KernelIrIsMappedToKeysByTheResolvedIntrinsic) {
  IrUses uses = scan_ir_buffer(kKernelIr, "kernel.ll");
  EXPECT_EQ(uses.target_intrinsics,
            (std::vector<std::string>{"llvm.amdgcn.mfma.f32.4x4x4bf16.1k", "llvm.amdgcn.workitem.id.x"}));
  EXPECT_EQ(uses.generic_intrinsics, (std::vector<std::string>{"llvm.fmuladd.f32"}));
  EXPECT_EQ(uses.kernels, (std::vector<std::string>{"wgrad_dw7x7_bf16"}));

  CheckRequest r;
  r.subject = uses.kernels[0];
  r.flavor = "llvm22";
  r.target = "gfx950";
  r.intrinsics = uses.target_intrinsics;
  r.generic_intrinsics = uses.generic_intrinsics;
  CheckResult result = checker().check(r);
  EXPECT_EQ(result.verdict, Verdict::kCleared);
  EXPECT_EQ(result.items[0].key, "mfma.f32.4x4x4bf16.1k");
  EXPECT_EQ(result.items[1].key, "workitem.x");
  r.target = "gfx1250";
  EXPECT_EQ(checker().check(r).verdict, Verdict::kRefused);
}

// A key with a wave64 layout (schema/catalog.txt, @wave64) answers a wave64 target's call of that layout, and its
// wave32 cell never answers that call on the wave32 processor, where the key poses another instantiation.
TEST_F(CheckerTest, AWave64CallIsAnsweredByTheKeysWave64CellOnly) {
  CheckRequest r;
  r.subject = "wmma_w64";
  r.flavor = "llvm22";
  r.target = "gfx1100:+wavefrontsize64,-wavefrontsize32";
  r.intrinsics = {"llvm.amdgcn.wmma.f32.16x16x16.f16.v4f32.v16f16"};
  CheckResult w64 = checker().check(r);
  ASSERT_EQ(w64.items.size(), 1u);
  EXPECT_EQ(w64.verdict, Verdict::kCleared) << w64.items[0].evidence;
  EXPECT_EQ(w64.items[0].key, "wmma.f32.16x16x16.f16");
  r.target = "gfx1100";
  CheckResult w32 = checker().check(r);
  ASSERT_EQ(w32.items.size(), 1u);
  EXPECT_NE(w32.verdict, Verdict::kCleared) << "the key's gfx1100 cell answers <8 x float>, not this call";
  EXPECT_NE(w32.items[0].key, "wmma.f32.16x16x16.f16");
}

TEST_F(CheckerTest, BitcodeReadsLikeText) {
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  auto module = llvm::parseAssemblyString(kKernelIr, diagnostic, context);
  ASSERT_TRUE(module);
  std::string bitcode;
  llvm::raw_string_ostream os(bitcode);
  llvm::WriteBitcodeToFile(*module, os);
  os.flush();
  IrUses from_bitcode = scan_ir_buffer(bitcode, "kernel.bc");
  IrUses from_text = scan_ir_buffer(kKernelIr, "kernel.ll");
  EXPECT_EQ(from_bitcode.target_intrinsics, from_text.target_intrinsics);
  EXPECT_EQ(from_bitcode.kernels, from_text.kernels);
}

TEST_F(CheckerTest, AnIntrinsicOutsideTheCatalogIsUnvalidated) {
  IrUses uses = scan_ir_buffer(R"(
declare i32 @llvm.amdgcn.not.a.real.one(i32)
define amdgpu_kernel void @k(ptr addrspace(1) %p) {
  %v = call i32 @llvm.amdgcn.not.a.real.one(i32 1)
  store i32 %v, ptr addrspace(1) %p
  ret void
})",
                               "k.ll");
  CheckRequest r;
  r.flavor = "llvm21";  // a column without a census: nothing lists llvm21's intrinsics (llvm22's census would)
  r.target = "gfx90a";
  r.intrinsics = uses.target_intrinsics;
  CheckResult result = checker().check(r);
  EXPECT_EQ(result.verdict, Verdict::kUnvalidated);
  EXPECT_EQ(result.items[0].status, "no_answer");
  EXPECT_NE(result.items[0].evidence.find("not in the catalog"), std::string::npos);
}

// A dead declaration is listed, not gated: only what the kernel calls decides.
TEST_F(CheckerTest, ADeclarationNothingCallsIsListedNotGated) {
  IrUses uses = scan_ir_buffer(R"(
declare <4 x float> @llvm.amdgcn.mfma.f32.4x4x4bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32 immarg, i32 immarg, i32 immarg)
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @k(ptr addrspace(1) %p) {
  %v = call i32 @llvm.amdgcn.workitem.id.x()
  store i32 %v, ptr addrspace(1) %p
  ret void
})",
                               "k.ll");
  EXPECT_EQ(uses.target_intrinsics, std::vector<std::string>{"llvm.amdgcn.workitem.id.x"});
  EXPECT_EQ(uses.declared_only, std::vector<std::string>{"llvm.amdgcn.mfma.f32.4x4x4bf16.1k"});
  CheckRequest r;
  r.flavor = "llvm22";
  r.target = "gfx1201";  // where the MFMA would be refused, were it called
  r.intrinsics = uses.target_intrinsics;
  r.declared_only = uses.declared_only;
  CheckResult result = checker().check(r);
  EXPECT_EQ(result.verdict, Verdict::kCleared);
  EXPECT_EQ(result.declared_only, uses.declared_only);
  EXPECT_EQ(result.to_json()["declared_only"][0], "llvm.amdgcn.mfma.f32.4x4x4bf16.1k");
}

// With the flavor's census, which lists every llvm.amdgcn.* intrinsic of its LLVM, a name it lacks is
// name_absent (refused); an instantiation of an intrinsic it has, but did not measure, stays unanswered.
TEST(CheckerCensus, ANameTheFlavorsLlvmLacksIsNameAbsent) {
  test::TempDir dir;
  auto store = Store::open(dir / "db.sqlite");
  sync_store_from_data(*store, test::source_dir() / "data");
  sync_census_from_data(*store, test::source_dir() / "data");
  Checker checker(*store, load_catalog((test::source_dir() / "schema" / "catalog.txt").string()),
                  load_targets((test::source_dir() / "schema" / "targets.txt").string()));
  CheckRequest r;
  r.flavor = "llvm22";
  r.target = "gfx90a";
  r.intrinsics = {"llvm.amdgcn.not.a.real.one", "llvm.amdgcn.cos.f64"};
  for (int in_memory = 0; in_memory < 2; ++in_memory) {
    ColumnIndex column = ColumnIndex::load(*store, "llvm22");
    if (in_memory) {
      column.census = CensusIndex::load(*store, "llvm22");
      column.census_store = nullptr;
    }
    CheckResult result = checker.check(r, column);
    ASSERT_EQ(result.items.size(), 2u);
    EXPECT_EQ(result.items[0].status, "name_absent") << in_memory;
    EXPECT_EQ(result.items[0].verdict, Verdict::kRefused);
    EXPECT_NE(result.items[0].evidence.find("not an intrinsic of llvm22's LLVM"), std::string::npos);
    EXPECT_EQ(result.items[1].status, "no_answer") << in_memory;
    EXPECT_EQ(result.verdict, Verdict::kRefused);
  }
}

// A kernel's "target-features" against its own "target-cpu", as LLVM's subtarget tables compute them: the
// features a processor has anyway (clang lists them all) are no difference; wave64 on gfx1100 is one.
std::string kernel_with_features(const std::string& cpu, const std::string& features) {
  return "declare i32 @llvm.amdgcn.workitem.id.x()\n"
         "define amdgpu_kernel void @k(ptr addrspace(1) %p) #0 {\n"
         "  %x = call i32 @llvm.amdgcn.workitem.id.x()\n  store i32 %x, ptr addrspace(1) %p\n  ret void\n}\n"
         "attributes #0 = { \"target-cpu\"=\"" + cpu + "\" \"target-features\"=\"" + features + "\" }\n";
}

TEST(IrUses, FeaturesBeyondTheProcessorsOwnAreFound) {
  EXPECT_EQ(scan_ir_buffer(kernel_with_features("gfx1100", "+wavefrontsize32"), "k.ll").added_features,
            std::vector<std::string>{});
  EXPECT_EQ(scan_ir_buffer(kernel_with_features("gfx90a", "+wavefrontsize64,+mai-insts,+gfx90a-insts"), "k.ll").added_features,
            std::vector<std::string>{});
  std::vector<std::string> wave64 = scan_ir_buffer(kernel_with_features("gfx1100", "+wavefrontsize64"), "k.ll").added_features;
  EXPECT_NE(std::find(wave64.begin(), wave64.end(), "+wavefrontsize64"), wave64.end()) << ::testing::PrintToString(wave64);
  EXPECT_EQ(scan_ir_buffer(kernel_with_features("gfx90a", "+xnack"), "k.ll").added_features,
            std::vector<std::string>{"+xnack"});
  EXPECT_EQ(scan_ir_buffer(kKernelIr, "kernel.ll").added_features, std::vector<std::string>{}) << "no attributes";
}

TEST(IrUses, BrokenIrIsOneLineNamingFileAndLine) {
  try {
    scan_ir_buffer("define void @f() {\n  %x = add i32 1\n}\n", "broken.ll");
    FAIL() << "broken IR was accepted";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("broken.ll:3:1: not valid LLVM IR: expected ','", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_THROW(scan_ir_buffer(std::string("BC\xC0\xDE garbage", 12), "garbage.bc"), Error);
  // Parses, but does not verify: a call whose type is not the callee's.
  EXPECT_THROW(scan_ir_buffer("declare i32 @llvm.amdgcn.workitem.id.x()\n"
                              "define void @f() {\n  %x = call i64 @llvm.amdgcn.workitem.id.x()\n  ret void\n}\n",
                              "mismatch.ll"),
               Error);
}

TEST_F(CheckerTest, ManifestDriftNamesTheUnlistedIntrinsic) {
  IrUses uses = scan_ir_buffer(kKernelIr, "kernel.ll");
  ColumnIndex column = ColumnIndex::load(*store_, "llvm22");
  Catalog catalog = load_catalog((test::source_dir() / "schema" / "catalog.txt").string());
  EXPECT_TRUE(manifest_drift(uses.target_intrinsics, {"mfma.f32.4x4x4bf16.1k", "workitem.x"}, column, catalog).empty());
  auto drift = manifest_drift(uses.target_intrinsics, {"mfma.f32.4x4x4bf16.1k"}, column, catalog);
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_EQ(drift[0], "llvm.amdgcn.workitem.id.x is used but its key workitem.x is not in the manifest");
  // Without a column the catalog's plain names still map.
  EXPECT_TRUE(manifest_drift(uses.target_intrinsics, {"mfma.f32.4x4x4bf16.1k", "workitem.x"}, ColumnIndex{}, catalog).empty());
}

TEST(Manifest, MalformedManifestsAreRefusedNamingFileAndField) {
  auto message = [](const std::string& text) {
    try {
      parse_manifest(text, "m.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string head = R"({"schema":"archdb.kernel-manifest/v1","kernel":"k","source":"k.hip",)";
  EXPECT_EQ(message(head + R"("keys":["workitem.x"]})"), "accepted");
  EXPECT_EQ(message("{"), "m.json: not JSON: " + message("{").substr(std::string("m.json: not JSON: ").size()));
  EXPECT_EQ(message(head + R"("keys":[]})"), "m.json: manifest field 'keys' is empty");
  EXPECT_EQ(message(head + R"("keys":"workitem.x"})"), "m.json: manifest field 'keys' must be a list of strings");
  EXPECT_EQ(message(head + R"("keys":["a","a"]})"), "m.json: key 'a' listed twice");
  EXPECT_EQ(message(head + R"("keys":["Bad Key"]})"), "m.json: 'Bad Key' is not a valid key");
  EXPECT_EQ(message(head + R"("keys":["a"],"extra":1})"), "m.json: unknown manifest field 'extra'");
  EXPECT_EQ(message(R"({"schema":"v0","kernel":"k","source":"s","keys":["a"]})"),
            "m.json: manifest 'schema' must be \"archdb.kernel-manifest/v1\"");
}

TEST(CompilerFlavor, FromVersionText) {
  EXPECT_EQ(flavor_from_version_text("Debian clang version 22.1.8 (++20250101-1~exp1)\nTarget: x86_64"), "llvm22");
  EXPECT_EQ(flavor_from_version_text("AMD clang version 20.0.0git (https://github.com/ROCm/llvm-project roc-7.1.0)"),
            "llvm20");
  EXPECT_EQ(flavor_from_version_text("LLVM (http://llvm.org/):\n  LLVM version 19.1.7\n"), "llvm19");
  EXPECT_EQ(flavor_from_version_text("gcc (Debian 12.2.0-14) 12.2.0"), std::nullopt);
  EXPECT_THROW(flavor_of_compiler("/nonexistent/clang"), Error);
  if (fs::exists("/usr/bin/clang-22")) {
    EXPECT_EQ(flavor_of_compiler("/usr/bin/clang-22"), "llvm22");
  }
}

// `archdb check` end to end: exit codes, JSON, --warn-only, files.
struct CheckCli : ::testing::Test {
  test::TempDir dir;
  test::RunResult check(std::vector<std::string> args) {
    std::vector<std::string> all = {"--db", (dir / "db.sqlite").string(), "--data", (test::source_dir() / "data").string(),
                                    "check"};
    all.insert(all.end(), args.begin(), args.end());
    return run_archdb(all);
  }
};

TEST_F(CheckCli, ExitCodesSayClearedRefusedUnvalidatedOrError) {
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm22", "--keys", "mfma.f32.4x4x4bf16.1k"}).exit_code, 0);
  auto refused = check({"--target", "gfx1201", "--flavor", "llvm22", "--keys", "mfma.f32.4x4x4bf16.1k"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find("refused: (keys) on gfx1201 (llvm22): mfma.f32.4x4x4bf16.1k is arch_absent"), std::string::npos)
      << refused.out;
  EXPECT_EQ(check({"--target", "gfx942", "--flavor", "llvm22", "--keys", "llvm.amdgcn.end.cf.i32"}).exit_code, 2);
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm20", "--keys", "workitem.x"}).exit_code, 2);
  auto unknown = check({"--target", "gfx9999", "--flavor", "llvm22", "--keys", "workitem.x"});
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_EQ(unknown.err.rfind("archdb: unknown target 'gfx9999'", 0), 0u) << unknown.err;
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm22", "--keys", "nope"}).exit_code, 3);
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm22", "--bogus-flag"}).exit_code, 3);
  EXPECT_EQ(check({"--target", "gfx90a", "--keys", "workitem.x"}).exit_code, 3);  // no flavor
  // Several targets: the most severe verdict decides.
  EXPECT_EQ(check({"--target", "gfx90a", "--target", "gfx1201", "--flavor", "llvm22", "--keys", "mfma.f32.4x4x4bf16.1k"})
                .exit_code,
            1);
}

// Many kernels on many targets in one process: every bundled manifest (named in a @LIST) on three targets.
// Each pair's answer is the one a process of its own gives; --json-dir keeps one file a kernel, rewritten only
// when its answers change.
TEST_F(CheckCli, ManyManifestsOnManyTargetsInOneProcessAnswerAsOneAPair) {
  std::vector<std::string> manifests;
  std::string list;
  for (const auto& e : fs::directory_iterator(test::source_dir() / "kernels" / "manifests"))
    if (e.path().extension() == ".json") manifests.push_back(e.path().string());
  std::sort(manifests.begin(), manifests.end());
  ASSERT_GE(manifests.size(), 6u);
  for (const auto& m : manifests) list += m + "\n";
  test::write(dir / "manifests.txt", "# the bundled kernels\n" + list);
  const std::vector<std::string> targets = {"gfx90a", "gfx1201", "gfx950"};
  std::vector<std::string> args = {"--flavor", "llvm22", "--manifest", "@" + (dir / "manifests.txt").string(), "--json",
                                   "--json-dir", (dir / "answers").string()};
  for (const auto& t : targets) args.insert(args.end(), {"--target", t});
  auto batch = check(args);
  EXPECT_EQ(batch.exit_code, 1) << batch.err;  // MFMA kernels are refused on gfx1201
  nlohmann::json all = nlohmann::json::parse(batch.out);
  ASSERT_EQ(all.size(), manifests.size() * targets.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& manifest = manifests[i / targets.size()];
    const std::string& target = targets[i % targets.size()];
    EXPECT_EQ(all[i]["manifest"], manifest);
    EXPECT_EQ(all[i]["target"], target);
    auto alone = check({"--flavor", "llvm22", "--manifest", manifest, "--target", target, "--json"});
    nlohmann::json one = nlohmann::json::parse(alone.out);
    one["manifest"] = manifest;
    EXPECT_EQ(all[i], one) << manifest << " on " << target;
    nlohmann::json file = nlohmann::json::parse(test::read(dir / "answers" / (all[i]["subject"].get<std::string>() + ".json")));
    EXPECT_EQ(file[target], all[i]);
  }
  // The same answers again: no file is written.
  fs::path first = dir / "answers" / (all[0]["subject"].get<std::string>() + ".json");
  auto written = fs::last_write_time(first);
  fs::last_write_time(first, written - std::chrono::hours(1));
  auto stamp = fs::last_write_time(first);
  EXPECT_EQ(check(args).exit_code, 1);
  EXPECT_EQ(fs::last_write_time(first), stamp) << "an unchanged answer was rewritten";

  // One kernel named by two manifests cannot have one file; the IR of one kernel goes with one manifest.
  test::write(dir / "twice.txt", manifests[0] + "\n" + manifests[0] + "\n");
  auto twice = check({"--flavor", "llvm22", "--manifest", "@" + (dir / "twice.txt").string(), "--target", "gfx90a",
                      "--json-dir", (dir / "twice").string()});
  EXPECT_EQ(twice.exit_code, 3);
  EXPECT_NE(twice.err.find("is named by"), std::string::npos) << twice.err;
  EXPECT_FALSE(fs::exists(dir / "twice"));
  auto ir = check({"--flavor", "llvm22", "--manifest", manifests[0], "--manifest", manifests[1], "--target", "gfx90a",
                   "--ir", (dir / "manifests.txt").string()});
  EXPECT_EQ(ir.exit_code, 3);
  EXPECT_NE(ir.err.find("--ir goes with one manifest"), std::string::npos) << ir.err;
  auto empty = check({"--flavor", "llvm22", "--manifest", "@" + (dir / "none.txt").string(), "--target", "gfx90a"});
  EXPECT_EQ(empty.exit_code, 3);
  EXPECT_NE(empty.err.find("none.txt"), std::string::npos) << empty.err;
}

// A wave64 kernel of gfx1100 (-mwavefrontsize64): its WMMA is the wave64 form (an f16 accumulator of <8 x half>,
// no catalog key's), which the plain processor refuses. Its target-features make the question gfx1100 with
// wave64, which this build measures on demand (the kernel's own declaration, in an isolated worker): the
// instruction, cleared. A flavor this build does not link cannot measure it: a non-answer naming the features,
// never the plain answer.
std::string wave64_wmma_kernel(const std::string& features) {
  return "declare <8 x half> @llvm.amdgcn.wmma.f16.16x16x16.f16.v8f16.v16f16(<16 x half>, <16 x half>, <8 x half>, i1 immarg)\n"
         "define amdgpu_kernel void @k(ptr addrspace(1) %p) #0 {\n"
         "  %a = load <16 x half>, ptr addrspace(1) %p\n  %c = load <8 x half>, ptr addrspace(1) %p\n"
         "  %d = call <8 x half> @llvm.amdgcn.wmma.f16.16x16x16.f16.v8f16.v16f16(<16 x half> %a, <16 x half> %a, "
         "<8 x half> %c, i1 0)\n"
         "  store <8 x half> %d, ptr addrspace(1) %p\n  ret void\n}\n"
         "attributes #0 = { \"target-cpu\"=\"gfx1100\" \"target-features\"=\"" + features + "\" }\n";
}

TEST_F(CheckCli, AKernelsTargetFeaturesAreMeasuredOnDemandNotAnsweredByThePlainProcessor) {
  test::write(dir / "wave64.ll", wave64_wmma_kernel("+wavefrontsize64"));
  test::write(dir / "wave32.ll", wave64_wmma_kernel("+wavefrontsize32"));
  auto plain = check({"--target", "gfx1100", "--flavor", "llvm22", (dir / "wave32.ll").string()});
  EXPECT_EQ(plain.exit_code, 1) << plain.out << plain.err;  // the wave64 form on a wave32 kernel: refused
  if (linked_toolchain().flavor() == "llvm22") {
    auto r = check({"--target", "gfx1100", "--flavor", "llvm22", "--json", (dir / "wave64.ll").string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["target"].get<std::string>().rfind("gfx1100:+wavefrontsize64", 0), 0u) << j["target"];
    EXPECT_NE(std::find(j["added_features"].begin(), j["added_features"].end(), "+wavefrontsize64"), j["added_features"].end());
    ASSERT_EQ(j["items"].size(), 1u);
    EXPECT_EQ(j["items"][0]["source"], "on_demand");
    EXPECT_NE(j["items"][0]["lowered_to"].dump().find("v_wmma_f16_16x16x16_f16"), std::string::npos) << j.dump();
    // The same question by name: the target with its features, answered from the cell measured above.
    auto named = check({"--target", "gfx1100:+wavefrontsize64", "--flavor", "llvm22", (dir / "wave64.ll").string()});
    EXPECT_EQ(named.exit_code, 0) << named.out << named.err;
  }
  auto other = check({"--target", "gfx1100", "--flavor", "llvm23", "--json", (dir / "wave64.ll").string()});
  EXPECT_EQ(other.exit_code, 2) << other.out << other.err;
  nlohmann::json o = nlohmann::json::parse(other.out);
  EXPECT_EQ(o["items"][0]["status"], "no_answer");
  // llvm23's columns cover gfx1100 with wave64 (a wired target), its census does not: not answered here.
  EXPECT_EQ(o["target"].get<std::string>().rfind("gfx1100:+wavefrontsize64", 0), 0u) << o.dump();
  EXPECT_NE(o["items"][0]["evidence"].get<std::string>().find("measures it on demand"), std::string::npos) << o.dump();
  // A wired target with features is answered from the columns for a key, posed in the layout the target uses
  // (the key's @wave64 spec: <4 x float>), as wave32 gfx1100 is in its own.
  auto key_wave64 = check({"--target", "gfx1100:+wavefrontsize64", "--flavor", "llvm22", "--keys", "wmma.f32.16x16x16.f16", "--json"});
  EXPECT_EQ(key_wave64.exit_code, 0) << key_wave64.out << key_wave64.err;
  EXPECT_EQ(nlohmann::json::parse(key_wave64.out)["items"][0]["intrinsic"], "llvm.amdgcn.wmma.f32.16x16x16.f16.v4f32.v16f16")
      << key_wave64.out;
  auto key_wave32 = check({"--target", "gfx1100", "--flavor", "llvm22", "--keys", "wmma.f32.16x16x16.f16"});
  EXPECT_EQ(key_wave32.exit_code, 0) << key_wave32.out << key_wave32.err;
  // Features as a user writes them: LLVM's -mattr form or a target ID's; an unknown one is an error naming it.
  auto bad = check({"--target", "gfx1100:+nosuch", "--flavor", "llvm22", "--keys", "workitem.x"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("'nosuch' is not a feature"), std::string::npos) << bad.err;
  auto default_feature = check({"--target", "gfx90a:+wavefrontsize64", "--flavor", "llvm22", "--keys", "workitem.x"});
  EXPECT_NE(default_feature.out.find("on gfx90a (llvm22)"), std::string::npos) << default_feature.out;  // gfx90a's own
}

// LLVM's own spellings of a processor (its table's aliases) name the processor the columns call gfxN: the
// answer is the canonical processor's, and output names it so.
TEST_F(CheckCli, LlvmsProcessorAliasesAreAnsweredAsTheirGfxNames) {
  auto tahiti = check({"--target", "tahiti", "--flavor", "llvm22", "--keys", "workitem.x"});
  EXPECT_EQ(tahiti.exit_code, 0) << tahiti.err;
  EXPECT_NE(tahiti.out.find("on gfx600 (llvm22)"), std::string::npos) << tahiti.out;
  auto fiji = check({"--target", "fiji", "--flavor", "llvm22", "--keys", "mfma.f32.4x4x4bf16.1k", "--json"});
  EXPECT_EQ(fiji.exit_code, 1) << fiji.out << fiji.err;  // gfx803 has no MFMA: refused, from the census
  EXPECT_EQ(nlohmann::json::parse(fiji.out)["target"], "gfx803") << fiji.out;
  // A build gate reads answers by the target it was given: --json-dir keys them so, each naming the processor.
  fs::path manifest = test::source_dir() / "kernels" / "manifests" / "wgrad_dw_portable_f16.json";
  auto gate = check({"--target", "fiji", "--target", "gfx90a", "--flavor", "llvm22", "--manifest", manifest.string(),
                     "--json-dir", (dir / "answers").string()});
  EXPECT_LE(gate.exit_code, 2) << gate.err;
  nlohmann::json answers = nlohmann::json::parse(test::read(dir / "answers" / "wgrad_dw_portable_f16.json"));
  EXPECT_EQ(answers["fiji"]["target"], "gfx803") << answers.dump();
  EXPECT_EQ(answers["gfx90a"]["target"], "gfx90a");
  auto unknown = check({"--target", "tahitii", "--flavor", "llvm22", "--keys", "workitem.x"});
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_EQ(unknown.err.rfind("archdb: unknown target 'tahitii'", 0), 0u) << unknown.err;
}

// IR that crashes LLVM, nests without bound or is empty: exit 3 and one line naming the file, as the service's
// 422 says it (tests/ir_reader_test.cpp has the reader itself). A positional file after --target is the IR.
TEST_F(CheckCli, HostileOrEmptyIrIsExit3NamingTheFile) {
  // LLVM 22 traps on this flipped bit (flip-7852 dereferences a wild pointer instead, whose outcome depends on where
  // the command line's arguments put the heap: a reading, or a crash, from run to run).
  fs::path crash = test::source_dir() / "tests/fixtures/hostile/wgrad_dw_mfma_bf16.flip-4637.bc";
  auto crashed = check({"--flavor", "llvm22", "--target", "gfx90a", crash.string()});
  EXPECT_EQ(crashed.exit_code, 3);
  EXPECT_EQ(crashed.err, "archdb: " + crash.string() + ": LLVM crashed reading it (signal 5, SIGTRAP)\n");
  EXPECT_EQ(crashed.out, "");

  test::write(dir / "nested.ll", "%t = type " + std::string(30000, '{') + "i32" + std::string(30000, '}') + "\n");
  auto nested = check({"--flavor", "llvm22", "--target", "gfx90a", (dir / "nested.ll").string()});
  EXPECT_EQ(nested.exit_code, 3);
  EXPECT_EQ(nested.err, "archdb: " + (dir / "nested.ll").string() +
                            ":1: the IR nests brackets more than 256 deep; refused before LLVM reads it\n");

  test::write(dir / "empty.ll", "");
  auto empty = check({"--flavor", "llvm22", "--target", "gfx90a", "--json", (dir / "empty.ll").string()});
  EXPECT_EQ(empty.exit_code, 3);
  EXPECT_EQ(empty.err, "archdb: " + (dir / "empty.ll").string() + ": the IR is empty\n");
}

// A parallel build's first checks create the database together: every one of them must answer.
TEST_F(CheckCli, ConcurrentChecksOnANewDatabaseAllAnswer) {
  std::vector<test::RunResult> results(6);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      results[i] = check({"--target", i % 2 ? "gfx90a" : "gfx1201", "--flavor", "llvm22", "--keys", "mfma.f32.4x4x4bf16.1k"});
    });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i].exit_code, i % 2 ? 0 : 1) << results[i].err;
}

TEST_F(CheckCli, WarnOnlyReportsButPasses) {
  auto r = check({"--target", "gfx1201", "--flavor", "llvm22", "--keys", "mfma.f32.4x4x4bf16.1k", "--warn-only"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("archdb: warning: refused: (keys) on gfx1201"), std::string::npos) << r.err;
}

TEST_F(CheckCli, IrFileJsonAndCompilerFlavor) {
  test::write(dir / "k.ll", kKernelIr);
  std::vector<std::string> flavor = {"--flavor", "llvm22"};
  if (fs::exists("/usr/bin/clang-22")) flavor = {"--compiler", "/usr/bin/clang-22"};
  std::vector<std::string> args = {"--target", "gfx1201", "--json", (dir / "k.ll").string()};
  args.insert(args.end(), flavor.begin(), flavor.end());
  auto r = check(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "refused");
  EXPECT_EQ(j["flavor"], "llvm22");
  EXPECT_EQ(j["subject"], "wgrad_dw7x7_bf16");
  EXPECT_EQ(j["items"][0]["key"], "mfma.f32.4x4x4bf16.1k");
  EXPECT_EQ(j["items"][0]["status"], "arch_absent");
  EXPECT_EQ(j["generic_intrinsics"][0], "llvm.fmuladd.f32");

  test::write(dir / "broken.ll", "define void @f( {");
  auto broken = check({"--target", "gfx90a", "--flavor", "llvm22", (dir / "broken.ll").string()});
  EXPECT_EQ(broken.exit_code, 3);
  EXPECT_NE(broken.err.find("broken.ll:1:"), std::string::npos) << broken.err;
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm22", (dir / "missing.ll").string()}).exit_code, 3);
}

TEST_F(CheckCli, ManifestWithIrFailsOnDrift) {
  test::write(dir / "k.ll", kKernelIr);
  test::write(dir / "full.json", R"({"schema":"archdb.kernel-manifest/v1","kernel":"wgrad_dw7x7_bf16","source":"k.hip",
    "keys":["mfma.f32.4x4x4bf16.1k","workitem.x"]})");
  test::write(dir / "stale.json", R"({"schema":"archdb.kernel-manifest/v1","kernel":"wgrad_dw7x7_bf16","source":"k.hip",
    "keys":["mfma.f32.4x4x4bf16.1k"]})");
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm22", "--manifest", (dir / "full.json").string()}).exit_code, 0);
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm22", "--manifest", (dir / "full.json").string(), "--ir",
                   (dir / "k.ll").string()})
                .exit_code,
            0);
  test::write(dir / "unknown.json", R"({"schema":"archdb.kernel-manifest/v1","kernel":"k","source":"k.hip",
    "keys":["mfma.f32.4x4x4bf16.1k","workitem.x","no.such.key"]})");
  auto unknown = check({"--target", "gfx90a", "--flavor", "llvm22", "--manifest", (dir / "unknown.json").string(), "--ir",
                        (dir / "k.ll").string()});
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_NE(unknown.err.find("unknown.json: unknown key 'no.such.key'"), std::string::npos) << unknown.err;
  auto stale = check({"--target", "gfx90a", "--flavor", "llvm22", "--manifest", (dir / "stale.json").string(), "--ir",
                      (dir / "k.ll").string()});
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_NE(stale.out.find("drift: wgrad_dw7x7_bf16: llvm.amdgcn.workitem.id.x is used but its key workitem.x"),
            std::string::npos)
      << stale.out;
  // The verdict says so too, in text and JSON alike: drift is a refusal, never "cleared" beside it.
  EXPECT_NE(stale.out.find("refused: wgrad_dw7x7_bf16 on gfx90a (llvm22): manifest drift — "
                           "llvm.amdgcn.workitem.id.x is used but its key workitem.x is not in the manifest"),
            std::string::npos)
      << stale.out;
  EXPECT_EQ(stale.out.find("cleared:"), std::string::npos) << stale.out;
  auto json = check({"--target", "gfx90a", "--flavor", "llvm22", "--manifest", (dir / "stale.json").string(), "--ir",
                     (dir / "k.ll").string(), "--json"});
  EXPECT_EQ(json.exit_code, 1);
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["verdict"], "refused");
  EXPECT_EQ(j["drift"].size(), 1u);
  EXPECT_NE(j["message"].get<std::string>().find("manifest drift"), std::string::npos) << j["message"];
  // No drift: an empty list, and the items' verdict.
  auto clean = nlohmann::json::parse(check({"--target", "gfx90a", "--flavor", "llvm22", "--manifest",
                                            (dir / "full.json").string(), "--ir", (dir / "k.ll").string(), "--json"})
                                         .out);
  EXPECT_EQ(clean["verdict"], "cleared");
  EXPECT_TRUE(clean["drift"].empty());
}

// Another target's intrinsics are never "target-independent": LLVM's own table says whose they are.
constexpr const char* kForeignIr = R"(
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.x86.sse2.pause()
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.memset.p1.i64(ptr addrspace(1), i8, i64, i1 immarg)

define amdgpu_kernel void @ported(ptr addrspace(1) %out) {
  %a = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.amdgcn.workitem.id.x()
  call void @llvm.x86.sse2.pause()
  call void @llvm.memset.p1.i64(ptr addrspace(1) %out, i8 0, i64 4, i1 false)
  %s = add i32 %a, %b
  store i32 %s, ptr addrspace(1) %out
  ret void
}
)";

TEST_F(CheckerTest, AnotherTargetsIntrinsicsAreRefused) {
  EXPECT_EQ(foreign_target_of("llvm.nvvm.read.ptx.sreg.tid.x"), "nvvm");
  EXPECT_EQ(foreign_target_of("llvm.x86.sse2.pause"), "x86");
  EXPECT_EQ(foreign_target_of("llvm.aarch64.neon.fmax"), "aarch64");
  EXPECT_EQ(foreign_target_of("llvm.nvvm.no.such.intrinsic"), "nvvm");  // a target prefix LLVM has
  EXPECT_EQ(foreign_target_of("llvm.amdgcn.workitem.id.x"), std::nullopt);
  EXPECT_EQ(foreign_target_of("llvm.r600.read.tidig.x"), std::nullopt);
  EXPECT_EQ(foreign_target_of("llvm.memset.p1.i64"), std::nullopt);
  EXPECT_EQ(foreign_target_of("llvm.experimental.vector.reduce.add"), std::nullopt);

  IrUses uses = scan_ir_buffer(kForeignIr, "ported.ll");
  EXPECT_EQ(uses.target_intrinsics, (std::vector<std::string>{"llvm.amdgcn.workitem.id.x",
                                                              "llvm.nvvm.read.ptx.sreg.tid.x", "llvm.x86.sse2.pause"}));
  EXPECT_EQ(uses.generic_intrinsics, (std::vector<std::string>{"llvm.memset.p1.i64"}));
  CheckRequest r;
  r.subject = "ported";
  r.flavor = "llvm22";
  r.target = "gfx90a";
  r.intrinsics = uses.target_intrinsics;
  CheckResult result = checker().check(r);
  EXPECT_EQ(result.verdict, Verdict::kRefused);
  ASSERT_EQ(result.items.size(), 3u);
  EXPECT_EQ(result.items[0].verdict, Verdict::kCleared);
  EXPECT_EQ(result.items[1].status, "foreign_target");
  EXPECT_EQ(result.items[1].source, "llvm");
  EXPECT_EQ(result.items[1].verdict, Verdict::kRefused);
  EXPECT_NE(result.items[1].evidence.find("intrinsic of LLVM's 'nvvm' target"), std::string::npos)
      << result.items[1].evidence;
  EXPECT_NE(result.items[2].evidence.find("'x86'"), std::string::npos) << result.items[2].evidence;
  EXPECT_EQ(result.headline().rfind("refused: ported on gfx90a (llvm22): llvm.nvvm.read.ptx.sreg.tid.x is "
                                    "foreign_target — ",
                                    0),
            0u)
      << result.headline();
  // Whatever the column: a descriptor flavor refuses it too.
  r.flavor = "llvm20";
  EXPECT_EQ(checker().check(r).verdict, Verdict::kRefused);
}

TEST_F(CheckCli, ForeignIntrinsicsRefuseTheKernel) {
  test::write(dir / "ported.ll", kForeignIr);
  auto r = check({"--target", "gfx942", "--flavor", "llvm22", (dir / "ported.ll").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("foreign_target"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("target-independent (not gated): llvm.memset.p1.i64\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("not gated): llvm.nvvm"), std::string::npos) << r.out;
}

// What is not a regular file is not read as an empty one.
TEST_F(CheckCli, ADirectoryIsNoIrFile) {
  fs::create_directories(dir / "kernel.ll");
  auto r = check({"--target", "gfx90a", "--flavor", "llvm22", (dir / "kernel.ll").string()});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(r.err, "archdb: " + (dir / "kernel.ll").string() + ": cannot read: a directory, not a regular file\n");
  fs::create_directories(dir / "m.json");
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm22", "--manifest", (dir / "m.json").string()}).exit_code, 3);
  // The same reader serves every command: a directory as the catalog is an error there too.
  auto catalog = run_archdb({"--db", (dir / "db.sqlite").string(), "--catalog", dir.path().string(), "check", "--target",
                             "gfx90a", "--flavor", "llvm22", "--keys", "workitem.x"});
  EXPECT_EQ(catalog.exit_code, 3);
  EXPECT_NE(catalog.err.find("cannot read: a directory"), std::string::npos) << catalog.err;
}

// An explicit --flavor the database knows nothing about is an error naming the known ones; a flavor derived
// from a compiler is asked as it is (no column: unvalidated).
TEST_F(CheckCli, UnknownExplicitFlavorIsAnErrorButACompilersIsUnvalidated) {
  auto r = check({"--target", "gfx90a", "--flavor", "llvm222", "--keys", "workitem.x"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err.rfind("archdb: unknown flavor 'llvm222' (known: llvm19, llvm20, llvm21, llvm22, llvm23", 0), 0u) << r.err;
  EXPECT_EQ(check({"--target", "gfx90a", "--flavor", "llvm222", "--keys", "workitem.x", "--warn-only"}).exit_code, 3);
  test::write(dir / "clang-222", "#!/bin/sh\necho 'clang version 222.0.0 (future)'\n");
  fs::permissions(dir / "clang-222", fs::perms::owner_all);
  auto derived = check({"--target", "gfx90a", "--compiler", (dir / "clang-222").string(), "--keys", "workitem.x"});
  EXPECT_EQ(derived.exit_code, 2) << derived.err;
  EXPECT_NE(derived.out.find("unvalidated: (keys) on gfx90a (llvm222): workitem.x is no_answer — no measured column for llvm222"),
            std::string::npos)
      << derived.out;
}

TEST_F(CheckCli, ACompilerThatNamesNoVersionIsAnError) {
  test::write(dir / "cc", "#!/bin/sh\necho 'a compiler of some kind'\n");
  fs::permissions(dir / "cc", fs::perms::owner_all);
  auto r = check({"--target", "gfx90a", "--compiler", (dir / "cc").string(), "--keys", "workitem.x"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "archdb: compiler '" + (dir / "cc").string() + "' --version names no clang or LLVM version\n");
  test::write(dir / "failing", "#!/bin/sh\nexit 7\n");
  fs::permissions(dir / "failing", fs::perms::owner_all);
  auto failing = check({"--target", "gfx90a", "--compiler", (dir / "failing").string(), "--keys", "workitem.x"});
  EXPECT_EQ(failing.exit_code, 3);
  EXPECT_NE(failing.err.find("--version failed"), std::string::npos) << failing.err;
}

// A processor the catalog does not wire but the flavor's census covers is answered from census cells.
TEST_F(CheckerTest, ACensusProcessorIsAnsweredFromTheCensus) {
  sync_census_from_data(*store_, test::source_dir() / "data");
  ColumnIndex column = ColumnIndex::load(*store_, "llvm22");
  ASSERT_TRUE(std::binary_search(column.census_processors.begin(), column.census_processors.end(), "gfx600"));
  CheckResult r = checker().check(keys("gfx600", {"workitem.x"}), column);
  EXPECT_EQ(r.verdict, Verdict::kCleared) << r.headline();
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].source, "census");
  EXPECT_EQ(r.items[0].key, "workitem.x");
  EXPECT_EQ(r.items[0].intrinsic, "llvm.amdgcn.workitem.id.x");
  // The MFMA atom is census-answered too: gfx600 has no MFMA.
  CheckResult mfma = checker().check(keys("gfx600", {"mfma.f32.4x4x4bf16.1k"}), column);
  EXPECT_EQ(mfma.verdict, Verdict::kRefused) << mfma.headline();
  EXPECT_EQ(mfma.items[0].status, "arch_absent");
  EXPECT_EQ(mfma.items[0].source, "census");
}

TEST_F(CheckCli, ACensusProcessorThroughTheCommandLine) {
  auto r = check({"--target", "gfx600", "--flavor", "llvm22", "--keys", "workitem.x", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["items"][0]["source"], "census");
  auto unknown = check({"--target", "gfx9999", "--flavor", "llvm22", "--keys", "workitem.x"});
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_NE(unknown.err.find("llvm22's census also has: gfx10-1-generic"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("gfx600"), std::string::npos) << unknown.err;
  // A flavor without a census knows only the wired targets.
  auto llvm19 = check({"--target", "gfx600", "--flavor", "llvm19", "--keys", "workitem.x"});
  EXPECT_EQ(llvm19.exit_code, 3);
  EXPECT_EQ(llvm19.err.find("census"), std::string::npos) << llvm19.err;
}


}  // namespace
}  // namespace archdb

namespace archdb {
namespace {

// A kernel's call of the gfx908 buffer atomic, its result stored (`use`) or left unused, its data `divergent`
// (mixed with the work-item id) or a kernel argument (uniform).
std::string fadd_kernel(bool use, bool divergent) {
  std::string ir =
      "declare float @llvm.amdgcn.raw.ptr.buffer.atomic.fadd.f32(float, ptr addrspace(8), i32, i32, i32 immarg)\n"
      "declare i32 @llvm.amdgcn.workitem.id.x()\n"
      "define amdgpu_kernel void @accumulate(ptr addrspace(8) %rsrc, ptr addrspace(1) %out, float %v) #0 {\n"
      "  %id = call i32 @llvm.amdgcn.workitem.id.x()\n";
  ir += divergent ? "  %f = sitofp i32 %id to float\n  %x = fadd float %v, %f\n" : "  %x = fadd float %v, 1.0\n";
  ir += "  %old = call float @llvm.amdgcn.raw.ptr.buffer.atomic.fadd.f32(float %x, ptr addrspace(8) %rsrc, i32 0, i32 0, i32 0)\n";
  if (use) ir += "  store float %old, ptr addrspace(1) %out\n";
  ir += "  ret void\n}\nattributes #0 = { \"target-cpu\"=\"gfx908\" }\n";
  return ir;
}

TEST(IrUses, EachCallIsPosedAsTheKernelCallsIt) {
  IrUses used = scan_ir_buffer(fadd_kernel(true, true), "used.ll");
  ASSERT_EQ(used.calls.size(), 2u);  // the atomic, and the work-item id
  const IrCall& fadd = used.calls[0];
  EXPECT_EQ(fadd.intrinsic, "llvm.amdgcn.raw.ptr.buffer.atomic.fadd.f32");
  ASSERT_TRUE(fadd.posed);
  EXPECT_EQ(fadd.posed->imm, std::vector<int64_t>{0});
  EXPECT_EQ(fadd.posed->uniform, std::optional<bool>(false));  // its data mixes in the work-item id
  EXPECT_EQ(fadd.posed->result_used, std::optional<bool>(true));
  IrUses unused = scan_ir_buffer(fadd_kernel(false, false), "unused.ll");
  EXPECT_EQ(unused.calls[0].posed->result_used, std::optional<bool>(false));
  EXPECT_EQ(unused.calls[0].posed->uniform, std::optional<bool>(true));  // LLVM's uniformity analysis: a kernel argument
}

TEST(PosingDifference, ACellAnswersOnlyTheCallItWasPosedAs) {
  Cell ok;
  ok.status = Status::kOk;
  ok.posed = CallPosing{{0}, false, false};  // lowered with its result unused, data divergent
  CallPosing call{{0}, false, true};
  ASSERT_TRUE(posing_difference(ok, call));
  EXPECT_EQ(*posing_difference(ok, call), "the cell holds for the result unused; this call uses it");
  call.result_used = false;
  EXPECT_FALSE(posing_difference(ok, call));
  call.uniform = true;  // divergent data lowered: uniform data does too
  EXPECT_FALSE(posing_difference(ok, call));
  call.imm = {1};
  EXPECT_EQ(*posing_difference(ok, call), "the cell was posed with immediate 0; this call passes 1");
  Cell returning = ok;
  returning.posed = CallPosing{{0}, true, true};  // lowered with its result used, operands uniform
  EXPECT_FALSE(posing_difference(returning, CallPosing{{0}, true, false}));  // the returning form serves
  EXPECT_EQ(*posing_difference(returning, CallPosing{{0}, false, true}),
            "the cell holds for uniform operands; this call's are divergent");
  // Every fair way was refused: a refusal answers any call.
  Cell refused = ok;
  refused.status = Status::kArchAbsent;
  EXPECT_FALSE(posing_difference(refused, CallPosing{{16}, false, true}));
  // A non-answer holds only for its own posing: another may be answered.
  Cell crash = ok;
  crash.status = Status::kToolchainCrash;
  EXPECT_TRUE(posing_difference(crash, CallPosing{{0}, false, true}));
  EXPECT_FALSE(posing_difference(crash, CallPosing{{0}, false, false}));
}

TEST_F(CheckerTest, AKernelThatUsesTheResultIsNotClearedByACellPosedWithTheResultUnused) {
  // LLVM 22 lowers raw.ptr.buffer.atomic.fadd.f32 on gfx908 only with its result unused (the committed cell says
  // so); a kernel that stores the old value is another call, which nothing here measures (no measurer).
  for (bool use : {true, false}) {
    CheckRequest r;
    r.flavor = "llvm22";
    r.target = "gfx908";
    add_ir_uses(r, scan_ir_buffer(fadd_kernel(use, true), "k.ll"));
    CheckResult result = checker().check(r);
    const CheckItem& fadd = result.items.front();
    ASSERT_EQ(fadd.intrinsic, "llvm.amdgcn.raw.ptr.buffer.atomic.fadd.f32");
    ASSERT_TRUE(fadd.call);
    if (use) {
      EXPECT_EQ(fadd.status, "no_answer") << fadd.evidence;
      EXPECT_EQ(fadd.evidence.rfind("the cell holds for the result unused; this call uses it", 0), 0u) << fadd.evidence;
      EXPECT_EQ(result.verdict, Verdict::kUnvalidated);
    } else {
      EXPECT_EQ(fadd.status, "ok") << fadd.evidence;
      EXPECT_EQ(fadd.key, "raw.ptr.buffer.atomic.fadd.f32");
      EXPECT_EQ(result.verdict, Verdict::kCleared);
    }
  }
}

TEST_F(CheckCli, ACallPosedOtherwiseThanItsCellIsMeasuredAsTheKernelCallsIt) {
  if (linked_toolchain().flavor() != "llvm22") GTEST_SKIP() << "measures on demand with the flavor's own LLVM";
  test::write(dir / "used.ll", fadd_kernel(true, true));
  auto used = check({"--target", "gfx908", "--flavor", "llvm22", "--json", (dir / "used.ll").string()});
  EXPECT_EQ(used.exit_code, 1) << used.out << used.err;  // llc-22 cannot select BUFFER_ATOMIC_ADD_F32 returning
  auto j = nlohmann::json::parse(used.out);
  EXPECT_EQ(j["items"][0]["status"], "arch_absent") << used.out;
  EXPECT_EQ(j["items"][0]["source"], "on_demand");
  EXPECT_EQ(j["items"][0]["call"]["result"], "used");
  EXPECT_EQ(j["items"][0]["posed"]["result"], "used");  // the cell answers exactly this call
  // The next check reads the stored cell (and says so) without measuring.
  auto again = check({"--target", "gfx908", "--flavor", "llvm22", "--json", (dir / "used.ll").string()});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(again.out)["items"][0]["source"], "on_demand");
  test::write(dir / "unused.ll", fadd_kernel(false, true));
  EXPECT_EQ(check({"--target", "gfx908", "--flavor", "llvm22", (dir / "unused.ll").string()}).exit_code, 0);
}

// ---- the front end's half: clang's answers for calls made through it ----

TEST_F(CheckerTest, AManifestsKeyWhoseBuiltinClangRefusesIsRefusedByTheFrontEnd) {
  CheckRequest hip = keys("gfx90a", {"amdgcn.cvt.f32.bf8"});
  hip.through_frontend = true;
  CheckResult r = checker().check(hip);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.verdict, Verdict::kRefused);
  EXPECT_EQ(r.items[0].source, "frontend");
  EXPECT_EQ(r.items[0].intrinsic, "__builtin_amdgcn_cvt_f32_bf8");
  EXPECT_NE(r.items[0].evidence.find("needs target feature fp8-conversion-insts"), std::string::npos) << r.items[0].evidence;
  // Called as IR (not through clang), the back end's cell answers.
  EXPECT_EQ(checker().check(keys("gfx90a", {"amdgcn.cvt.f32.bf8"})).items[0].source, "measured");
  // Where clang accepts it, the back end decides.
  hip.target = "gfx942";
  EXPECT_EQ(checker().check(hip).items[0].source, "measured");
}

TEST_F(CheckerTest, ABuiltinRefusedForAnotherCallOfItsIntrinsicDoesNotRefuseTheKey) {
  // ballot.i64's builtin is __builtin_amdgcn_ballot_w64 (the axis pairs the key with the builtin that makes its
  // call), which clang accepts on wave64 processors: the back end answers.
  CheckRequest hip = keys("gfx942", {"ballot.i64"});
  hip.through_frontend = true;
  CheckResult r = checker().check(hip);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].source, "measured") << r.items[0].evidence;
  EXPECT_EQ(r.verdict, Verdict::kCleared);
}

TEST_F(CheckerTest, ABuiltinNamedAsAKeyIsAnsweredByClangThenByItsKeysCells) {
  CheckResult refused = checker().check(keys("gfx90a", {"__builtin_amdgcn_cvt_f32_bf8"}));
  EXPECT_EQ(refused.verdict, Verdict::kRefused);
  EXPECT_EQ(refused.items[0].source, "frontend");
  EXPECT_EQ(refused.items[0].key, "amdgcn.cvt.f32.bf8");
  CheckResult cleared = checker().check(keys("gfx942", {"__builtin_amdgcn_cvt_f32_bf8"}));
  EXPECT_EQ(cleared.verdict, Verdict::kCleared);
  EXPECT_EQ(cleared.items[0].key, "amdgcn.cvt.f32.bf8");
  CheckResult unknown = checker().check(keys("gfx942", {"__builtin_amdgcn_no_such_thing"}));
  EXPECT_EQ(unknown.verdict, Verdict::kUnvalidated);
  EXPECT_NE(unknown.items[0].evidence.find("front-end axis"), std::string::npos) << unknown.items[0].evidence;
}

TEST_F(CheckerTest, ABuiltinNoKeyClaimsIsAnsweredByClangThenByTheCallItMakes) {
  CheckResult refused = checker().check(keys("gfx1100", {"__builtin_amdgcn_sdot4"}));
  EXPECT_EQ(refused.verdict, Verdict::kRefused);
  EXPECT_EQ(refused.items[0].source, "frontend");
  EXPECT_NE(refused.items[0].evidence.find("dot1-insts"), std::string::npos) << refused.items[0].evidence;
  CheckResult cleared = checker().check(keys("gfx90a", {"__builtin_amdgcn_sdot4"}));
  EXPECT_EQ(cleared.verdict, Verdict::kCleared);
  ASSERT_EQ(cleared.items.size(), 1u);
  EXPECT_EQ(cleared.items[0].intrinsic, "llvm.amdgcn.sdot4");
  EXPECT_NE(cleared.items[0].evidence.find("makes __builtin_amdgcn_sdot4 the call llvm.amdgcn.sdot4"), std::string::npos)
      << cleared.items[0].evidence;
  // A builtin clang makes no intrinsic call of (a fence instruction) is no answer of the back end's, and says so.
  CheckResult fence = checker().check(keys("gfx90a", {"__builtin_amdgcn_fence"}));
  EXPECT_EQ(fence.items[0].status, "no_answer");
  EXPECT_NE(fence.items[0].evidence.find("no llvm.amdgcn.* call"), std::string::npos) << fence.items[0].evidence;
}

TEST(HipSource, ClangsRefusalsOfBuiltinsAreReadFromItsOwnWords) {
  const std::string clang = clang_for_flavor(linked_toolchain().flavor(), "");
  if (clang.empty()) GTEST_SKIP() << "needs the flavor's clang";
  test::TempDir dir;
  const std::string source = (dir / "k.hip").string();
  test::write(source,
              "extern \"C\" __attribute__((global)) void k(int* out, int a, int b, int c) {\n"
              "  out[0] = __builtin_amdgcn_sdot4(a, b, c, false);\n"
              "}\n");
  HipCompile refused = compile_hip(clang, source, "gfx1100", {});
  ASSERT_EQ(refused.refused.size(), 1u);
  EXPECT_EQ(refused.refused[0].builtin, "__builtin_amdgcn_sdot4");
  EXPECT_FALSE(refused.refused[0].unknown);
  EXPECT_NE(refused.refused[0].diagnostic.find("needs target feature dot1-insts"), std::string::npos);
  EXPECT_TRUE(refused.ir.empty());
  HipCompile accepted = compile_hip(clang, source, "gfx906", {});
  EXPECT_TRUE(accepted.refused.empty());
  EXPECT_NE(accepted.ir.find("@llvm.amdgcn.sdot4("), std::string::npos);
  // A builtin this clang does not have is a refusal too; another error is the source's, naming the file.
  test::write(source, "extern \"C\" __attribute__((global)) void k(int* o) { o[0] = __builtin_amdgcn_nosuch(1); }\n");
  HipCompile unknown = compile_hip(clang, source, "gfx942", {});
  ASSERT_EQ(unknown.refused.size(), 1u);
  EXPECT_TRUE(unknown.refused[0].unknown);
  EXPECT_EQ(unknown.refused[0].diagnostic.find("did you mean"), std::string::npos) << unknown.refused[0].diagnostic;
  test::write(source, "this is not C++\n");
  try {
    compile_hip(clang, source, "gfx942", {});
    ADD_FAILURE() << "a broken source compiled";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(source + ": clang", 0), 0u) << e.what();
  }
}

TEST(HipSource, TheBuiltinsASourceNamesAndItsCommand) {
  EXPECT_EQ(builtins_named("x = __builtin_amdgcn_sdot4(a); y = __builtin_amdgcn_s_sleep(1); __builtin_amdgcn_sdot4"),
            (std::vector<std::string>{"__builtin_amdgcn_s_sleep", "__builtin_amdgcn_sdot4"}));
  std::vector<std::string> w64 = hip_device_command("clang", "gfx1100:+wavefrontsize64,-wavefrontsize32", "k.hip", "o.ll", {});
  EXPECT_NE(std::find(w64.begin(), w64.end(), "-mwavefrontsize64"), w64.end());
  EXPECT_NE(std::find(w64.begin(), w64.end(), "--offload-arch=gfx1100"), w64.end());
  EXPECT_THROW(hip_device_command("clang", "gfx942:+xnack", "k.hip", "o.ll", {}), Error);
  EXPECT_TRUE(is_hip_source("a/k.hip"));
  EXPECT_FALSE(is_hip_source("a/k.ll"));
}

TEST_F(CheckCli, AHipKernelIsAskedOfClangThenItsIrOfTheBackEnd) {
  if (clang_for_flavor(linked_toolchain().flavor(), "").empty()) GTEST_SKIP() << "needs the flavor's clang";
  const std::string flavor = linked_toolchain().flavor();
  test::write(dir / "dot.hip",
              "extern \"C\" __attribute__((global)) void k(int* out, int a, int b, int c) {\n"
              "  out[0] = __builtin_amdgcn_sdot4(a, b, c, false);\n"
              "}\n");
  auto refused = check({"--target", "gfx1100", "--flavor", flavor, "--json", (dir / "dot.hip").string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  auto j = nlohmann::json::parse(refused.out);
  EXPECT_EQ(j["items"][0]["intrinsic"], "__builtin_amdgcn_sdot4");
  EXPECT_EQ(j["items"][0]["source"], "frontend");
  EXPECT_NE(j["message"].get<std::string>().find("needs target feature dot1-insts"), std::string::npos) << j["message"];
  // On gfx906 clang accepts it, and the IR it makes is checked: llvm.amdgcn.sdot4 lowers there.
  auto cleared = check({"--target", "gfx906", "--flavor", flavor, "--json", (dir / "dot.hip").string()});
  EXPECT_EQ(cleared.exit_code, 0) << cleared.out << cleared.err;
  auto c = nlohmann::json::parse(cleared.out);
  EXPECT_EQ(c["items"][0]["intrinsic"], "llvm.amdgcn.sdot4");
  EXPECT_EQ(c["items"][0]["call"]["result"], "used");
  // Several targets, each compiled for itself: the most severe decides.
  EXPECT_EQ(check({"--target", "gfx906", "--target", "gfx1100", "--flavor", flavor, (dir / "dot.hip").string()}).exit_code, 1);
  test::write(dir / "broken.hip", "not C++ at all\n");
  auto broken = check({"--target", "gfx906", "--flavor", flavor, (dir / "broken.hip").string()});
  EXPECT_EQ(broken.exit_code, 3);
  EXPECT_NE(broken.err.find("broken.hip: clang"), std::string::npos) << broken.err;
}

TEST_F(CheckCli, WithoutTheFlavorsClangAHipKernelIsAnsweredFromTheCommittedFrontEndAndSaysSo) {
  test::write(dir / "bf8.hip",
              "extern \"C\" __attribute__((global)) void k(float* out, int a) { out[0] = __builtin_amdgcn_cvt_f32_bf8(a, 0); }\n");
  // llvm23's clang is not installed on this machine (its LLVM is measured in a root); its front end is committed.
  if (!clang_for_flavor("llvm23", "").empty()) GTEST_SKIP() << "clang-23 is installed here";
  auto r = check({"--target", "gfx90a", "--flavor", "llvm23", (dir / "bf8.hip").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("needs target feature fp8-conversion-insts"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: clang-23 is not installed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace archdb
