// kernels/mfma_model.h — a CPU model of the batched 4x4 MFMA instructions the wgrad kernels are built on, and
// of the transposing LDS read the gfx950 variants use. Host code only.
//
//   op               CDNA2 (gfx90a)            CDNA3 (gfx940/941/942; gfx950 runs the same)   LLVM intrinsic
//   kF16x4           v_mfma_f32_4x4x4f16       v_mfma_f32_4x4x4_16b_f16        llvm.amdgcn.mfma.f32.4x4x4f16
//   kBF16x4          v_mfma_f32_4x4x4bf16_1k   v_mfma_f32_4x4x4_16b_bf16       llvm.amdgcn.mfma.f32.4x4x4bf16.1k
//   kF32x1           v_mfma_f32_4x4x1f32       v_mfma_f32_4x4x1_16b_f32        llvm.amdgcn.mfma.f32.4x4x1f32
//
// Each is 16 independent blocks b = 0..15 of D_b = A_b * B_b + C_b with A_b 4 x K, B_b K x 4, C_b and D_b 4 x 4
// (K = 4 for the 16-bit ops, 1 for f32), over a wave of 64 lanes. The layout (no CBSZ/ABID/BLGP modifiers):
//   A_b[i][k]  lane 4*b + i, register k / 2, bits [16*(k%2)+15 : 16*(k%2)]   (f32: register 0, all 32 bits)
//   B_b[k][j]  lane 4*b + j, register k / 2, bits [16*(k%2)+15 : 16*(k%2)]   (f32: register 0)
//   C_b[i][j], D_b[i][j]  lane 4*b + j, register i (f32)
// The same on CDNA2 and CDNA3: mfma_layout_csv renders it as AMD's Matrix Instruction Calculator 1.3.2 prints it
// (`--matrix-layout --csv`), and the tests compare every table with the calculator's output byte for byte.
//
// Arithmetic modelled (AMD documents neither the order nor the internal width of the dot product):
//   16-bit ops: inputs decoded exactly to binary32; each product A_b[i][k] * B_b[k][j] is exact in binary32
//   (f16: 11 x 11 significant bits, exponents within range; bf16: 8 x 8 bits, exact unless it over- or
//   underflows binary32); the sum is d = C, then d = d + p_k for k = 0..3, each addition rounded to nearest
//   even in binary32, IEEE subnormals kept (no flush). Hardware may add in another order or wider; any such
//   order is within the f32 summation bound the numerics tests use (wgrad_check.h).
//   f32 op: d = fma(A, B, C), one rounding to nearest even.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace archdb::kernels {

enum class MfmaOp { kF16x4, kBF16x4, kF32x1 };
enum class MfmaArch { kCdna2, kCdna3 };
enum class MfmaMatrix { kA, kB, kC, kD };

struct MfmaGeometry {
  int m = 4, n = 4, k = 4, blocks = 16;
  int input_bits = 16;        // width of one A/B element
  int a_regs = 2, b_regs = 2, cd_regs = 4;
  const char* input_type = "";  // as the calculator names it: "FP16 (IEEE binary16 floating point)"
};
MfmaGeometry mfma_geometry(MfmaOp op);

std::string mfma_arch_name(MfmaArch arch);                // "CDNA2"
std::string mfma_instruction(MfmaOp op, MfmaArch arch);   // "v_mfma_f32_4x4x4f16", "v_mfma_f32_4x4x4_16b_f16"
std::string mfma_intrinsic(MfmaOp op);                    // "llvm.amdgcn.mfma.f32.4x4x4f16"

// One element of one block's matrix: A (row = i, col = k), B (row = k, col = j), C/D (row = i, col = j).
struct MfmaElement {
  int block = 0, row = 0, col = 0;
  bool operator==(const MfmaElement& o) const { return block == o.block && row == o.row && col == o.col; }
};
// Where an element lives: lane, register, and slice (the element's index within the register: 0 for bits
// [15:0] or a whole 32-bit register, 1 for bits [31:16]).
struct MfmaSlot {
  int lane = 0, reg = 0, slice = 0;
  bool operator==(const MfmaSlot& o) const { return lane == o.lane && reg == o.reg && slice == o.slice; }
};

int mfma_slices_per_lane(MfmaOp op, MfmaMatrix m);  // A/B: 4 (16-bit) or 1 (f32); C/D: 4
MfmaSlot mfma_slot(MfmaOp op, MfmaMatrix m, const MfmaElement& e);
// The inverse: the element in slice `s` (0 .. slices_per_lane-1, register-major) of lane `lane`.
MfmaElement mfma_element(MfmaOp op, MfmaMatrix m, int lane, int s);
MfmaSlot mfma_slot_of_index(MfmaOp op, MfmaMatrix m, int lane, int s);

// The layout as the calculator's CSV: "Architecture: CDNA2", "Instruction: V_MFMA_F32_4X4X4F16", the column
// header (lane, v0.[15:0], ...), then one row per lane ("0,A[0][0].B0,..."), newline-terminated.
std::string mfma_layout_csv(MfmaOp op, MfmaArch arch, MfmaMatrix m);

// A wave's registers for one MFMA: per lane, A and B in up to two 32-bit registers, C in four f32.
using LaneRegs2 = std::array<std::array<uint32_t, 2>, 64>;
using LaneAcc = std::array<std::array<float, 4>, 64>;
struct MfmaOperands {
  LaneRegs2 a{}, b{};
  LaneAcc c{};
};

// Writes / reads one element's raw bits (16 or 32) in the registers, at the slot the layout gives.
void mfma_put(MfmaOp op, MfmaMatrix m, LaneRegs2& regs, const MfmaElement& e, uint32_t bits);
uint32_t mfma_get(MfmaOp op, MfmaMatrix m, const LaneRegs2& regs, const MfmaElement& e);
float& mfma_acc(LaneAcc& acc, const MfmaElement& e);  // C/D element e of a wave's accumulators
float mfma_acc(const LaneAcc& acc, const MfmaElement& e);

// D for every lane: the instruction, as modelled above.
LaneAcc mfma_execute(MfmaOp op, const MfmaOperands& in);

// ds_read_b64_tr_b16 (gfx950): every lane addresses 64 bits (four 16-bit values, `fetched[lane]`, as a
// ds_read_b64 would return them); within each quarter of 16 lanes, destination lane 16*g + l receives in
// slice n the value at slice l % 4 of source lane 16*g + l / 4 + 4*n (a 4x16-lane transpose of 16-bit
// values). Checked against Triton's AMD backend, which states independently which element each lane reads
// for this instruction and which MFMA operand layout it must deliver (tests/kernels_mfma_test.cpp,
// TransposingLdsReadMatchesTritonsReadAndOperandLayouts), and consistent with AMD's CDNA4 ISA text (section
// 11.4); not verified on hardware here — no AMD GPU on the machines this was written on.
using LaneHalves4 = std::array<std::array<uint16_t, 4>, 64>;
LaneHalves4 lds_read_b64_tr_b16(const LaneHalves4& fetched);

}  // namespace archdb::kernels
