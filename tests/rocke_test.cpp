// tests/rocke_test.cpp — archdb's columns written in rocKE's arch-domain format (db/rocke.h): the mapping of
// statuses onto rocKE's taxonomy, the posing generation a column satisfies, and the fields as rocKE's generator
// writes them (what rocKE's reader and artifact test look at; docs/data.md "Export for a peer").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "db/column.h"
#include "db/rocke.h"
#include "support/error.h"

namespace archdb {
namespace {

TEST(RockeStatus, SignatureMismatchIsNameAbsentAndEveryOtherStoredStatusIsItself) {
  const std::vector<std::string> rocke_taxonomy = {"ok", "name_absent", "arch_absent", "target_unsupported",
                                                   "toolchain_crash", "toolchain_timeout", "probe_error"};
  for (Status s : storable_statuses()) {
    const std::string mapped(rocke_status(s));
    EXPECT_NE(std::find(rocke_taxonomy.begin(), rocke_taxonomy.end(), mapped), rocke_taxonomy.end()) << mapped;
    EXPECT_NE(mapped, "probe_error");
    if (s == Status::kSignatureMismatch) EXPECT_EQ(mapped, "name_absent");
    else EXPECT_EQ(mapped, status_name(s));
  }
  EXPECT_THROW(rocke_status(Status::kProbeError), Error);
}

Provenance measured_provenance() {
  Provenance p;
  p.flavor = "llvm22";
  p.llvm_version = "22.1.8";
  p.llvm_major = 22;
  p.identity = "Debian LLVM version 22.1.8; Optimized build";
  p.immarg_sweep = {1, 2, 4, 12, 16};
  p.targets = {"gfx942", "gfx11-generic", "gfx90a"};
  return p;
}

TEST(RockeGeneration, FollowsWhatTheProbeDid) {
  Provenance p = measured_provenance();
  EXPECT_EQ(rocke_generation(p), 4);
  p.immarg_sweep = {1, 2, 4, 16};  // no 12: rocKE's sweep is not covered
  EXPECT_EQ(rocke_generation(p), 2);
  p = measured_provenance();
  p.timeout_s = 0;
  EXPECT_EQ(rocke_generation(p), 1);
  p = measured_provenance();
  p.opt_level = "O3";
  EXPECT_EQ(rocke_generation(p), 1);
}

Cell cell(const std::string& key, const std::string& target, Status status, const std::string& intrinsic) {
  Cell c;
  c.key = key;
  c.target = target;
  c.status = status;
  c.intrinsic = intrinsic;
  if (status != Status::kOk) c.evidence = "LLVM ERROR: Cannot select: intrinsic %" + intrinsic;
  return c;
}

TEST(RenderRocke, WritesWhatRockesGeneratorWrites) {
  Column column;
  column.provenance = measured_provenance();
  Cell mismatch = cell("scale.11", "gfx90a", Status::kSignatureMismatch, "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4");
  mismatch.evidence = "declared 11 operands; LLVM 22.1.8 expects 9";
  Cell upgraded = cell("fadd.v2f16", "gfx942", Status::kOk, "llvm.amdgcn.global.atomic.fadd.v2f16.p1.v2f16");
  upgraded.note = "auto-upgraded: the call becomes atomicrmw";
  Cell swept = cell("load.lds", "gfx942", Status::kOk, "llvm.amdgcn.global.load.lds");
  swept.posed = CallPosing{{4, 4}, false, true};
  Cell other_value = cell("ordered.add", "gfx942", Status::kOk, "llvm.amdgcn.ds.ordered.add");
  other_value.posed = CallPosing{{16777217, 16777217}, false, true};
  Cell unassembled = cell("image.load", "gfx942", Status::kOk, "llvm.amdgcn.image.load.1d.v4f32.i32.v8i32");
  unassembled.mc_check = "instruction not supported on this GPU";
  column.cells = {mismatch, upgraded, swept, other_value, unassembled,
                  cell("load.lds", "gfx11-generic", Status::kArchAbsent, "llvm.amdgcn.global.load.lds")};
  nlohmann::json j = nlohmann::json::parse(render_rocke(column));

  EXPECT_EQ(j["schema"], kRockeSchema);
  EXPECT_EQ(j["toolchain"]["arches"], nlohmann::json({"gfx11-generic", "gfx90a", "gfx942"}));  // Python's sorted()
  EXPECT_EQ(j["toolchain"]["generator"], 4);
  EXPECT_EQ(j["toolchain"]["archdb_generator"], Provenance::kGeneratorVersion);
  EXPECT_EQ(j["toolchain"]["probe_cflags"], nlohmann::json({"-O0", "-nogpulib"}));
  EXPECT_EQ(j["toolchain"]["probe_timeout_s"], 60);

  EXPECT_EQ(j["keys"]["scale.11"]["gfx90a"]["status"], "name_absent");
  EXPECT_EQ(j["keys"]["scale.11"]["gfx90a"]["evidence"], "signature_mismatch: " + mismatch.evidence);
  EXPECT_FALSE(j["canonical"].contains("scale.11")) << "rocKE's canonical holds only names LLVM resolved";
  EXPECT_EQ(j["canonical"]["fadd.v2f16"], "(auto-upgraded)");
  EXPECT_EQ(j["canonical"]["load.lds"], "llvm.amdgcn.global.load.lds");
  EXPECT_EQ(j["keys"]["load.lds"]["gfx942"]["probe_imm"], 4);
  EXPECT_FALSE(j["keys"]["load.lds"]["gfx942"].contains("evidence"));
  EXPECT_EQ(j["keys"]["load.lds"]["gfx11-generic"]["verified_on"], "llvm22");
  EXPECT_FALSE(j["keys"]["ordered.add"]["gfx942"].contains("probe_imm")) << "not a value of rocKE's sweep";
  EXPECT_EQ(j["keys"]["ordered.add"]["gfx942"]["archdb_imm"], 16777217);
  EXPECT_EQ(j["keys"]["ordered.add"]["gfx942"]["archdb_posing"],
            "immediates 16777217, 16777217; divergent operands; result used");
  EXPECT_EQ(j["keys"]["image.load"]["gfx942"]["status"], "arch_absent") << "an ok the assembler rejects is no ok";
  EXPECT_EQ(j["keys"]["image.load"]["gfx942"]["evidence"],
            "LLVM's assembler rejects what the call lowers to: instruction not supported on this GPU");

}

}  // namespace
}  // namespace archdb
