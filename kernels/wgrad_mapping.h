// kernels/wgrad_mapping.h — THE tile and lane mapping of the bundled weight-gradient kernels: which input
// element goes to which LDS slot, which lane reads which LDS slot into which register slice of the 4x4x4
// MFMA, and which lane and register of the result is which weight. One copy, used by the device kernels
// (wgrad_mfma.hip, wgrad_portable.hip, through wgrad_program.h) and by the host emulation
// (wgrad_emulate.cpp), so what is tested on the CPU is what runs on the GPU.
//
// Tensors (NCHW, 16-bit inputs as raw bits, f32 result):
//   X  [N][C][H][W]          the layer's input
//   dY [N][C][Ho][Wo]        the gradient of its output, Ho = (H + 2*pad - R) / stride + 1 (same for W)
//   dW [C][cpg][R][S]        the weight gradient (R = S = filter; cpg = 1 for depthwise)
// dW[oc][ci][r][s] = sum over n, ho, wo of dY[n][oc][ho][wo] * X[n][g*cpg+ci][ho*stride-pad+r][wo*stride-pad+s]
// with g = oc / cpg and out-of-range X (padding) read as 0.
//
// The MFMA atom: v_mfma_f32_4x4x4{f16,bf16_1k} (CDNA3: _16b_) does 16 independent 4x4x4 products D = A*B + C
// per wave64 instruction, one per block b = 0..15. Lane L = 4*b + t: for A it holds row i = t of block b with
// k = 0..3 in its four 16-bit register slices (v0.[15:0], v0.[31:16], v1.[15:0], v1.[31:16]); for B it holds
// column j = t with k = 0..3 the same way; for C/D it holds column j = t, rows i = 0..3 in v0..v3 (see
// mfma_model.h, which reproduces AMD's tables). A "fragment" below is one lane's four 16-bit slices, k order.
//
// Depthwise (groups = channels). Per channel the weight gradient is a GEMM over input rows:
//   dW[c][r][s] = sum over k = (n, h, wo) of A[r][k] * B[k][s]
//   A[r][(n,h,wo)] = dY[n][c][(h+pad-r)/stride][wo]  (0 unless h+pad-r is a non-negative multiple of stride
//                                                      and the quotient is < Ho)
//   B[(n,h,wo)][s] = X[n][c][h][wo*stride-pad+s]    (0 in the padding)
// The sum over h picks exactly h = ho*stride-pad+r, so this is the definition above. M = R rows and N = S
// columns are tiled 4x4 (MT = NT = ceil(R/4) tiles, rows/columns past R masked), K runs over the (n, h)
// "rows" of the reduction and, inside a row, over wo in chunks of 16 (four MFMA steps of 4). The 16 MFMA
// blocks are 16 consecutive channels: work-group x = channel group, block b = channel 16*x + b (channels past
// C are zeros and never stored).
//
// Grouped (cpg = 4 or 8 channels per group, G = C / cpg groups). Per group g and filter tap (r, s):
//   D[co][ci] = sum over k = (n, ho, wo) of dY[n][g*cpg+co][ho][wo] * X[n][g*cpg+ci][ho*stride-pad+r][wo*stride-pad+s]
// a cpg x cpg GEMM: one 4x4 tile (cpg 4) or 2x2 tiles (cpg 8). The 16 blocks are 16 consecutive (group, tap)
// pairs p = 16*x + b, p = g*R*S + r*S + s; K runs over (n, ho) rows and wo chunks of 16 as above.
//
// A reduction is split over work-group z (target_blocks slices of consecutive rows: (n, h) rows for the
// depthwise MFMA kernels, (n, ho) rows for the others). With one slice the kernel writes dW; with more, each
// slice writes its partial dW to a workspace [target_blocks][E] and wgrad_reduce_z sums the slices in z order.
//
// LDS tiles, per chunk (one row, 16 wo values): A tile [16 blocks][MT*4 rows][16 k]   (k contiguous),
// B tile in one of two layouts: "plain" [16 blocks][NT*4 cols][16 k] (k contiguous: each lane reads its
// fragment with one 64-bit LDS read), or "tr16" [16 blocks][16 k][NT*4 cols] (columns contiguous — for
// depthwise these are consecutive filter taps of one input row — read with ds_read_b64_tr_b16, which
// transposes 4x4 groups of 16-bit values across the lanes of each 16-lane quarter; see b_read_offset_tr16).
// Staging writes every slot of both tiles each chunk (zeros where nothing is), so no lane reads stale LDS.
#pragma once

#include <stdint.h>

#include "wgrad_numeric.h"

namespace archdb::kernels {

// The kernels' arguments, passed by value. `out` is dW [E] when target_blocks == 1, else the workspace
// [target_blocks][E], E = C * cpg * R * S. All element counts fit in int (the launch plan checks).
struct WgradArgs {
  const uint16_t* x;
  const uint16_t* dy;
  float* out;
  int n, c, h, w;
  int ho, wo;
  int filter;  // R = S
  int stride, pad;
  int cpg;     // channels per group; 1 for depthwise
  int target_blocks;
};

constexpr int kWave = 64;         // lanes of the MFMA kernels' single-wave work-group
constexpr int kMfmaBlocks = 16;   // 4x4x4 blocks per MFMA instruction
constexpr int kMfmaK = 4;         // k per block per instruction
constexpr int kTileK = 16;        // k values (wo) staged per chunk: four MFMA steps
constexpr int kPortableThreads = 256;
constexpr int kReduceThreads = 256;

WGRAD_HD inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
WGRAD_HD inline int filter_tiles(int filter) { return ceil_div(filter, 4); }
WGRAD_HD inline int out_elems(const WgradArgs& a) { return a.c * a.cpg * a.filter * a.filter; }

// Slice z of `rows` reduction rows split `parts` ways: [slice_begin(z), slice_begin(z + 1)).
WGRAD_HD inline int slice_begin(int rows, int z, int parts) {
  return static_cast<int>(static_cast<long long>(rows) * z / parts);
}
// Where slice z writes: dW itself, or its own slab of the workspace.
WGRAD_HD inline long long out_base(const WgradArgs& a, int z) {
  return a.target_blocks > 1 ? static_cast<long long>(z) * out_elems(a) : 0;
}

// ---- The 4x4x4 MFMA lane roles (the model's tables: lane = 4 * block + t) ----
WGRAD_HD inline int lane_block(int lane) { return lane >> 2; }  // b
WGRAD_HD inline int lane_t(int lane) { return lane & 3; }       // i of A; j of B, C, D

// ---- LDS tiles ----
template <int MT> constexpr int a_tile_elems() { return kMfmaBlocks * MT * 4 * kTileK; }
template <int NT> constexpr int b_tile_elems() { return kMfmaBlocks * NT * 4 * kTileK; }

// A tile [b][m][kk].
template <int MT>
WGRAD_HD inline int a_lds_offset(int b, int m, int kk) { return (b * (MT * 4) + m) * kTileK + kk; }
template <int MT>
WGRAD_HD inline void a_lds_slot(int off, int& b, int& m, int& kk) {
  kk = off % kTileK;
  m = (off / kTileK) % (MT * 4);
  b = off / (kTileK * MT * 4);
}

// B tile, plain [b][nn][kk] or tr16 [b][kk][nn].
template <int NT, bool TR16>
WGRAD_HD inline int b_lds_offset(int b, int nn, int kk) {
  if constexpr (TR16) return (b * kTileK + kk) * (NT * 4) + nn;
  else return (b * (NT * 4) + nn) * kTileK + kk;
}
template <int NT, bool TR16>
WGRAD_HD inline void b_lds_slot(int off, int& b, int& nn, int& kk) {
  if constexpr (TR16) {
    nn = off % (NT * 4);
    kk = (off / (NT * 4)) % kTileK;
    b = off / (NT * 4 * kTileK);
  } else {
    kk = off % kTileK;
    nn = (off / kTileK) % (NT * 4);
    b = off / (kTileK * NT * 4);
  }
}

// The LDS offset lane `lane` reads (64 bits: four 16-bit values) for MFMA step ks (k = 4*ks .. 4*ks+3 of the
// chunk) of A tile row-tile mt: its own fragment A_b[i = lane_t][k..k+3].
template <int MT>
WGRAD_HD inline int a_read_offset(int lane, int mt, int ks) {
  return a_lds_offset<MT>(lane_block(lane), mt * 4 + lane_t(lane), ks * kMfmaK);
}
// Plain B: its own fragment B_b[k..k+3][j = lane_t], contiguous in the plain layout.
template <int NT>
WGRAD_HD inline int b_read_offset_plain(int lane, int nt, int ks) {
  return b_lds_offset<NT, false>(lane_block(lane), nt * 4 + lane_t(lane), ks * kMfmaK);
}
// tr16 B: ds_read_b64_tr_b16 gives destination lane 16*g + l, slice n, the 16-bit value at slice l % 4 of
// what source lane 16*g + l / 4 + 4*n addressed (mfma_model.h: lds_read_b64_tr_b16). The MFMA wants lane
// 4*b + j, slice k = B_b[k][j]; with b = 4*g + q that is source lane 16*g + q + 4*k, slice j. So source lane
// L = 16*g + 4*k + q addresses the four consecutive columns j = 0..3 of row k of block 4*g + q.
template <int NT>
WGRAD_HD inline int b_read_offset_tr16(int lane, int nt, int ks) {
  const int g = lane >> 4, k = (lane >> 2) & 3, q = lane & 3;
  return b_lds_offset<NT, true>(4 * g + q, nt * 4, ks * kMfmaK + k);
}

// ---- Depthwise: what each slot of the tiles holds, and where each result goes ----
struct DepthwiseMap {
  WGRAD_HD static int groups_x(const WgradArgs& a) { return ceil_div(a.c, kMfmaBlocks); }
  WGRAD_HD static int rows(const WgradArgs& a) { return a.n * a.h; }  // K rows: (n, h)
  // A[m = r][k = (row, wo)] of block b (channel 16*bx + b).
  WGRAD_HD static uint16_t a_value(const WgradArgs& a, int bx, int b, int m, int row, int wo) {
    const int c = bx * kMfmaBlocks + b;
    if (c >= a.c || m >= a.filter || wo >= a.wo) return 0;
    const int n = row / a.h, h = row % a.h;
    const int t = h + a.pad - m;
    if (t < 0 || t % a.stride != 0) return 0;
    const int ho = t / a.stride;
    if (ho >= a.ho) return 0;
    return a.dy[((n * a.c + c) * a.ho + ho) * a.wo + wo];
  }
  // B[k = (row, wo)][nn = s] of block b.
  WGRAD_HD static uint16_t b_value(const WgradArgs& a, int bx, int b, int nn, int row, int wo) {
    const int c = bx * kMfmaBlocks + b;
    if (c >= a.c || nn >= a.filter || wo >= a.wo) return 0;
    const int n = row / a.h, h = row % a.h;
    const int w = wo * a.stride - a.pad + nn;
    if (w < 0 || w >= a.w) return 0;
    return a.x[((n * a.c + c) * a.h + h) * a.w + w];
  }
  // dW index of D_b[m = r][nn = s], or -1 where there is no weight (channel past C, tap past R).
  WGRAD_HD static int out_index(const WgradArgs& a, int bx, int b, int m, int nn) {
    const int c = bx * kMfmaBlocks + b;
    if (c >= a.c || m >= a.filter || nn >= a.filter) return -1;
    return (c * a.filter + m) * a.filter + nn;
  }
};

// ---- Grouped: blocks are (group, tap) pairs ----
struct GroupedMap {
  WGRAD_HD static int pairs(const WgradArgs& a) { return (a.c / a.cpg) * a.filter * a.filter; }
  WGRAD_HD static int groups_x(const WgradArgs& a) { return ceil_div(pairs(a), kMfmaBlocks); }
  WGRAD_HD static int rows(const WgradArgs& a) { return a.n * a.ho; }  // K rows: (n, ho)
  // A[m = co][k = (row, wo)] of block b (pair 16*bx + b).
  WGRAD_HD static uint16_t a_value(const WgradArgs& a, int bx, int b, int m, int row, int wo) {
    const int p = bx * kMfmaBlocks + b;
    if (p >= pairs(a) || wo >= a.wo) return 0;
    const int g = p / (a.filter * a.filter);
    const int n = row / a.ho, ho = row % a.ho;
    return a.dy[((n * a.c + g * a.cpg + m) * a.ho + ho) * a.wo + wo];
  }
  // B[k = (row, wo)][nn = ci] of block b.
  WGRAD_HD static uint16_t b_value(const WgradArgs& a, int bx, int b, int nn, int row, int wo) {
    const int p = bx * kMfmaBlocks + b;
    if (p >= pairs(a) || wo >= a.wo) return 0;
    const int rs = a.filter * a.filter, g = p / rs, tap = p % rs;
    const int r = tap / a.filter, s = tap % a.filter;
    const int n = row / a.ho, ho = row % a.ho;
    const int h = ho * a.stride - a.pad + r, w = wo * a.stride - a.pad + s;
    if (h < 0 || h >= a.h || w < 0 || w >= a.w) return 0;
    return a.x[((n * a.c + g * a.cpg + nn) * a.h + h) * a.w + w];
  }
  // dW index of D_b[m = co][nn = ci], or -1 past the last pair.
  WGRAD_HD static int out_index(const WgradArgs& a, int bx, int b, int m, int nn) {
    const int p = bx * kMfmaBlocks + b;
    if (p >= pairs(a)) return -1;
    const int rs = a.filter * a.filter, g = p / rs, tap = p % rs;
    return ((g * a.cpg + m) * a.cpg + nn) * rs + tap;
  }
};

// ---- Portable (no MFMA): one thread per weight, e = ((oc * cpg + ci) * R + r) * S + s ----
// Depthwise is the case cpg = 1. CPG is the compile-time cpg, or 0 to read it from the arguments.
template <int DT, int CPG>
WGRAD_HD inline float portable_output(const WgradArgs& a, int e, int z) {
  const int cpg = CPG > 0 ? CPG : a.cpg;
  const int R = a.filter, s = e % R, r = (e / R) % R, ci = (e / (R * R)) % cpg, oc = e / (R * R * cpg);
  const int xc = (oc / cpg) * cpg + ci;
  const int rows = a.n * a.ho;
  const int row_end = slice_begin(rows, z + 1, a.target_blocks);
  float acc = 0.0f;
  for (int row = slice_begin(rows, z, a.target_blocks); row < row_end; ++row) {
    const int n = row / a.ho, ho = row % a.ho;
    const int h = ho * a.stride - a.pad + r;
    if (h < 0 || h >= a.h) continue;
    const uint16_t* dy = a.dy + ((n * a.c + oc) * a.ho + ho) * a.wo;
    const uint16_t* x = a.x + ((n * a.c + xc) * a.h + h) * a.w;
    for (int wo = 0; wo < a.wo; ++wo) {
      const int w = wo * a.stride - a.pad + s;
      if (w < 0 || w >= a.w) continue;
      acc = __builtin_fmaf(decode_input<DT>(dy[wo]), decode_input<DT>(x[w]), acc);  // one rounding
    }
  }
  return acc;
}

// ---- wgrad_reduce_z: dW[e] = sum of the target_blocks partials, in z order ----
WGRAD_HD inline float reduce_output(const float* workspace, int elems, int parts, int e) {
  float sum = workspace[e];
  for (int z = 1; z < parts; ++z) sum += workspace[static_cast<long long>(z) * elems + e];
  return sum;
}

}  // namespace archdb::kernels
