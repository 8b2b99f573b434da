// kernels/mfma_model.cpp — see mfma_model.h. The layout lives in mfma_slot and its inverse mfma_element; the
// CSV rendering and the arithmetic are both driven by them, so a table that matches the calculator's is the
// layout the arithmetic uses.
#include "kernels/mfma_model.h"

#include <cctype>
#include <cmath>
#include <stdexcept>

#include "kernels/wgrad_numeric.h"

namespace archdb::kernels {

MfmaGeometry mfma_geometry(MfmaOp op) {
  MfmaGeometry g;
  switch (op) {
    case MfmaOp::kF16x4:
      g.input_type = "FP16 (IEEE binary16 floating point)";
      break;
    case MfmaOp::kBF16x4:
      g.input_type = "BF16 (Brain floating point)";
      break;
    case MfmaOp::kF32x1:
      g.k = 1;
      g.input_bits = 32;
      g.a_regs = g.b_regs = 1;
      g.input_type = "FP32 (IEEE binary32 floating point)";
      break;
  }
  return g;
}

std::string mfma_arch_name(MfmaArch arch) { return arch == MfmaArch::kCdna2 ? "CDNA2" : "CDNA3"; }

std::string mfma_instruction(MfmaOp op, MfmaArch arch) {
  const bool cdna3 = arch == MfmaArch::kCdna3;
  switch (op) {
    case MfmaOp::kF16x4: return cdna3 ? "v_mfma_f32_4x4x4_16b_f16" : "v_mfma_f32_4x4x4f16";
    case MfmaOp::kBF16x4: return cdna3 ? "v_mfma_f32_4x4x4_16b_bf16" : "v_mfma_f32_4x4x4bf16_1k";
    case MfmaOp::kF32x1: return cdna3 ? "v_mfma_f32_4x4x1_16b_f32" : "v_mfma_f32_4x4x1f32";
  }
  return "";
}

std::string mfma_intrinsic(MfmaOp op) {
  switch (op) {
    case MfmaOp::kF16x4: return "llvm.amdgcn.mfma.f32.4x4x4f16";
    case MfmaOp::kBF16x4: return "llvm.amdgcn.mfma.f32.4x4x4bf16.1k";
    case MfmaOp::kF32x1: return "llvm.amdgcn.mfma.f32.4x4x1f32";
  }
  return "";
}

namespace {

bool is_cd(MfmaMatrix m) { return m == MfmaMatrix::kC || m == MfmaMatrix::kD; }
int elems_per_reg(MfmaOp op) { return 32 / mfma_geometry(op).input_bits; }  // A/B elements a register holds

void check_element(MfmaOp op, MfmaMatrix m, const MfmaElement& e) {
  const MfmaGeometry g = mfma_geometry(op);
  const int rows = m == MfmaMatrix::kB ? g.k : g.m, cols = m == MfmaMatrix::kA ? g.k : g.n;
  if (e.block < 0 || e.block >= g.blocks || e.row < 0 || e.row >= rows || e.col < 0 || e.col >= cols)
    throw std::out_of_range("MFMA element out of range");
}

}  // namespace

int mfma_slices_per_lane(MfmaOp op, MfmaMatrix m) {
  const MfmaGeometry g = mfma_geometry(op);
  return is_cd(m) ? g.cd_regs : g.k;  // A/B: one slice per k
}

MfmaSlot mfma_slot(MfmaOp op, MfmaMatrix m, const MfmaElement& e) {
  check_element(op, m, e);
  const int per = elems_per_reg(op);
  switch (m) {
    case MfmaMatrix::kA:  // A[i][k]: lane 4*block + i, k packed along the registers
      return {4 * e.block + e.row, e.col / per, e.col % per};
    case MfmaMatrix::kB:  // B[k][j]: lane 4*block + j
      return {4 * e.block + e.col, e.row / per, e.row % per};
    case MfmaMatrix::kC:
    case MfmaMatrix::kD:  // C/D[i][j]: lane 4*block + j, register i
      return {4 * e.block + e.col, e.row, 0};
  }
  return {};
}

MfmaSlot mfma_slot_of_index(MfmaOp op, MfmaMatrix m, int lane, int s) {
  if (is_cd(m)) return {lane, s, 0};
  const int per = elems_per_reg(op);
  return {lane, s / per, s % per};
}

MfmaElement mfma_element(MfmaOp op, MfmaMatrix m, int lane, int s) {
  if (lane < 0 || lane >= 64 || s < 0 || s >= mfma_slices_per_lane(op, m))
    throw std::out_of_range("MFMA lane or slice out of range");
  const int block = lane / 4, t = lane % 4;
  switch (m) {
    case MfmaMatrix::kA: return {block, t, s};  // i = lane % 4, k = slice
    case MfmaMatrix::kB: return {block, s, t};  // k = slice, j = lane % 4
    case MfmaMatrix::kC:
    case MfmaMatrix::kD: return {block, s, t};  // i = register, j = lane % 4
  }
  return {};
}

std::string mfma_layout_csv(MfmaOp op, MfmaArch arch, MfmaMatrix m) {
  const char name = "ABCD"[static_cast<int>(m)];
  std::string instr = mfma_instruction(op, arch);
  for (char& ch : instr) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  std::string out = "Architecture: " + mfma_arch_name(arch) + "\nInstruction: " + instr + "\nlane";
  const int slices = mfma_slices_per_lane(op, m);
  const int bits = is_cd(m) ? 32 : mfma_geometry(op).input_bits;
  for (int s = 0; s < slices; ++s) {
    const MfmaSlot slot = mfma_slot_of_index(op, m, 0, s);
    out += ",v" + std::to_string(slot.reg);
    if (bits < 32)
      out += ".[" + std::to_string(bits * slot.slice + bits - 1) + ":" + std::to_string(bits * slot.slice) + "]";
  }
  out += "\n";
  for (int lane = 0; lane < 64; ++lane) {
    out += std::to_string(lane);
    for (int s = 0; s < slices; ++s) {
      const MfmaElement e = mfma_element(op, m, lane, s);
      out += std::string(",") + name + "[" + std::to_string(e.row) + "][" + std::to_string(e.col) + "].B" +
             std::to_string(e.block);
    }
    out += "\n";
  }
  return out;
}

void mfma_put(MfmaOp op, MfmaMatrix m, LaneRegs2& regs, const MfmaElement& e, uint32_t bits) {
  const MfmaSlot s = mfma_slot(op, m, e);
  uint32_t& reg = regs[s.lane][s.reg];
  if (mfma_geometry(op).input_bits == 32) {
    reg = bits;
  } else {
    const int shift = 16 * s.slice;
    reg = (reg & ~(0xffffu << shift)) | ((bits & 0xffffu) << shift);
  }
}

uint32_t mfma_get(MfmaOp op, MfmaMatrix m, const LaneRegs2& regs, const MfmaElement& e) {
  const MfmaSlot s = mfma_slot(op, m, e);
  const uint32_t reg = regs[s.lane][s.reg];
  return mfma_geometry(op).input_bits == 32 ? reg : (reg >> (16 * s.slice)) & 0xffffu;
}

float& mfma_acc(LaneAcc& acc, const MfmaElement& e) {
  const MfmaSlot s = mfma_slot(MfmaOp::kF16x4, MfmaMatrix::kD, e);  // C/D layout is the same for every op
  return acc[s.lane][s.reg];
}

float mfma_acc(const LaneAcc& acc, const MfmaElement& e) {
  const MfmaSlot s = mfma_slot(MfmaOp::kF16x4, MfmaMatrix::kD, e);
  return acc[s.lane][s.reg];
}

namespace {

float decode(MfmaOp op, uint32_t bits) {
  switch (op) {
    case MfmaOp::kF16x4: return decode_f16(static_cast<uint16_t>(bits));
    case MfmaOp::kBF16x4: return decode_bf16(static_cast<uint16_t>(bits));
    case MfmaOp::kF32x1: return float_from_bits(bits);
  }
  return 0.0f;
}

}  // namespace

namespace {

// The layout of one op, tabulated from mfma_slot once: the emulation runs the model millions of times.
struct SlotTables {
  MfmaGeometry g;
  MfmaSlot a[16][4][4], b[16][4][4], cd[16][4][4];  // [block][row][col]
};

SlotTables make_tables(MfmaOp op) {
  SlotTables t;
  t.g = mfma_geometry(op);
  for (int blk = 0; blk < t.g.blocks; ++blk)
    for (int x = 0; x < 4; ++x)
      for (int y = 0; y < 4; ++y) {
        if (y < t.g.k) t.a[blk][x][y] = mfma_slot(op, MfmaMatrix::kA, {blk, x, y});
        if (x < t.g.k) t.b[blk][x][y] = mfma_slot(op, MfmaMatrix::kB, {blk, x, y});
        t.cd[blk][x][y] = mfma_slot(op, MfmaMatrix::kD, {blk, x, y});
      }
  return t;
}

const SlotTables& tables(MfmaOp op) {
  static const SlotTables f16 = make_tables(MfmaOp::kF16x4), bf16 = make_tables(MfmaOp::kBF16x4),
                          f32 = make_tables(MfmaOp::kF32x1);
  return op == MfmaOp::kF16x4 ? f16 : op == MfmaOp::kBF16x4 ? bf16 : f32;
}

float element(MfmaOp op, const LaneRegs2& regs, const MfmaSlot& s, int bits) {
  const uint32_t reg = regs[s.lane][s.reg];
  return decode(op, bits == 32 ? reg : (reg >> (16 * s.slice)) & 0xffffu);
}

}  // namespace

LaneAcc mfma_execute(MfmaOp op, const MfmaOperands& in) {
  const SlotTables& t = tables(op);
  const MfmaGeometry& g = t.g;
  LaneAcc d{};
  float a[4][4], b[4][4];
  for (int blk = 0; blk < g.blocks; ++blk) {
    for (int x = 0; x < 4; ++x)
      for (int k = 0; k < g.k; ++k) {
        a[x][k] = element(op, in.a, t.a[blk][x][k], g.input_bits);  // A[i = x][k]
        b[k][x] = element(op, in.b, t.b[blk][k][x], g.input_bits);  // B[k][j = x]
      }
    for (int i = 0; i < g.m; ++i)
      for (int j = 0; j < g.n; ++j) {
        const MfmaSlot& s = t.cd[blk][i][j];
        float acc = in.c[s.lane][s.reg];
        for (int k = 0; k < g.k; ++k) {
          if (op == MfmaOp::kF32x1) {
            acc = std::fma(a[i][k], b[k][j], acc);
          } else {
            const float p = a[i][k] * b[k][j];  // exact for 16-bit inputs (see the header)
            acc = acc + p;                      // one rounding per addition
          }
        }
        d[s.lane][s.reg] = acc;
      }
  }
  return d;
}

LaneHalves4 lds_read_b64_tr_b16(const LaneHalves4& fetched) {
  LaneHalves4 out{};
  for (int lane = 0; lane < 64; ++lane) {
    const int g = lane / 16, l = lane % 16;
    for (int n = 0; n < 4; ++n) out[lane][n] = fetched[16 * g + l / 4 + 4 * n][l % 4];
  }
  return out;
}

}  // namespace archdb::kernels
