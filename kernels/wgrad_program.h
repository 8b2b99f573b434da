// kernels/wgrad_program.h — the MFMA weight-gradient kernel's program for one wave, written once over an
// executor: on the GPU the executor is one lane of a real wave (wgrad_mfma.hip), on the CPU it is all 64 lanes
// of an emulated wave, with LDS as memory, the MFMA and the transposing LDS read as models
// (wgrad_emulate.cpp, mfma_model.h). Every loop here is uniform across the wave; what differs between lanes
// is only in the lane-indexed functions of wgrad_mapping.h.
//
// An executor W provides:
//   W::Frag, W::Acc           a lane's 64-bit MFMA input fragment (four 16-bit slices); its 4 x f32 accumulator
//   lds_a, lds_b              the LDS tiles (uint16_t*)
//   barrier()                 s_barrier with workgroup-scope release/acquire fences (__syncthreads)
//   each_lane(f)              f(lane) for the lanes it runs
//   read_b64(frag, lds, off)  each lane loads 64 bits at lds + off(lane)
//   read_tr16(frag, lds, off) ds_read_b64_tr_b16 with each lane addressing lds + off(lane)
//   zero(acc), mfma(a, b, acc)
//   store(acc, f)             f(lane, reg, value) for each result register of each lane it runs
#pragma once

#include "wgrad_mapping.h"

#if defined(__clang__)
#define WGRAD_UNROLL _Pragma("unroll")
#else
#define WGRAD_UNROLL
#endif

namespace archdb::kernels {

// One chunk: every slot of both LDS tiles, lane `lane`'s share (slots lane, lane + 64, ...).
template <class Map, int MT, int NT, bool TR16>
WGRAD_HD inline void stage_tiles(const WgradArgs& a, int bx, int row, int wo0, int lane, uint16_t* lds_a,
                                 uint16_t* lds_b) {
  for (int off = lane; off < a_tile_elems<MT>(); off += kWave) {
    int b, m, kk;
    a_lds_slot<MT>(off, b, m, kk);
    lds_a[off] = Map::a_value(a, bx, b, m, row, wo0 + kk);
  }
  for (int off = lane; off < b_tile_elems<NT>(); off += kWave) {
    int b, nn, kk;
    b_lds_slot<NT, TR16>(off, b, nn, kk);
    lds_b[off] = Map::b_value(a, bx, b, nn, row, wo0 + kk);
  }
}

// Work-group (bx, 0, bz): 16 blocks (channels or (group, tap) pairs) starting at 16*bx, all MT x NT output
// tiles of each, over reduction slice bz.
template <class Map, int MT, int NT, bool TR16, class W>
WGRAD_HD inline void mfma_wave_program(W& w, const WgradArgs& a, int bx, int bz) {
  typename W::Acc acc[MT][NT];
WGRAD_UNROLL
  for (int mt = 0; mt < MT; ++mt)
WGRAD_UNROLL
    for (int nt = 0; nt < NT; ++nt) w.zero(acc[mt][nt]);

  const int rows = Map::rows(a);
  const int row_end = slice_begin(rows, bz + 1, a.target_blocks);
  for (int row = slice_begin(rows, bz, a.target_blocks); row < row_end; ++row) {
    for (int wo0 = 0; wo0 < a.wo; wo0 += kTileK) {
      w.barrier();  // the previous chunk's reads are done before its tiles are overwritten
      w.each_lane([&](int lane) { stage_tiles<Map, MT, NT, TR16>(a, bx, row, wo0, lane, w.lds_a, w.lds_b); });
      w.barrier();
WGRAD_UNROLL
      for (int ks = 0; ks < kTileK / kMfmaK; ++ks) {
        if (wo0 + ks * kMfmaK >= a.wo) break;  // uniform: the rest of the chunk is zeros
        typename W::Frag fa[MT], fb[NT];
WGRAD_UNROLL
        for (int mt = 0; mt < MT; ++mt)
          w.read_b64(fa[mt], w.lds_a, [&](int lane) { return a_read_offset<MT>(lane, mt, ks); });
WGRAD_UNROLL
        for (int nt = 0; nt < NT; ++nt) {
          if constexpr (TR16)
            w.read_tr16(fb[nt], w.lds_b, [&](int lane) { return b_read_offset_tr16<NT>(lane, nt, ks); });
          else
            w.read_b64(fb[nt], w.lds_b, [&](int lane) { return b_read_offset_plain<NT>(lane, nt, ks); });
        }
WGRAD_UNROLL
        for (int mt = 0; mt < MT; ++mt)
WGRAD_UNROLL
          for (int nt = 0; nt < NT; ++nt) w.mfma(fa[mt], fb[nt], acc[mt][nt]);
      }
    }
  }

  // Lane 4*b + j holds D_b[i][j] in register i: block b's tile (mt, nt) row mt*4 + i, column nt*4 + j.
  float* out = a.out + out_base(a, bz);
WGRAD_UNROLL
  for (int mt = 0; mt < MT; ++mt)
WGRAD_UNROLL
    for (int nt = 0; nt < NT; ++nt)
      w.store(acc[mt][nt], [&](int lane, int reg, float v) {
        const int idx = Map::out_index(a, bx, lane_block(lane), mt * 4 + reg, nt * 4 + lane_t(lane));
        if (idx >= 0) out[idx] = v;
      });
}

}  // namespace archdb::kernels
