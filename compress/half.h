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

// The conversions compute every case and select with integer conditionals, so compilers
// turn loops over them into SIMD code (no data-dependent branches).

SQUEEZE_HD inline uint16_t f32_to_bf16(float f) {
  const uint32_t u = f32_bits(f);
  const uint32_t nan = (u >> 16) | 0x0040u;  // NaN: keep sign and top payload, quiet
  const uint32_t rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;  // carries up to Inf, as RNE says
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rne);
}

SQUEEZE_HD inline float bf16_to_f32(uint16_t h) {
  return f32_from_bits(static_cast<uint32_t>(h) << 16);
}

SQUEEZE_HD inline uint16_t f32_to_f16(float f) {
  const uint32_t u = f32_bits(f);
  const uint32_t sign = u & 0x80000000u;
  const uint32_t a = u ^ sign;
  // |f| >= 2^16, Inf or NaN: Inf, or a quiet NaN keeping the top payload bits.
  const uint32_t big = a > 0x7f800000u ? (0x7e00u | ((a >> 13) & 0x3ffu)) : 0x7c00u;
  // |f| < 2^-14: adding 0.5 aligns the 10 fp16 mantissa bits at the bottom of the float's
  // mantissa, and the hardware's round-to-nearest-even does the rounding.
  const uint32_t sub = f32_bits(f32_from_bits(a) + 0.5f) - 0x3f000000u;
  // Normal: rebias the exponent ((15 - 127) << 23) and add the RNE bias; values in
  // [65520, 65536) carry into Inf, as RNE says.
  const uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  const uint32_t o = a >= 0x47800000u ? big : (a < 0x38800000u ? sub : normal);
  return static_cast<uint16_t>(o | (sign >> 16));
}

SQUEEZE_HD inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  const uint32_t normal = (em << 13) + 0x38000000u;
  const uint32_t special = (em << 13) | 0x7f800000u;  // Inf/NaN
  const uint32_t sub = f32_bits(static_cast<float>(static_cast<int32_t>(em)) *
                                5.9604644775390625e-8f);  // em * 2^-24
  const uint32_t o = em >= 0x7c00u ? special : (em >= 0x0400u ? normal : sub);
  return f32_from_bits(sign | o);
}

}  // namespace squeeze::compress
