// Four-at-a-time versions of the half conversions in compress/half.h, written with
// GCC/Clang vector extensions (128-bit, so plain SSE2 runs them), for the CPU codecs' hot
// loops. Bit-identical to the scalar functions for every input, NaNs included; scalar tails
// use those functions. Loads and stores go through memcpy: any alignment works. Always
// inlined, so a caller compiled for AVX2 gets 256-bit code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "compress/codec.h"
#include "compress/half.h"

#define SQUEEZE_HSIMD inline __attribute__((always_inline))

namespace squeeze::compress::hsimd {

using f32x4 = float __attribute__((vector_size(16)));
using u32x4 = uint32_t __attribute__((vector_size(16)));
using i32x4 = int32_t __attribute__((vector_size(16)));
using u16x4 = uint16_t __attribute__((vector_size(8)));

SQUEEZE_HSIMD u32x4 to_bf16(f32x4 f) {
  const u32x4 u = __builtin_bit_cast(u32x4, f);
  const u32x4 nan = (u >> 16) | 0x0040u;
  const u32x4 rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (u & 0x7fffffffu) > 0x7f800000u ? nan : rne;
}

SQUEEZE_HSIMD u32x4 to_f16(f32x4 f) {
  const u32x4 u = __builtin_bit_cast(u32x4, f);
  const u32x4 sign = u & 0x80000000u;
  const u32x4 a = u ^ sign;
  const u32x4 inf = u32x4{} + 0x7c00u;
  const u32x4 big = a > 0x7f800000u ? (0x7e00u | ((a >> 13) & 0x3ffu)) : inf;
  const u32x4 sub = __builtin_bit_cast(u32x4, __builtin_bit_cast(f32x4, a) + 0.5f) - 0x3f000000u;
  const u32x4 normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  const u32x4 o = a >= 0x47800000u ? big : (a < 0x38800000u ? sub : normal);
  return o | (sign >> 16);
}

SQUEEZE_HSIMD f32x4 from_bf16(u32x4 h) { return __builtin_bit_cast(f32x4, h << 16); }

SQUEEZE_HSIMD f32x4 from_f16(u32x4 h) {
  const u32x4 sign = (h & 0x8000u) << 16;
  const u32x4 em = h & 0x7fffu;
  const u32x4 normal = (em << 13) + 0x38000000u;
  const u32x4 special = (em << 13) | 0x7f800000u;
  const f32x4 subf =
      __builtin_convertvector(__builtin_bit_cast(i32x4, em), f32x4) * 5.9604644775390625e-8f;
  const u32x4 sub = __builtin_bit_cast(u32x4, subf);
  const u32x4 o = em >= 0x7c00u ? special : (em >= 0x0400u ? normal : sub);
  return __builtin_bit_cast(f32x4, sign | o);
}

// float32 -> 16-bit dtype D, n elements (in: 4n bytes of float32, out: 2n bytes).
template <Dtype D>
SQUEEZE_HSIMD void narrow_run(const uint8_t* in, std::size_t n, uint8_t* out) {
  const std::size_t n4 = n & ~std::size_t{3};
  for (std::size_t i = 0; i < n4; i += 4) {
    f32x4 f;
    std::memcpy(&f, in + 4 * i, sizeof f);
    const u32x4 h = D == Dtype::kBfloat16 ? to_bf16(f) : to_f16(f);
    const u16x4 h16 = __builtin_convertvector(h, u16x4);
    std::memcpy(out + 2 * i, &h16, sizeof h16);
  }
  for (std::size_t i = n4; i < n; ++i) {
    float f;
    std::memcpy(&f, in + 4 * i, 4);
    const uint16_t h = D == Dtype::kBfloat16 ? f32_to_bf16(f) : f32_to_f16(f);
    std::memcpy(out + 2 * i, &h, 2);
  }
}

// 16-bit dtype D -> float32, n elements (in: 2n bytes, out: 4n bytes of float32).
template <Dtype D>
SQUEEZE_HSIMD void widen_run(const uint8_t* in, std::size_t n, uint8_t* out) {
  const std::size_t n4 = n & ~std::size_t{3};
  for (std::size_t i = 0; i < n4; i += 4) {
    u16x4 h16;
    std::memcpy(&h16, in + 2 * i, sizeof h16);
    const u32x4 h = __builtin_convertvector(h16, u32x4);
    const f32x4 f = D == Dtype::kBfloat16 ? from_bf16(h) : from_f16(h);
    std::memcpy(out + 4 * i, &f, sizeof f);
  }
  for (std::size_t i = n4; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, in + 2 * i, 2);
    const float f = D == Dtype::kBfloat16 ? bf16_to_f32(h) : f16_to_f32(h);
    std::memcpy(out + 4 * i, &f, 4);
  }
}

}  // namespace squeeze::compress::hsimd
