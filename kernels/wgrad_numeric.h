// kernels/wgrad_numeric.h — the 16-bit input formats of the wgrad kernels (IEEE binary16 "f16" and bfloat16
// "bf16") as raw bits, and their conversions to and from binary32. Shared by the device kernels and the host
// (the model, the emulation, the reference): plain integer and float code, no library calls.
//
// Decoding is exact (every f16 and bf16 value is a binary32 value). Encoding rounds to nearest, ties to even,
// with IEEE overflow to infinity and gradual underflow (f16 subnormals); NaN stays NaN (quiet).
#pragma once

#include <stdint.h>

#if defined(__HIP__)
#define WGRAD_HD __attribute__((host, device))
#else
#define WGRAD_HD
#endif

namespace archdb::kernels {

// The element type of the kernels' inputs. The values are the ones the device code is compiled with
// (WGRAD_DTYPE_F16 / WGRAD_DTYPE_BF16 select one).
enum WgradDType : int { kDTypeF16 = 0, kDTypeBF16 = 1 };

WGRAD_HD inline float float_from_bits(uint32_t u) { return __builtin_bit_cast(float, u); }
WGRAD_HD inline uint32_t bits_from_float(float f) { return __builtin_bit_cast(uint32_t, f); }

WGRAD_HD inline float decode_bf16(uint16_t b) { return float_from_bits(static_cast<uint32_t>(b) << 16); }

WGRAD_HD inline float decode_f16(uint16_t h) {
#if defined(__HIP_DEVICE_COMPILE__)
  return static_cast<float>(__builtin_bit_cast(_Float16, h));  // v_cvt_f32_f16: exact
#else
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in binary32.
    float v = static_cast<float>(mant) * 0x1p-24f;
    return float_from_bits(bits_from_float(v) | sign);
  }
  if (exp == 31) return float_from_bits(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  return float_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
#endif
}

template <int DT>
WGRAD_HD inline float decode_input(uint16_t bits) {
  if constexpr (DT == kDTypeBF16) return decode_bf16(bits);
  else return decode_f16(bits);
}

WGRAD_HD inline float decode_input(int dtype, uint16_t bits) {
  return dtype == kDTypeBF16 ? decode_bf16(bits) : decode_f16(bits);
}

WGRAD_HD inline uint16_t encode_bf16(float f) {
  uint32_t u = bits_from_float(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                                          // ties to even
  return static_cast<uint16_t>(u >> 16);
}

WGRAD_HD inline uint16_t encode_f16(float f) {
  uint32_t u = bits_from_float(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to infinity
  uint32_t exp = a >> 23;
  if (exp < 113) {
    // Below the smallest normal f16 (2^-14): a multiple of 2^-24, rounded to nearest even.
    if (exp < 101) return sign;  // below 2^-26: rounds to zero (binary32 subnormals included)
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - exp;  // 14..25
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) ++q;  // may carry into the smallest normal: still right
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t h = ((exp - 112u) << 10) | ((a >> 13) & 0x3ffu);
  uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent, as it should
  return static_cast<uint16_t>(sign | h);
}

WGRAD_HD inline uint16_t encode_input(int dtype, float f) {
  return dtype == kDTypeBF16 ? encode_bf16(f) : encode_f16(f);
}

}  // namespace archdb::kernels
