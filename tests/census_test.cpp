// tests/census_test.cpp — the census and the front-end axis against the real, linked LLVM, real SQLite files,
// the real clang of the flavor (where installed) and the real `archdb` binary: enumeration, instantiation,
// not-probed intrinsics, a small census through the store, its text form and export, the committed census,
// and the census fallback of `query` and `check`.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "checker/checker.h"
#include "db/census.h"
#include "db/frontend.h"
#include "db/store.h"
#include "probe/census.h"
#include "probe/frontend.h"
#include "llvm/toolchain.h"
#include "support/error.h"
#include "support/files.h"
#include "test_support.h"

namespace archdb {
namespace {
namespace fs = std::filesystem;

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// A small census, measured once for the suite: a handful of intrinsics on four processors.
const CensusRun& small_census() {
  static const CensusRun run = [] {
    CensusOptions o;
    o.flavor = linked_toolchain().flavor();
    o.intrinsics = {"llvm.amdgcn.cos", "llvm.amdgcn.mfma.f32.4x4x4bf16.1k", "llvm.amdgcn.ballot",
                    "llvm.amdgcn.init.exec.from.input", "llvm.amdgcn.s.sleep", "llvm.amdgcn.s.barrier.signal"};
    o.processors = {"gfx90a", "gfx1100", "gfx1201", "gfx803"};  // gfx803: not a wired target
    o.timeout_s = 20;
    return run_census(o);
  }();
  return run;
}

TEST(Census, EnumeratesTheIntrinsicTableAndTheProcessors) {
  std::vector<std::string> names = amdgcn_intrinsic_names();
  EXPECT_GT(names.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "llvm.amdgcn.mfma.f32.4x4x4bf16.1k"));
  for (const auto& n : names) EXPECT_EQ(n.rfind("llvm.amdgcn.", 0), 0u) << n;
  std::vector<std::string> processors = amdgpu_processor_names();
  EXPECT_GE(processors.size(), 40u);
  for (const char* p : {"gfx600", "gfx90a", "gfx942", "gfx1100", "gfx1201", "gfx11-generic"}) EXPECT_TRUE(contains(processors, p)) << p;
  for (const auto& p : processors) EXPECT_EQ(p.rfind("gfx", 0), 0u) << p;  // aliases (tahiti, ...) left out
}

TEST(Census, OverloadedIntrinsicsTakeDocumentedCandidatesInOrder) {
  std::string why;
  auto cos = candidate_combinations("llvm.amdgcn.cos", 100, why);
  ASSERT_FALSE(cos.empty()) << why;
  EXPECT_EQ(cos.front(), std::vector<std::string>{"float"});          // float scalars first for anyfloat
  EXPECT_TRUE(contains(std::vector<std::string>{cos[1][0]}, "half"));  // then the next documented one
  auto ballot = candidate_combinations("llvm.amdgcn.ballot", 100, why);
  ASSERT_FALSE(ballot.empty());
  EXPECT_EQ(ballot.front(), std::vector<std::string>{"i32"});
  EXPECT_EQ(ballot[1], std::vector<std::string>{"i64"});
  EXPECT_TRUE(candidate_combinations("llvm.amdgcn.s.sleep", 100, why).empty());  // not overloaded

  const CensusRun& run = small_census();
  EXPECT_TRUE(run.probe_errors.empty()) << run.probe_errors.front();
  const CensusInstantiation* c = run.census.instantiation("llvm.amdgcn.cos.f32");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->intrinsic, "llvm.amdgcn.cos");
  EXPECT_EQ(c->overload_types, std::vector<std::string>{"float"});
  EXPECT_EQ(run.census.find("llvm.amdgcn.cos.f32", "gfx90a")->status, Status::kOk);
  const CensusInstantiation* mfma = run.census.instantiation("llvm.amdgcn.mfma.f32.4x4x4bf16.1k");
  ASSERT_NE(mfma, nullptr);
  EXPECT_TRUE(mfma->overload_types.empty());
  EXPECT_EQ(run.census.find(mfma->key, "gfx90a")->status, Status::kOk);
  EXPECT_EQ(run.census.find(mfma->key, "gfx1201")->status, Status::kArchAbsent);
  // LLVM 22 selects an instruction gfx90a has no encoding for and crashes: its tables refuse it (encodings.h).
  const Cell* barrier = run.census.find("llvm.amdgcn.s.barrier.signal", "gfx90a");
  EXPECT_EQ(barrier->status, Status::kArchAbsent) << barrier->evidence;
  EXPECT_EQ(barrier->cause, Cause::kUnencodable) << barrier->evidence;
}

// Candidate set v3: what an intrinsic's name implies comes first (census.h, "family hints").
TEST(Census, FamilyHintsPutFirstWhatTheNameImplies) {
  std::string why;
  auto first = [&](const char* name) {
    auto combos = candidate_combinations(name, 400, why);
    EXPECT_FALSE(combos.empty()) << name << ": " << why;
    return combos.empty() ? std::vector<std::string>{} : combos.front();
  };
  EXPECT_EQ(first("llvm.amdgcn.ds.append"), std::vector<std::string>{"ptr addrspace(3)"});  // LDS
  EXPECT_EQ(first("llvm.amdgcn.ds.read.tr16.b64").front(), "<4 x i16>");                  // 64 bits of halves
  EXPECT_EQ(first("llvm.amdgcn.ds.read.tr8.b64").front(), "<2 x i32>");
  EXPECT_EQ(first("llvm.amdgcn.make.buffer.rsrc").front(), "ptr addrspace(8)");            // a buffer resource
  EXPECT_EQ(first("llvm.amdgcn.raw.buffer.load").front(), "i32");  // a buffer load's data is not a resource
  EXPECT_EQ(first("llvm.amdgcn.image.atomic.swap.1d").front(), "i32");
  // A matrix: <8 x float> results and <16 x half> sources (gfx11, wave32) among the first few.
  auto wmma = candidate_combinations("llvm.amdgcn.wmma.f32.16x16x16.f16", 400, why);
  ASSERT_GE(wmma.size(), 4u);
  EXPECT_EQ(wmma.front().front(), "<8 x float>");
  bool early = false;
  for (size_t i = 0; i < 4; ++i) early |= wmma[i] == std::vector<std::string>{"<8 x float>", "<16 x half>"};
  EXPECT_TRUE(early);
  // v3: a layout family's combinations one step from the first come next (gfx12's sources, gfx1250's results),
  // before the last slot tries every other type.
  EXPECT_EQ(wmma[1], (std::vector<std::string>{"<8 x float>", "<8 x half>"}));
  auto f16 = candidate_combinations("llvm.amdgcn.wmma.f16.16x16x64.bf8.bf8", 400, why);
  ASSERT_GE(f16.size(), 12u);
  EXPECT_TRUE(std::find(f16.begin(), f16.begin() + 12, std::vector<std::string>{"<8 x half>", "<8 x i32>"}) != f16.begin() + 12);
  auto sparse = candidate_combinations("llvm.amdgcn.swmmac.f32.16x16x32.f16", 400, why);
  ASSERT_GE(sparse.size(), 4u);
  EXPECT_EQ(sparse.front().back(), "i16");  // gfx12's sparse index
  EXPECT_TRUE(std::find(sparse.begin(), sparse.begin() + 4,
                        std::vector<std::string>{"<8 x float>", "<8 x half>", "<16 x half>", "i16"}) != sparse.begin() + 4);
  auto tr = candidate_combinations("llvm.amdgcn.global.load.tr.b128", 400, why);
  ASSERT_GE(tr.size(), 3u);
  EXPECT_EQ(tr.front().front(), "<4 x i32>");
  EXPECT_TRUE(std::find_if(tr.begin(), tr.begin() + 3, [](const auto& c) { return c.front() == "<8 x i16>"; }) != tr.begin() + 3);
  // Not a layout family: the last slot still varies fastest.
  auto other = candidate_combinations("llvm.amdgcn.icmp", 400, why);
  ASSERT_GE(other.size(), 2u);
  EXPECT_EQ(other[0].front(), other[1].front());
}

// An intrinsic whose overload types are a generation's or a wave size's layout is sought where its family
// lowers and it does not: gfx12's WMMA takes <8 x half> sources where gfx11's takes <16 x half>, a wave64
// ballot is i64. Each layout found keeps a row of its own; the first rows stay true answers for their names.
TEST(Census, TheLayoutSearchFindsEachGenerationsAndWaveSizesInstantiation) {
  CensusOptions options;
  options.flavor = linked_toolchain().flavor();
  // wmma...fp8.fp8 is gfx12's alone: with it the matrix family lowers on gfx1201.
  options.intrinsics = {"llvm.amdgcn.wmma.f32.16x16x16.f16", "llvm.amdgcn.wmma.f32.16x16x16.fp8.fp8", "llvm.amdgcn.ballot"};
  options.processors = {"gfx900", "gfx1100", "gfx1201"};
  CensusRun run = run_census(options);
  ASSERT_TRUE(run.probe_errors.empty()) << run.probe_errors.front();
  auto status = [&](const char* key, const char* target) {
    const Cell* c = run.census.find(key, target);
    return c ? c->status : Status::kProbeError;
  };
  EXPECT_EQ(status("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16", "gfx1100"), Status::kOk);
  EXPECT_EQ(status("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16", "gfx1201"), Status::kArchAbsent);
  EXPECT_EQ(status("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16", "gfx1201"), Status::kOk);
  EXPECT_EQ(status("llvm.amdgcn.ballot.i32", "gfx900"), Status::kArchAbsent);
  EXPECT_EQ(status("llvm.amdgcn.ballot.i64", "gfx900"), Status::kOk);
  // gfx900 has no matrix instructions: no candidate was sought there for the WMMA.
  EXPECT_EQ(status("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16", "gfx900"), Status::kArchAbsent);
  EXPECT_EQ(run.layout.found, 2u);
}

// An instantiation that lowers nowhere makes the census try the next candidates: trig.preop posed f32 lowers
// nowhere (llvm.amdgcn.trig.preop.ll: it is f64), and the f64 row found by the search is kept beside it.
TEST(Census, AnInstantiationThatLowersNowhereMakesTheSearchTryTheNext) {
  CensusOptions options;
  options.flavor = linked_toolchain().flavor();
  options.intrinsics = {"llvm.amdgcn.trig.preop"};
  options.processors = {"gfx900", "gfx90a"};
  CensusRun run = run_census(options);
  ASSERT_TRUE(run.probe_errors.empty()) << run.probe_errors.front();
  ASSERT_NE(run.census.instantiation("llvm.amdgcn.trig.preop.f32"), nullptr);
  ASSERT_NE(run.census.instantiation("llvm.amdgcn.trig.preop.f64"), nullptr);
  EXPECT_EQ(run.census.find("llvm.amdgcn.trig.preop.f64", "gfx900")->status, Status::kOk);
  EXPECT_EQ(run.census.find("llvm.amdgcn.trig.preop.f32", "gfx900")->status, Status::kArchAbsent);
  EXPECT_GT(run.search_candidates, 0);
}

TEST(Census, OverloadTypesAreReadFromAMangledName) {
  std::string why;
  EXPECT_EQ(overload_types_of_mangled("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16", why),
            (std::vector<std::string>{"<8 x float>", "<16 x half>"}));
  EXPECT_EQ(overload_types_of_mangled("llvm.amdgcn.swmmac.bf16.16x16x32.bf16.v8bf16.v8bf16.v16bf16.i16", why),
            (std::vector<std::string>{"<8 x bfloat>", "<8 x bfloat>", "<16 x bfloat>", "i16"}));
  EXPECT_EQ(overload_types_of_mangled("llvm.amdgcn.s.sleep", why), std::vector<std::string>{});
  EXPECT_EQ(overload_types_of_mangled("llvm.amdgcn.no.such.thing.i32", why), std::nullopt);
  EXPECT_EQ(overload_types_of_mangled("llvm.amdgcn.readlane.sl_s", why), std::nullopt);
  EXPECT_NE(why.find("'sl_s'"), std::string::npos) << why;
}

// Clang's instantiations: a call clang makes of a builtin becomes a row measured on every processor. gfx12's sparse
// WMMA takes <8 x half> A and <16 x half> B (wmma-gfx12-w32.ll); the candidate set's first lowers nowhere.
TEST(Census, TheCallsClangMakesOfItsBuiltinsAreRowsOfTheirOwn) {
  CensusOptions options;
  options.flavor = linked_toolchain().flavor();
  options.intrinsics = {"llvm.amdgcn.swmmac.f16.16x16x32.f16"};
  options.processors = {"gfx1100", "gfx1201"};
  options.search_rounds = 0;
  options.layout_width = 0;
  options.clang_calls = {"llvm.amdgcn.swmmac.f16.16x16x32.f16.v8f16.v8f16.v16f16.i16", "llvm.amdgcn.s.sleep",
                         "llvm.fma.f32"};
  CensusRun run = run_census(options);
  ASSERT_TRUE(run.probe_errors.empty()) << run.probe_errors.front();
  const Cell* c = run.census.find("llvm.amdgcn.swmmac.f16.16x16x32.f16.v8f16.v8f16.v16f16.i16", "gfx1201");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, Status::kOk) << c->evidence;
  EXPECT_EQ(run.census.find("llvm.amdgcn.swmmac.f16.16x16x32.f16.v8f16.v8f16.v16f16.i16", "gfx1100")->status,
            Status::kArchAbsent);
  EXPECT_EQ(run.clang.calls, 1u);  // s.sleep and fma are outside the intrinsics asked
  EXPECT_EQ(run.clang.rows, 1u);
  // The intrinsic's answer weighs its rows: ok on gfx1201, naming the row that lowers.
  std::optional<Cell> answer = intrinsic_answer(run.census.instantiations, run.census.cells, "gfx1201");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, Status::kOk);
  EXPECT_EQ(answer->key, "llvm.amdgcn.swmmac.f16.16x16x32.f16.v8f16.v8f16.v16f16.i16");
  EXPECT_EQ(intrinsic_answer(run.census.instantiations, run.census.cells, "gfx1100")->status, Status::kArchAbsent);
}

TEST(Census, AnIntrinsicsAnswerIsOkWhereAnyInstantiationLowersAndARefusalOnlyWhereEveryOneIs) {
  std::vector<CensusInstantiation> insts = {{"x.a", "x", {"a"}}, {"x.b", "x", {"b"}}};
  auto cell = [](const char* key, const char* target, Status s) {
    Cell c;
    c.key = key;
    c.target = target;
    c.status = s;
    c.evidence = s == Status::kOk ? "" : "said";
    return c;
  };
  std::vector<Cell> cells = {cell("x.a", "gfx1", Status::kArchAbsent), cell("x.a", "gfx2", Status::kArchAbsent),
                             cell("x.a", "gfx3", Status::kArchAbsent), cell("x.b", "gfx1", Status::kOk),
                             cell("x.b", "gfx2", Status::kToolchainCrash), cell("x.b", "gfx3", Status::kArchAbsent)};
  EXPECT_EQ(intrinsic_answer(insts, cells, "gfx1")->key, "x.b");
  EXPECT_EQ(intrinsic_answer(insts, cells, "gfx1")->status, Status::kOk);
  EXPECT_EQ(intrinsic_answer(insts, cells, "gfx2")->status, Status::kToolchainCrash);  // one refused, one unknown
  std::optional<Cell> refused = intrinsic_answer(insts, cells, "gfx3");
  EXPECT_EQ(refused->status, Status::kArchAbsent);
  EXPECT_NE(refused->evidence.find("of 2 instantiations (x.a, x.b): every one refused"), std::string::npos) << refused->evidence;
  EXPECT_FALSE(intrinsic_answer(insts, cells, "gfx4"));
}

TEST(Census, AnIntrinsicThatCannotBeInstantiatedIsNotProbedWithItsReason) {
  const CensusRun& run = small_census();
  auto np = std::find_if(run.census.not_probed.begin(), run.census.not_probed.end(),
                         [](const CensusNotProbed& n) { return n.intrinsic == "llvm.amdgcn.init.exec.from.input"; });
  ASSERT_NE(np, run.census.not_probed.end());
  EXPECT_NE(np->reason.find("inreg"), std::string::npos) << np->reason;  // the verifier's own words
  for (const auto& cell : run.census.cells) EXPECT_EQ(cell.key.find("init.exec.from.input"), std::string::npos);
  EXPECT_EQ(run.census.provenance.not_probed, 1);
}

// LLVM 22 and 23 hang in instruction selection on sdot2 for the SI processors (the committed census's
// timeouts); the budget is CPU time, so the hang is found in a fraction of a second, and found again the same.
TEST(Census, AHangSpendsItsCpuBudgetAndEveryRunGivesTheSameAnswer) {
  auto census_of_sdot2 = [] {
    CensusOptions o;
    o.flavor = linked_toolchain().flavor();
    o.intrinsics = {"llvm.amdgcn.sdot2"};
    o.processors = {"gfx600", "gfx906"};
    return run_census(o);
  };
  CensusRun first = census_of_sdot2();
  ASSERT_TRUE(first.probe_errors.empty()) << first.probe_errors.front();
  const Cell* hang = first.census.find("llvm.amdgcn.sdot2", "gfx600");
  ASSERT_NE(hang, nullptr);
  // The retry's budget, not the wall-clock backstop, ended it; and where sdot2 lowers (gfx906) it becomes
  // v_dot2_i32_i16, which gfx600's assembler has not: LLVM's tables decide the hang (decide.h).
  EXPECT_EQ(hang->status, Status::kArchAbsent) << hang->evidence;
  EXPECT_EQ(hang->cause, Cause::kInstructionAbsent) << hang->evidence;
  EXPECT_EQ(hang->evidence.rfind("wherever this call lowers it becomes v_dot2_i32_i16, which has no encoding on this "
                                 "processor (LLVM's assembler: instruction not supported on this GPU); here, no answer "
                                 "within 100 ms of CPU time in pass '", 0), 0u) << hang->evidence;
  EXPECT_EQ(first.census.find("llvm.amdgcn.sdot2", "gfx906")->status, Status::kOk);
  EXPECT_EQ(first.census.provenance.probe.at("cpu_budget_ms"), 50);
  EXPECT_EQ(first.census.provenance.probe.at("retry_cpu_budget_ms"), 100);
  // gfx906's answer was measured against the same clock: some CPU time, within the first budget.
  EXPECT_GT(first.stats.slowest_answer_cpu_ms, 0.0);
  EXPECT_LT(first.stats.slowest_answer_cpu_ms, 50.0 * 1.5);
  EXPECT_EQ(census_of_sdot2().census.cells, first.census.cells);
}

TEST(Census, ASmallCensusStoresExportsAndRoundTrips) {
  const CensusRun& run = small_census();
  const Census& census = run.census;
  ASSERT_EQ(census.cells.size(), census.instantiations.size() * 4);
  std::string text = render_census(census);
  Census back = parse_census(text, "census.txt");
  EXPECT_EQ(render_census(back), text);  // byte-identical
  EXPECT_EQ(back.cells, census.cells);
  EXPECT_EQ(back.not_probed.size(), census.not_probed.size());

  test::TempDir dir;
  {
    auto store = Store::open(dir / "db.sqlite");
    store_census(*store, census, digest_hex(text));
  }
  auto store = Store::open(dir / "db.sqlite");
  std::optional<Census> loaded = load_census(*store, census.provenance.flavor);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->cells, census.cells);
  EXPECT_EQ(render_census(*loaded), text);
  CensusMatch m = find_census(*store, census.provenance.flavor, "cos");
  ASSERT_EQ(m.instantiations.size(), 1u);
  EXPECT_EQ(m.cells.size(), 4u);
  EXPECT_EQ(census_cell(*store, census.provenance.flavor, "llvm.amdgcn.cos.f32", "gfx1100")->status, Status::kOk);

  std::string jsonl = render_census_jsonl(*loaded);
  EXPECT_EQ(static_cast<size_t>(std::count(jsonl.begin(), jsonl.end(), '\n')), census.cells.size());
  EXPECT_NE(jsonl.find("\"overload_types\":[\"float\"]"), std::string::npos);

  // The store follows the committed file: a changed file is reloaded, a removed one dropped.
  test::write(dir / "data/llvm22/census.txt", text);
  sync_census_from_data(*store, dir / "data");
  EXPECT_TRUE(load_census(*store, "llvm22"));
  fs::remove(dir / "data/llvm22/census.txt");
  sync_census_from_data(*store, dir / "data");
  EXPECT_FALSE(load_census(*store, "llvm22"));
}

TEST(Census, ParsingRejectsWhatIsNotACensus) {
  std::string text = render_census(small_census().census);
  auto error_of = [](const std::string& t) {
    try {
      parse_census(t, "data/llvm22/census.txt");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of("garbage\n").find("not an archdb census"), std::string::npos);
  std::string probe_error = text;
  probe_error.replace(probe_error.find("\tok "), 4, "\tprobe_error ");
  EXPECT_NE(error_of(probe_error).find("probe_error is a defect of the probe"), std::string::npos) << error_of(probe_error);
  std::string missing = text;
  size_t gfx = missing.find(",gfx90a ");
  if (gfx != std::string::npos) {
    missing.erase(gfx, 7);
    EXPECT_NE(error_of(missing).find("processors"), std::string::npos) << error_of(missing);
  }
}

TEST(Census, TheCommittedCensusParsesCompleteWithoutProbeErrors) {
  fs::path data = test::source_dir() / "data";
  std::optional<Census> census = read_census_file(data, linked_toolchain().flavor());
  if (!census) GTEST_SKIP() << "no committed census for " << linked_toolchain().flavor();
  EXPECT_EQ(census->provenance.counts.count("probe_error"), 0u);
  for (const auto& c : census->cells) EXPECT_NE(c.status, Status::kProbeError);
  EXPECT_GT(census->provenance.intrinsics, 1000);
  EXPECT_GE(census->provenance.processors.size(), 40u);
  EXPECT_EQ(static_cast<size_t>(census->provenance.intrinsics),
            [&] {
              std::set<std::string> names;
              for (const auto& i : census->instantiations) names.insert(i.intrinsic);
              for (const auto& n : census->not_probed) names.insert(n.intrinsic);
              return names.size();
            }());  // every intrinsic is either measured or listed with its reason
  EXPECT_EQ(census->cells.size(), census->instantiations.size() * census->provenance.processors.size());
  for (const auto& n : census->not_probed) EXPECT_FALSE(n.reason.empty()) << n.intrinsic;
  EXPECT_EQ(render_census(*census), test::read(data / census->provenance.flavor / "census.txt"));  // canonical form
}

// A workspace: the real catalog, the committed llvm22 column, and a census of a few intrinsics in its data/.
struct Workspace {
  test::TempDir dir;
  Workspace() {
    fs::path src = test::source_dir() / "data" / "llvm22";
    test::write(dir / "data/llvm22/column.json", test::read(src / "column.json"));
    test::write(dir / "data/llvm22/cells.jsonl", test::read(src / "cells.jsonl"));
    test::write(dir / "data/llvm22/census.txt", render_census(small_census().census));
  }
  std::vector<std::string> args(std::vector<std::string> rest) const {
    std::vector<std::string> a = {"--db", (dir / "db.sqlite").string(), "--data", (dir / "data").string()};
    a.insert(a.end(), rest.begin(), rest.end());
    return a;
  }
};

TEST(Census, QueryFallsBackToTheCensusOutsideTheCatalog) {
  if (linked_toolchain().flavor() != "llvm22") GTEST_SKIP() << "the workspace holds an llvm22 census";
  Workspace ws;
  auto r = test::run_archdb(ws.args({"query", "cos", "--target", "gfx90a"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("census"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("llvm.amdgcn.cos.f32 [float]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("v_cos_f32"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("gfx1100"), std::string::npos) << r.out;  // --target narrows it
  auto j = test::run_archdb(ws.args({"query", "llvm.amdgcn.cos.f32", "--json"}));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto parsed = nlohmann::json::parse(j.out);
  EXPECT_EQ(parsed["source"], "census");
  EXPECT_EQ(parsed["flavors"]["llvm22"]["instantiations"][0]["cells"]["gfx1201"]["status"], "ok");
  // A catalog key is still answered by the catalog column, and an unknown name is still an error.
  auto key = test::run_archdb(ws.args({"query", "mfma.f32.4x4x4bf16.1k", "--flavor", "llvm22"}));
  EXPECT_EQ(key.exit_code, 0);
  EXPECT_EQ(key.out.find("census"), std::string::npos);
  EXPECT_EQ(test::run_archdb(ws.args({"query", "no.such.thing"})).exit_code, 2);
  // An instantiation the census did not measure names the one it did, and gives no answer.
  for (const char* name : {"llvm.amdgcn.cos.f64", "cos.f64"}) {
    auto other = test::run_archdb(ws.args({"query", name}));
    EXPECT_EQ(other.exit_code, 2) << name;
    EXPECT_NE(other.err.find("'llvm.amdgcn.cos.f64' is not in the llvm22 census: it measured llvm.amdgcn.cos as "
                             "llvm.amdgcn.cos.f32 only"),
              std::string::npos)
        << other.err;
    EXPECT_EQ(std::count(other.err.begin(), other.err.end(), '\n'), 1) << other.err;
    EXPECT_TRUE(other.out.empty()) << other.out;
  }
}

// gfx12's sparse WMMA lowers in the instantiation clang's builtin makes (a census row of clang's); query weighs the
// intrinsic's rows per processor, and so does check for the name without types.
TEST(Census, AnIntrinsicsNameIsAnsweredOverItsInstantiations) {
  if (linked_toolchain().flavor() != "llvm22") GTEST_SKIP() << "the workspace holds the llvm22 column";
  Workspace ws;
  test::write(ws.dir / "data/llvm22/census.txt", test::read(test::source_dir() / "data/llvm22/census.txt"));
  auto r = test::run_archdb(ws.args({"query", "swmmac.f16.16x16x32.f16", "--target", "gfx1201", "--flavor", "llvm22"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("on each processor, over its 2 instantiations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gfx1201    ok      llvm.amdgcn.swmmac.f16.16x16x32.f16.v8f16.v8f16.v16f16.i32"), std::string::npos)
      << r.out;
  auto j = test::run_archdb(ws.args({"query", "swmmac.f16.16x16x32.f16", "--json", "--flavor", "llvm22"}));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto answer = nlohmann::json::parse(j.out)["flavors"]["llvm22"]["intrinsic_answer"];
  EXPECT_EQ(answer["gfx1201"]["status"], "ok");
  EXPECT_EQ(answer["gfx1100"]["status"], "arch_absent");
  auto c = test::run_archdb(
      ws.args({"check", "--keys", "llvm.amdgcn.swmmac.f16.16x16x32.f16", "--target", "gfx1201", "--flavor", "llvm22"}));
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("of 2 instantiations"), std::string::npos) << c.out;
  auto h = test::run_archdb(ws.args({"history", "swmmac.f16.16x16x32.f16", "--target", "gfx1201", "--json"}));
  ASSERT_EQ(h.exit_code, 0) << h.err;
  auto hist = nlohmann::json::parse(h.out);
  EXPECT_EQ(hist["source"], "census");
  EXPECT_EQ(hist["targets"]["gfx1201"]["cells"]["llvm22"]["status"], "ok") << h.out;
  EXPECT_EQ(hist["targets"]["gfx1201"]["cells"]["llvm22"]["instantiation"],
            "llvm.amdgcn.swmmac.f16.16x16x32.f16.v8f16.v8f16.v16f16.i32");
}

TEST(Census, CheckFallsBackToTheCensusForIntrinsicsOutsideTheCatalog) {
  if (linked_toolchain().flavor() != "llvm22") GTEST_SKIP() << "the workspace holds an llvm22 census";
  Workspace ws;
  test::write(ws.dir / "k.ll",
              "declare float @llvm.amdgcn.cos.f32(float)\n"
              "declare float @llvm.amdgcn.sin.f32(float)\n"
              "declare half @llvm.amdgcn.cos.f16(half)\n"
              "define amdgpu_kernel void @k(ptr addrspace(1) %p, float %x, half %h) {\n"
              "  %c = call float @llvm.amdgcn.cos.f32(float %x)\n"
              "  store float %c, ptr addrspace(1) %p\n"
              "  %s = call float @llvm.amdgcn.sin.f32(float %x)\n"
              "  store float %s, ptr addrspace(1) %p\n"
              "  %ch = call half @llvm.amdgcn.cos.f16(half %h)\n"
              "  store half %ch, ptr addrspace(1) %p\n  ret void\n}\n");
  auto r = test::run_archdb(ws.args({"check", "--target", "gfx90a", "--flavor", "llvm22", (ws.dir / "k.ll").string(), "--json"}));
  auto j = nlohmann::json::parse(r.out);
  bool cos_from_census = false;
  for (const auto& item : j["items"]) {
    if (item["intrinsic"] == "llvm.amdgcn.cos.f32") {
      EXPECT_EQ(item["source"], "census");
      EXPECT_EQ(item["status"], "ok");
      cos_from_census = true;
    }
    if (item["intrinsic"] == "llvm.amdgcn.sin.f32") {
      // The workspace's census lists a handful of intrinsics as if they were all of LLVM 22's: sin is none.
      EXPECT_EQ(item["status"], "name_absent");
      EXPECT_EQ(item["source"], "census");
    }
    if (item["intrinsic"] == "llvm.amdgcn.cos.f16") {
      // An instantiation of an intrinsic the census has, which it did not measure: measured on demand.
      EXPECT_EQ(item["source"], "on_demand") << item.dump();
      EXPECT_EQ(item["status"], "ok") << item.dump();
    }
  }
  EXPECT_TRUE(cos_from_census) << r.out;
  EXPECT_EQ(r.exit_code, 1) << r.out;  // sin is refused
  {
    // A processor no catalog column has (only the census): the same answers, measured on demand there too.
    auto unwired = test::run_archdb(ws.args({"check", "--target", "gfx803", "--flavor", "llvm22", (ws.dir / "k.ll").string(), "--json"}));
    ASSERT_FALSE(unwired.out.empty()) << unwired.err;
    std::map<std::string, nlohmann::json> by_name;
    nlohmann::json answer = nlohmann::json::parse(unwired.out);
    for (const auto& item : answer["items"]) by_name[item["intrinsic"].get<std::string>()] = item;
    EXPECT_EQ(by_name["llvm.amdgcn.cos.f16"]["source"], "on_demand") << unwired.out;
    EXPECT_EQ(by_name["llvm.amdgcn.cos.f16"]["status"], "ok") << unwired.out;
    EXPECT_EQ(by_name["llvm.amdgcn.sin.f32"]["status"], "name_absent") << unwired.out;
  }
  {
    auto kept = Store::open(ws.dir / "db.sqlite");
    // Kept for the call the kernel makes: its half a kernel argument (uniform), its result used.
    std::optional<Cell> c = on_demand_cell(*kept, "llvm22", "llvm.amdgcn.cos.f16", "gfx90a", CallPosing{{}, true, true});
    ASSERT_TRUE(c) << "the on-demand cell is kept";
    EXPECT_EQ(c->posed, (CallPosing{{}, true, true})) << cell_to_json(*c).dump();
    EXPECT_EQ(c->status, Status::kOk);
    bool cos16 = false;
    for (const auto& m : c->lowered_to) cos16 |= m.rfind("v_cos_f16", 0) == 0;
    EXPECT_TRUE(cos16) << cell_to_json(*c).dump();
  }

  // In process: the checker's census branch, and a census refusal refuses.
  auto store = Store::open(ws.dir / "db.sqlite");
  Checker checker(*store, load_catalog((test::source_dir() / "schema/catalog.txt").string()),
                  load_targets((test::source_dir() / "schema/targets.txt").string()));
  CheckRequest req;
  req.target = "gfx1201";
  req.flavor = "llvm22";
  req.intrinsics = {"llvm.amdgcn.mfma.f32.4x4x4bf16.1k.not.in.catalog"};
  CheckResult none = checker.check(req);
  EXPECT_EQ(none.items[0].source, "none");
  req.intrinsics = {"llvm.amdgcn.cos.f32"};
  CheckResult ok = checker.check(req);
  EXPECT_EQ(ok.items[0].source, "census");
  EXPECT_EQ(ok.verdict, Verdict::kCleared);
}

TEST(Frontend, TextFormRoundTrips) {
  Frontend fe;
  fe.provenance.flavor = "llvm22";
  fe.provenance.clang = "clang version 22.1.8";
  fe.provenance.command = {"clang-22", "-x", "hip", "--offload-arch={processor}", "{file}"};
  fe.provenance.processors = {"gfx90a", "gfx1201"};
  fe.keys = {{"a.b", "__builtin_amdgcn_a_b", "extern \"C\" __attribute__((device)) void probe(int a0) { (void)__builtin_amdgcn_a_b(a0); }", ""},
             {"c.d", "", "", "clang has no __builtin_amdgcn_c_d"},
             {"e.f", "__builtin_amdgcn_e_f", "", "no viable conversion"}};
  fe.cells = {{"a.b", "gfx1201", false, "error: '__builtin_amdgcn_a_b' needs target feature x", {}},
              {"a.b", "gfx90a", true, "", {"llvm.amdgcn.a.b"}}};
  fe.sort();
  fe.recount();
  std::string text = render_frontend(fe);
  Frontend back = parse_frontend(text, "frontend.txt");
  EXPECT_EQ(render_frontend(back), text);
  EXPECT_EQ(back.provenance.counts["accepted"], 1);
  EXPECT_EQ(back.provenance.counts["no_builtin"], 1);
  EXPECT_EQ(back.provenance.counts["not_posed"], 1);
  test::TempDir dir;
  auto store = Store::open(dir / "db.sqlite");
  store_frontend(*store, back, "d");
  std::optional<Frontend> loaded = load_frontend(*store, "llvm22");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(render_frontend(*loaded), text);
}

// The clang of the linked LLVM's flavor ("clang-22"), or "" where it is not installed.
std::string clang_of_the_build() {
  std::string clang = "clang-" + std::to_string(linked_toolchain().llvm_major);
  try {
    clang_version_line(clang);
  } catch (const Error&) {
    return "";
  }
  return clang;
}

TEST(Frontend, ClangOfTheFlavorAcceptsAndRefusesBuiltinsPerProcessor) {
  const std::string clang = clang_of_the_build();
  if (clang.empty()) GTEST_SKIP() << "clang-" << linked_toolchain().llvm_major << " is not installed";
  FrontendOptions o;
  o.flavor = linked_toolchain().flavor();
  o.clang = clang;
  o.processors = {"gfx90a", "gfx1100"};
  o.keys = {{"mfma.f32.4x4x4bf16.1k", "llvm.amdgcn.mfma.f32.4x4x4bf16.1k", ""},
            {"s.sleep", "llvm.amdgcn.s.sleep", ""},
            {"wmma.f32.16x16x16.f16", "llvm.amdgcn.wmma.f32.16x16x16.f16", ""},
            {"made.up", "llvm.amdgcn.made.up.thing", ""}};
  Frontend fe = measure_frontend(o);
  const FrontendKey* mfma = fe.key("mfma.f32.4x4x4bf16.1k");
  ASSERT_NE(mfma, nullptr);
  EXPECT_EQ(mfma->builtin, "__builtin_amdgcn_mfma_f32_4x4x4bf16_1k");
  EXPECT_NE(mfma->call.find(", 0, 0, 0)"), std::string::npos) << mfma->call;  // cbsz, abid, blgp: constants
  ASSERT_NE(fe.find("mfma.f32.4x4x4bf16.1k", "gfx90a"), nullptr);
  EXPECT_TRUE(fe.find("mfma.f32.4x4x4bf16.1k", "gfx90a")->accepted);
  EXPECT_TRUE(contains(fe.find("mfma.f32.4x4x4bf16.1k", "gfx90a")->emitted, "llvm.amdgcn.mfma.f32.4x4x4bf16.1k"));
  const FrontendCell* refused = fe.find("mfma.f32.4x4x4bf16.1k", "gfx1100");
  ASSERT_NE(refused, nullptr);
  EXPECT_FALSE(refused->accepted);
  EXPECT_NE(refused->diagnostic.find("needs target feature"), std::string::npos) << refused->diagnostic;
  EXPECT_TRUE(fe.find("s.sleep", "gfx90a")->accepted);
  EXPECT_TRUE(fe.find("s.sleep", "gfx1100")->accepted);
  const FrontendKey* wmma = fe.key("wmma.f32.16x16x16.f16");
  ASSERT_NE(wmma, nullptr);
  EXPECT_EQ(wmma->builtin.rfind("__builtin_amdgcn_wmma_f32_16x16x16_f16_w", 0), 0u) << wmma->builtin;  // a wave-size variant
  ASSERT_NE(fe.find("wmma.f32.16x16x16.f16", "gfx1100"), nullptr);
  EXPECT_TRUE(fe.find("wmma.f32.16x16x16.f16", "gfx1100")->accepted);
  const FrontendKey* made_up = fe.key("made.up");
  ASSERT_NE(made_up, nullptr);
  EXPECT_TRUE(made_up->builtin.empty());
  EXPECT_EQ(fe.find("made.up", "gfx90a"), nullptr);
}

TEST(Frontend, EveryBuiltinInClangsFilesIsARowAndEachKeyTakesTheBuiltinThatMakesItsCall) {
  const std::string clang = clang_of_the_build();
  if (clang.empty()) GTEST_SKIP() << "clang-" << linked_toolchain().llvm_major << " is not installed";
  std::vector<std::string> in_clang = clang_builtin_names(clang);
  // The names HIP authors type, type-suffixed ones too, are read from clang's own builtin table.
  EXPECT_TRUE(contains(in_clang, "__builtin_amdgcn_mfma_f32_4x4x4bf16_1k"));
  EXPECT_TRUE(contains(in_clang, "__builtin_amdgcn_raw_ptr_buffer_atomic_fadd_f32"));
  EXPECT_GT(in_clang.size(), 500u);
  FrontendOptions o;
  o.flavor = linked_toolchain().flavor();
  o.clang = clang;
  o.processors = {"gfx90a", "gfx1100"};
  o.keys = {{"ballot.i64", "llvm.amdgcn.ballot", "llvm.amdgcn.ballot.i64"}};
  o.builtins = {"__builtin_amdgcn_ballot_w32", "__builtin_amdgcn_ballot_w64", "__builtin_amdgcn_sdot4",
                "__builtin_amdgcn_mfma_f32_4x4x4bf16_1k", "__builtin_amdgcn_fence", "__builtin_amdgcn_ds_atomic_fadd_v2bf16",
                "__builtin_amdgcn_no_such_thing"};
  Frontend fe = measure_frontend(o);
  // ballot.i64's call is the wave64 builtin's; the wave32 one is a row of its own.
  ASSERT_NE(fe.key("ballot.i64"), nullptr);
  EXPECT_EQ(fe.key("ballot.i64")->builtin, "__builtin_amdgcn_ballot_w64");
  EXPECT_TRUE(contains(fe.find("ballot.i64", "gfx90a")->emitted, "llvm.amdgcn.ballot.i64"));
  ASSERT_NE(fe.key("__builtin_amdgcn_ballot_w32"), nullptr);
  EXPECT_EQ(fe.key("__builtin_amdgcn_ballot_w64"), nullptr);  // claimed by the key
  EXPECT_EQ(fe.key("__builtin_amdgcn_no_such_thing"), nullptr);
  EXPECT_EQ(fe.provenance.builtin_names.at("in_clang"), 7);
  EXPECT_EQ(fe.provenance.builtin_names.at("declared"), 6);
  // Two builtins clang refuses on one processor, each named with its own words in one compile.
  const FrontendCell* sdot4 = fe.find("__builtin_amdgcn_sdot4", "gfx1100");
  const FrontendCell* mfma = fe.find("__builtin_amdgcn_mfma_f32_4x4x4bf16_1k", "gfx1100");
  ASSERT_TRUE(sdot4 && mfma);
  EXPECT_FALSE(sdot4->accepted);
  EXPECT_NE(sdot4->diagnostic.find("dot1-insts"), std::string::npos) << sdot4->diagnostic;
  EXPECT_FALSE(mfma->accepted);
  EXPECT_NE(mfma->diagnostic.find("mai-insts"), std::string::npos) << mfma->diagnostic;
  EXPECT_TRUE(fe.find("__builtin_amdgcn_sdot4", "gfx90a")->accepted);
  // An ordering of 0 is refused everywhere: the fence is asked again with the sweep's next constant.
  ASSERT_NE(fe.key("__builtin_amdgcn_fence"), nullptr);
  EXPECT_NE(fe.key("__builtin_amdgcn_fence")->call.find("fence(2, \"agent\")"), std::string::npos)
      << fe.key("__builtin_amdgcn_fence")->call;
  EXPECT_TRUE(fe.find("__builtin_amdgcn_fence", "gfx1100")->accepted);
  // A builtin whose arguments clang does not check in Sema is not posed (clang would crash generating it).
  ASSERT_NE(fe.key("__builtin_amdgcn_ds_atomic_fadd_v2bf16"), nullptr);
  EXPECT_TRUE(fe.key("__builtin_amdgcn_ds_atomic_fadd_v2bf16")->call.empty());
  EXPECT_NE(fe.key("__builtin_amdgcn_ds_atomic_fadd_v2bf16")->reason.find("custom type checking"), std::string::npos);
}

// A finding on a wave64 target of a key with a wave64 layout is reproduced with that layout's call, as measured.
TEST(Findings, AWave64CellIsReproducedWithItsOwnInstantiation) {
  if (linked_toolchain().flavor() != "llvm22") GTEST_SKIP() << "the workspace holds the llvm22 column";
  Workspace ws;
  const std::string wave64 = "gfx1100:+wavefrontsize64,-wavefrontsize32";
  std::string cells, line;
  std::istringstream in(test::read(ws.dir / "data/llvm22/cells.jsonl"));
  bool found = false;
  while (std::getline(in, line)) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
    if (j["key"] == "wmma.f32.16x16x16.f16" && j["target"] == wave64) {  // made a crash, to be reproduced
      ASSERT_EQ(j["intrinsic"], "llvm.amdgcn.wmma.f32.16x16x16.f16.v4f32.v16f16");
      j["status"] = "toolchain_crash";
      j.erase("lowered_to");
      j["evidence"] = "LLVM crashed: SIGSEGV in pass 'Branch relaxation pass'";
      j["cause"] = "crash";
      found = true;
    }
    cells += j.dump() + "\n";
  }
  ASSERT_TRUE(found);
  test::write(ws.dir / "data/llvm22/cells.jsonl", cells);
  nlohmann::ordered_json column = nlohmann::ordered_json::parse(test::read(ws.dir / "data/llvm22/column.json"));
  column["counts"]["ok"] = column["counts"]["ok"].get<int>() - 1;  // the column's counts agree with its cells
  column["counts"]["toolchain_crash"] = column["counts"]["toolchain_crash"].get<int>() + 1;
  test::write(ws.dir / "data/llvm22/column.json", column.dump(2) + "\n");
  auto f = test::run_archdb(ws.args({"findings", "--flavor", "llvm22", "--out", (ws.dir / "findings.md").string()}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  std::string md = test::read(ws.dir / "findings.md");
  size_t heading = md.find(": llvm.amdgcn.wmma.f32.16x16x16.f16.v4f32.v16f16 on " + wave64);
  ASSERT_NE(heading, std::string::npos) << md.substr(0, 3000);
  std::string block = md.substr(heading, md.find("\n```\n", heading) - heading);
  EXPECT_NE(block.find("declare <4 x float> @\"llvm.amdgcn.wmma.f32.16x16x16.f16.v4f32.v16f16\"("), std::string::npos)
      << block;
  EXPECT_EQ(block.find("v8f32"), std::string::npos) << block;
}

TEST(Frontend, DisagreementsListBothSides) {
  if (linked_toolchain().flavor() != "llvm22") GTEST_SKIP() << "the workspace holds the llvm22 column";
  Workspace ws;
  // A front end that accepts the MFMA builtin on gfx1201, where the back end cannot select it, and refuses
  // s.sleep on gfx90a, where the back end lowers it.
  Frontend fe;
  fe.provenance.flavor = "llvm22";
  fe.provenance.clang = "clang version 22.1.8";
  fe.provenance.command = {"clang-22"};
  fe.provenance.processors = {"gfx1201", "gfx90a"};
  fe.keys = {{"mfma.f32.4x4x4bf16.1k", "__builtin_amdgcn_mfma_f32_4x4x4bf16_1k", "extern \"C\" void probe() {}", ""},
             {"s.sleep", "__builtin_amdgcn_s_sleep", "extern \"C\" void probe() {}", ""}};
  fe.cells = {{"mfma.f32.4x4x4bf16.1k", "gfx1201", true, "", {"llvm.amdgcn.mfma.f32.4x4x4bf16.1k"}},
              {"mfma.f32.4x4x4bf16.1k", "gfx90a", true, "", {"llvm.amdgcn.mfma.f32.4x4x4bf16.1k"}},
              {"s.sleep", "gfx1201", true, "", {"llvm.amdgcn.s.sleep"}},
              {"s.sleep", "gfx90a", false, "error: made up", {}}};
  fe.sort();
  fe.recount();
  test::write(ws.dir / "data/llvm22/frontend.txt", render_frontend(fe));
  // The committed census, whose crashes (LLVM 22 printing end.cf's i32 mask on wave64 processors) no table decides:
  // the column's own crashes are all decided by LLVM's tables now.
  test::write(ws.dir / "data/llvm22/census.txt", test::read(test::source_dir() / "data/llvm22/census.txt"));
  auto r = test::run_archdb(ws.args({"disagreements", "--flavor", "llvm22", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u) << r.out;
  EXPECT_EQ(j[0]["key"], "mfma.f32.4x4x4bf16.1k");
  EXPECT_EQ(j[0]["target"], "gfx1201");
  EXPECT_EQ(j[0]["kind"], "front end accepts, back end cannot lower");
  EXPECT_EQ(j[0]["backend"]["status"], "arch_absent");
  EXPECT_NE(j[0]["backend"]["evidence"].get<std::string>().find("Cannot select"), std::string::npos);
  EXPECT_EQ(j[1]["key"], "s.sleep");
  EXPECT_EQ(j[1]["kind"], "front end refuses, back end lowers");
  EXPECT_EQ(j[1]["frontend"]["diagnostic"], "error: made up");
  // The findings report carries them, with reproducers.
  auto f = test::run_archdb(ws.args({"findings", "--flavor", "llvm22", "--out", (ws.dir / "findings.md").string()}));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  std::string md = test::read(ws.dir / "findings.md");
  EXPECT_NE(md.find("## Front end and back end disagree (2)"), std::string::npos) << md.substr(0, 2000);
  EXPECT_NE(md.find("llc-22 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1201 -O0"), std::string::npos);
  EXPECT_NE(md.find("## LLVM crashes and hangs"), std::string::npos);
  EXPECT_NE(md.find("s.barrier.signal"), std::string::npos);  // the census's unencodable selection on gfx90a
  EXPECT_NE(md.find("## LLVM selects an instruction the processor has no encoding for, then crashes"), std::string::npos);
  // The census's crashes and hangs decided where the same call lowers: LLVM should have refused them.
  EXPECT_NE(md.find("## LLVM crashes or hangs on a call whose instruction the processor has no encoding for ("),
            std::string::npos);
  EXPECT_NE(md.find("| arch_absent: wherever this call lowers it becomes image_load, which has no encoding on this processor"),
            std::string::npos);
  // An instruction codegen selects and the assembler says the processor lacks: a refusal, and a disagreement.
  EXPECT_NE(md.find("| arch_absent: LLVM selects <instruction>, which LLVM's assembler rejects for this processor"),
            std::string::npos)
      << md.substr(0, 4000);
  // Each reproducer stands in a shell block as it is to be pasted (no table escapes); a crash's crashes llc.
  std::string crash_block;
  size_t blocks = 0;
  for (size_t at = 0; (at = md.find("\n```sh\n", at)) != std::string::npos; ++blocks) {
    at += 7;
    std::string command = md.substr(at, md.find("\n```\n", at) - at);
    EXPECT_EQ(command.find('\n'), std::string::npos) << command;
    EXPECT_EQ(command.find("\\|"), std::string::npos) << command;
    size_t heading_at = md.rfind("\n#### R", at) + 1;
    std::string heading = md.substr(heading_at, at - heading_at);
    if (crash_block.empty() && heading.find(": toolchain_crash: LLVM crashed: SIGSEGV") != std::string::npos)
      crash_block = command;
  }
  EXPECT_GE(blocks, 3u);
  ASSERT_FALSE(crash_block.empty()) << md.substr(0, 4000);
  fs::path script = ws.dir / "reproduce.sh";
  test::write(script, crash_block + "\n");
  auto reproduced = test::run_command({"/bin/bash", script.string()});
  EXPECT_EQ(reproduced.exit_code, 128 + SIGSEGV) << "llc should crash as the probe's worker did: " << reproduced.err;
}

}  // namespace
}  // namespace archdb
