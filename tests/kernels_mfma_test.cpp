// tests/kernels_mfma_test.cpp — the CPU model of the 4x4 MFMA family: its layout renders as AMD's Matrix
// Instruction Calculator prints it (all 24 tables in shared/reference/mfma-layouts, byte for byte), its
// arithmetic is a per-block matmul, and the transposing LDS read moves what the kernels rely on.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "kernels/mfma_model.h"
#include "kernels/wgrad_numeric.h"
#include "test_support.h"

namespace archdb::kernels {
namespace {
namespace fs = std::filesystem;

fs::path layouts_dir() { return test::source_dir() / ".." / "shared" / "reference" / "mfma-layouts"; }

struct Instr {
  MfmaOp op;
  MfmaArch arch;
};
const Instr kInstrs[] = {{MfmaOp::kF16x4, MfmaArch::kCdna2},  {MfmaOp::kBF16x4, MfmaArch::kCdna2},
                         {MfmaOp::kF32x1, MfmaArch::kCdna2},  {MfmaOp::kF16x4, MfmaArch::kCdna3},
                         {MfmaOp::kBF16x4, MfmaArch::kCdna3}, {MfmaOp::kF32x1, MfmaArch::kCdna3}};
const MfmaMatrix kMatrices[] = {MfmaMatrix::kA, MfmaMatrix::kB, MfmaMatrix::kC, MfmaMatrix::kD};
const MfmaOp kOps[] = {MfmaOp::kF16x4, MfmaOp::kBF16x4, MfmaOp::kF32x1};

std::string stem(const Instr& in) {
  std::string arch = in.arch == MfmaArch::kCdna2 ? "cdna2" : "cdna3";
  return arch + "." + mfma_instruction(in.op, in.arch);
}

TEST(MfmaLayout, ModelRendersEveryCalculatorTableExactly) {
  if (!fs::exists(layouts_dir())) GTEST_SKIP() << "MFMA layout reference not found at " << layouts_dir();
  std::set<std::string> compared;
  for (const Instr& in : kInstrs)
    for (MfmaMatrix m : kMatrices) {
      const std::string file = stem(in) + "." + "ABCD"[static_cast<int>(m)] + ".csv";
      ASSERT_TRUE(fs::exists(layouts_dir() / file)) << layouts_dir() / file;
      EXPECT_EQ(mfma_layout_csv(in.op, in.arch, m), test::read(layouts_dir() / file)) << file;
      compared.insert(file);
    }
  EXPECT_EQ(compared.size(), 24u);
  // Every table in the folder is one of them: none left unchecked.
  for (const auto& entry : fs::directory_iterator(layouts_dir()))
    if (entry.path().extension() == ".csv") {
      EXPECT_TRUE(compared.count(entry.path().filename().string())) << entry.path() << " is not compared";
    }
}

// The calculator's --detail-instruction: dimensions, register counts and data types agree with the model.
TEST(MfmaLayout, DetailsAgreeWithTheModelsGeometry) {
  if (!fs::exists(layouts_dir())) GTEST_SKIP() << "MFMA layout reference not found at " << layouts_dir();
  for (const Instr& in : kInstrs) {
    const fs::path file = layouts_dir() / (stem(in) + ".detail.txt");
    ASSERT_TRUE(fs::exists(file)) << file;
    std::map<std::string, std::string> fields;
    std::istringstream text(test::read(file));
    for (std::string line; std::getline(text, line);) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const size_t first = line.find_first_not_of(' ');
      const size_t value = line.find_first_not_of(' ', colon + 1);
      fields[line.substr(first, colon - first)] = value == std::string::npos ? "" : line.substr(value);
    }
    const MfmaGeometry g = mfma_geometry(in.op);
    std::string upper = mfma_instruction(in.op, in.arch);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(fields["Architecture"], mfma_arch_name(in.arch)) << file;
    EXPECT_EQ(fields["Instruction"], upper) << file;
    EXPECT_EQ(fields["M"], std::to_string(g.m)) << file;
    EXPECT_EQ(fields["N"], std::to_string(g.n)) << file;
    EXPECT_EQ(fields["K"], std::to_string(g.k)) << file;
    EXPECT_EQ(fields["blocks"], std::to_string(g.blocks)) << file;
    EXPECT_EQ(fields["GPRs required for A"], std::to_string(g.a_regs)) << file;
    EXPECT_EQ(fields["GPRs required for B"], std::to_string(g.b_regs)) << file;
    EXPECT_EQ(fields["GPRs required for C"], std::to_string(g.cd_regs)) << file;
    EXPECT_EQ(fields["GPRs required for D"], std::to_string(g.cd_regs)) << file;
    EXPECT_EQ(fields["Src0"], g.input_type) << file;
    EXPECT_EQ(fields["Src1"], g.input_type) << file;
    EXPECT_EQ(fields["Src2"], "FP32 (IEEE binary32 floating point)") << file;
    EXPECT_EQ(fields["Vdst"], "FP32 (IEEE binary32 floating point)") << file;
  }
}

// mfma_slot and mfma_element are inverse, and every element of every block has exactly one slot.
TEST(MfmaLayout, SlotsAndElementsAreABijection) {
  for (MfmaOp op : kOps)
    for (MfmaMatrix m : kMatrices) {
      const MfmaGeometry g = mfma_geometry(op);
      const int rows = m == MfmaMatrix::kB ? g.k : g.m, cols = m == MfmaMatrix::kA ? g.k : g.n;
      std::set<std::tuple<int, int, int>> seen;
      for (int lane = 0; lane < 64; ++lane)
        for (int s = 0; s < mfma_slices_per_lane(op, m); ++s) {
          const MfmaElement e = mfma_element(op, m, lane, s);
          EXPECT_EQ(mfma_slot(op, m, e), mfma_slot_of_index(op, m, lane, s));
          EXPECT_TRUE(seen.insert({e.block, e.row, e.col}).second);
        }
      EXPECT_EQ(static_cast<int>(seen.size()), g.blocks * rows * cols);
    }
}

// Spot checks written from the calculator's formulas, independent of the model's code.
TEST(MfmaLayout, KnownSlots) {
  // A[2][1] of block 5: lane 4*5 + 2, GPR floor(1/2) = v0, bits [31:16].
  EXPECT_EQ(mfma_slot(MfmaOp::kF16x4, MfmaMatrix::kA, {5, 2, 1}), (MfmaSlot{22, 0, 1}));
  // B[3][0] of block 15: lane 60, v1 bits [31:16].
  EXPECT_EQ(mfma_slot(MfmaOp::kBF16x4, MfmaMatrix::kB, {15, 3, 0}), (MfmaSlot{60, 1, 1}));
  // D[1][2] of block 3: lane 14, v1.
  EXPECT_EQ(mfma_slot(MfmaOp::kF16x4, MfmaMatrix::kD, {3, 1, 2}), (MfmaSlot{14, 1, 0}));
  // f32: A[3][0] of block 7 in lane 31, v0; B[0][1] of block 0 in lane 1.
  EXPECT_EQ(mfma_slot(MfmaOp::kF32x1, MfmaMatrix::kA, {7, 3, 0}), (MfmaSlot{31, 0, 0}));
  EXPECT_EQ(mfma_slot(MfmaOp::kF32x1, MfmaMatrix::kB, {0, 0, 1}), (MfmaSlot{1, 0, 0}));
}

uint32_t encode(MfmaOp op, float v) {
  switch (op) {
    case MfmaOp::kF16x4: return encode_f16(v);
    case MfmaOp::kBF16x4: return encode_bf16(v);
    case MfmaOp::kF32x1: return bits_from_float(v);
  }
  return 0;
}
float decode(MfmaOp op, uint32_t bits) {
  switch (op) {
    case MfmaOp::kF16x4: return decode_f16(static_cast<uint16_t>(bits));
    case MfmaOp::kBF16x4: return decode_bf16(static_cast<uint16_t>(bits));
    case MfmaOp::kF32x1: return float_from_bits(bits);
  }
  return 0;
}

// Random A, B, C per block, packed by the layout; D is each block's own matmul (in double). `draw` gives an
// element. Exact: small integers, every sum exact in f32. Otherwise within 5 * 2^-24 * (|C| + sum |A*B|): four
// f32 additions of exact products, each rounding by at most 2^-24 relative (gamma(4) < 5 * 2^-24).
template <class Draw>
void check_against_block_matmul(MfmaOp op, Draw draw, bool exact) {
  const MfmaGeometry g = mfma_geometry(op);
  MfmaOperands in;
  double A[16][4][4] = {}, B[16][4][4] = {}, C[16][4][4] = {};
  for (int b = 0; b < 16; ++b) {
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < g.k; ++k) {
        const uint32_t bits = encode(op, draw());
        A[b][i][k] = decode(op, bits);
        mfma_put(op, MfmaMatrix::kA, in.a, {b, i, k}, bits);
      }
    for (int k = 0; k < g.k; ++k)
      for (int j = 0; j < 4; ++j) {
        const uint32_t bits = encode(op, draw());
        B[b][k][j] = decode(op, bits);
        mfma_put(op, MfmaMatrix::kB, in.b, {b, k, j}, bits);
      }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) mfma_acc(in.c, {b, i, j}) = static_cast<float>(C[b][i][j] = draw());
  }
  const LaneAcc d = mfma_execute(op, in);
  for (int b = 0; b < 16; ++b)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        double want = C[b][i][j], scale = std::fabs(want);
        for (int k = 0; k < g.k; ++k) {
          want += A[b][i][k] * B[b][k][j];
          scale += std::fabs(A[b][i][k] * B[b][k][j]);
        }
        const double got = mfma_acc(d, {b, i, j});
        if (exact) {
          EXPECT_EQ(got, want) << mfma_intrinsic(op) << " block " << b << " D[" << i << "][" << j << "]";
        } else {
          EXPECT_NEAR(got, want, 5 * 0x1p-24 * scale) << mfma_intrinsic(op) << " block " << b;
        }
      }
}

TEST(MfmaModel, SmallIntegerBlocksAreExact) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> v(-8, 8);
  for (MfmaOp op : kOps) check_against_block_matmul(op, [&] { return static_cast<float>(v(rng)); }, true);
}

TEST(MfmaModel, RandomBlocksMatchEachBlocksMatmul) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> v(-2.0f, 2.0f);
  for (int rep = 0; rep < 20; ++rep)
    for (MfmaOp op : kOps) check_against_block_matmul(op, [&] { return v(rng); }, false);
}

// The modelled rounding: C + p0 + p1 + p2 + p3 in order, each addition rounded in f32.
TEST(MfmaModel, AccumulatesInOrderWithF32Rounding) {
  for (MfmaOp op : {MfmaOp::kF16x4, MfmaOp::kBF16x4}) {
    MfmaOperands in;
    for (int k = 0; k < 4; ++k) {
      mfma_put(op, MfmaMatrix::kA, in.a, {0, 0, k}, encode(op, 0x1p-12f));
      mfma_put(op, MfmaMatrix::kB, in.b, {0, k, 0}, encode(op, 0x1p-12f));
    }
    mfma_acc(in.c, {0, 0, 0}) = 1.0f;
    // Each 1 + 2^-24 is a tie that rounds to even (1): four of them leave 1. One rounding of the exact sum
    // would give 1 + 2^-22.
    EXPECT_EQ(mfma_acc(mfma_execute(op, in), {0, 0, 0}), 1.0f) << mfma_intrinsic(op);
  }
  MfmaOperands in;  // f32: a fused multiply-add, one rounding
  mfma_put(MfmaOp::kF32x1, MfmaMatrix::kA, in.a, {0, 0, 0}, bits_from_float(1.0f + 0x1p-23f));
  mfma_put(MfmaOp::kF32x1, MfmaMatrix::kB, in.b, {0, 0, 0}, bits_from_float(1.0f - 0x1p-23f));
  mfma_acc(in.c, {0, 0, 0}) = -1.0f;
  EXPECT_EQ(mfma_acc(mfma_execute(MfmaOp::kF32x1, in), {0, 0, 0}), -0x1p-46f);
}

// ds_read_b64_tr_b16 as Triton describes its use: in each 16-lane quarter, lane 4*q + x... reads four
// consecutive rows M[4q .. 4q+3] of column K = L / 4 (the M-contiguous layout), and lane m receives
// row M[m], columns K0..K3.
TEST(MfmaModel, TransposingLdsReadGivesEachLaneARow) {
  auto value = [](int quarter, int m, int k) { return static_cast<uint16_t>(quarter * 256 + m * 16 + k); };
  LaneHalves4 fetched{};
  for (int lane = 0; lane < 64; ++lane) {
    const int quarter = lane / 16, l = lane % 16, k = l / 4, q = l % 4;
    for (int x = 0; x < 4; ++x) fetched[lane][x] = value(quarter, 4 * q + x, k);
  }
  const LaneHalves4 out = lds_read_b64_tr_b16(fetched);
  for (int lane = 0; lane < 64; ++lane)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(out[lane][k], value(lane / 16, lane % 16, k)) << "lane " << lane;
}

// ds_read_b64_tr_b16 against a statement of it made independently of this model: Triton's AMD backend
// (triton-lang/triton, lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp) describes, as linear layouts
// over GF(2), (a) which 16-bit element each (lane, register) READS from LDS when it issues the instruction
// (chooseDotDsReadB64TrLayout, 16-bit elements: 64 bits per lane, shuffle groups of 16 lanes) and (b) the MFMA
// operand layout the instruction must DELIVER (mfmaDotToLinearLayout, kWidth 4). Its lowering emits the
// instruction between the two, so the hardware's lane relation is whatever maps (a) onto (b). The bases are
// restated here as data, per [non-K, K]; an element's coordinates are the XOR of the bases of the set bits of its
// register and lane index. AMD's CDNA4 ISA (section 11.4, "MFMA Transpose Load from LDS") says the same in
// words: each lane reads 4 consecutive M or N values; after the transpose each lane holds 4 consecutive K values,
// and for the 32x32 shapes the first read covers K=0..3 (lanes 0-31) and K=8..11 (lanes 32-63) — the layouts
// below with a second instruction at K+4. Not verified on hardware (no AMD GPU here).
struct Basis {
  int non_k, k;
};
std::pair<int, int> apply_layout(const std::vector<Basis>& reg, const std::vector<Basis>& lane, int r, int l) {
  int non_k = 0, k = 0;
  for (size_t b = 0; b < reg.size(); ++b)
    if (r >> b & 1) non_k ^= reg[b].non_k, k ^= reg[b].k;
  for (size_t b = 0; b < lane.size(); ++b)
    if (l >> b & 1) non_k ^= lane[b].non_k, k ^= lane[b].k;
  return {non_k, k};
}

TEST(MfmaModel, TransposingLdsReadMatchesTritonsReadAndOperandLayouts) {
  struct Shape {
    const char* name;
    std::vector<Basis> read_reg, read_lane, operand_reg, operand_lane;
  };
  const std::vector<Shape> shapes = {
      {"mfma 16x16 (kWidth 4)",
       {{1, 0}, {2, 0}},
       {{4, 0}, {8, 0}, {0, 1}, {0, 2}, {0, 4}, {0, 8}},
       {{0, 1}, {0, 2}},
       {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {0, 4}, {0, 8}}},
      {"mfma 32x32 (kWidth 4)",
       {{1, 0}, {2, 0}},
       {{4, 0}, {8, 0}, {0, 1}, {0, 2}, {16, 0}, {0, 4}},
       {{0, 1}, {0, 2}},
       {{1, 0}, {2, 0}, {4, 0}, {8, 0}, {16, 0}, {0, 4}}},
  };
  auto element = [](int non_k, int k) { return static_cast<uint16_t>(k * 64 + non_k); };  // distinct per element
  for (const Shape& shape : shapes) {
    LaneHalves4 fetched{};
    for (int lane = 0; lane < 64; ++lane)
      for (int r = 0; r < 4; ++r) {
        auto [non_k, k] = apply_layout(shape.read_reg, shape.read_lane, r, lane);
        fetched[lane][r] = element(non_k, k);
      }
    const LaneHalves4 out = lds_read_b64_tr_b16(fetched);
    for (int lane = 0; lane < 64; ++lane)
      for (int r = 0; r < 4; ++r) {
        auto [non_k, k] = apply_layout(shape.operand_reg, shape.operand_lane, r, lane);
        EXPECT_EQ(out[lane][r], element(non_k, k)) << shape.name << ": lane " << lane << " register slice " << r;
      }
  }
}

TEST(MfmaModel, NamesPerArchitecture) {
  EXPECT_EQ(mfma_instruction(MfmaOp::kBF16x4, MfmaArch::kCdna2), "v_mfma_f32_4x4x4bf16_1k");
  EXPECT_EQ(mfma_instruction(MfmaOp::kBF16x4, MfmaArch::kCdna3), "v_mfma_f32_4x4x4_16b_bf16");
  EXPECT_EQ(mfma_instruction(MfmaOp::kF32x1, MfmaArch::kCdna3), "v_mfma_f32_4x4x1_16b_f32");
  EXPECT_EQ(mfma_intrinsic(MfmaOp::kBF16x4), "llvm.amdgcn.mfma.f32.4x4x4bf16.1k");
}

// The 16-bit formats: exact decoding, round-to-nearest-even encoding at the edges.
TEST(MfmaModel, SixteenBitFormats) {
  EXPECT_EQ(decode_f16(0x3c00), 1.0f);
  EXPECT_EQ(decode_f16(0x0001), 0x1p-24f);
  EXPECT_EQ(decode_f16(0x7bff), 65504.0f);
  EXPECT_EQ(decode_f16(0xc000), -2.0f);
  EXPECT_TRUE(std::isinf(decode_f16(0x7c00)));
  EXPECT_EQ(encode_f16(1.0f + 0x1p-11f), 0x3c00);              // tie to even
  EXPECT_EQ(encode_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);   // above the tie
  EXPECT_EQ(encode_f16(65519.0f), 0x7bff);
  EXPECT_EQ(encode_f16(65520.0f), 0x7c00);
  EXPECT_EQ(encode_f16(0x1p-25f), 0x0000);                     // tie to even (0)
  EXPECT_EQ(encode_f16(0x1p-25f + 0x1p-30f), 0x0001);
  EXPECT_EQ(encode_f16(3.0f * 0x1p-25f), 0x0002);              // 1.5 ulp: tie to even (2)
  EXPECT_EQ(encode_f16(-0x1p-14f), 0x8400);
  EXPECT_EQ(encode_bf16(1.0f + 0x1p-8f), 0x3f80);              // tie to even
  EXPECT_EQ(encode_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(decode_bf16(0xbf80), -1.0f);
  for (uint32_t h = 0; h < 0x10000; ++h) {  // every non-NaN value round-trips
    const uint16_t bits = static_cast<uint16_t>(h);
    if (!((h & 0x7c00) == 0x7c00 && (h & 0x3ff))) {
      ASSERT_EQ(encode_f16(decode_f16(bits)), bits) << h;
    }
    if (!((h & 0x7f80) == 0x7f80 && (h & 0x7f))) {
      ASSERT_EQ(encode_bf16(decode_bf16(bits)), bits) << h;
    }
  }
}

}  // namespace
}  // namespace archdb::kernels
