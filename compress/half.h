// float32 <-> bfloat16 / float16 conversions, round-to-nearest-even, correct for NaN, Inf,
// overflow and subnormals. Header-only and usable from CUDA device code (every function is
// inline and, under nvcc, __host__ __device__). Halves travel as their raw uint16_t bits.
//
//   f32_to_bf16: RNE; NaN stays NaN (quiet bit set, sign and top payload kept); values that
//                round past the largest bf16 become +-Inf.
//   f32_to_f16:  RNE; NaN -> quiet NaN (sign and top payload kept); |x| >= 65520 -> +-Inf;
//                tiny values round to fp16 subnormals or +-0.
//   bf16_to_f32, f16_to_f32: exact (every half value is a float).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SQUEEZE_HD __host__ __device__
#else
#define SQUEEZE_HD
#endif

namespace squeeze::compress {

SQUEEZE_HD inline uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

SQUEEZE_HD inline float f32_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

SQUEEZE_HD inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep sign and top payload, force quiet
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  }
  u += 0x7fffu + ((u >> 16) & 1u);  // RNE; carries into the exponent (up to Inf) as it should
  return static_cast<uint16_t>(u >> 16);
}

SQUEEZE_HD inline float bf16_to_f32(uint16_t h) { return f32_from_bits(static_cast<uint32_t>(h) << 16); }

SQUEEZE_HD inline uint16_t f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t o;
  if (u >= 0x47800000u) {  // |f| >= 2^16, Inf or NaN
    o = u > 0x7f800000u ? (0x7e00u | ((u >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (u < 0x38800000u) {  // |f| < 2^-14: fp16 subnormal or zero
    // Adding 0.5 aligns the 10 fp16 mantissa bits at the bottom of the float's mantissa;
    // the hardware's round-to-nearest-even does the rounding.
    const float magic = f32_from_bits(0x3f000000u);
    o = f32_bits(f32_from_bits(u) + magic) - 0x3f000000u;
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += 0xc8000fffu + mant_odd;  // rebias exponent (15 - 127) << 23, plus RNE bias
    o = u >> 13;                  // values in [65520, 65536) carry into Inf, as RNE says
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}

SQUEEZE_HD inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  if (em >= 0x7c00u) return f32_from_bits(sign | 0x7f800000u | ((em & 0x3ffu) << 13));  // Inf/NaN
  if (em >= 0x0400u) return f32_from_bits(sign | ((em << 13) + 0x38000000u));          // normal
  const float mag = static_cast<float>(em) * 5.9604644775390625e-8f;                    // em * 2^-24
  return f32_from_bits(sign | f32_bits(mag));
}

}  // namespace squeeze::compress
