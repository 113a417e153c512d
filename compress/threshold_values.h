// Element loads and value narrowing for the threshold codec (CPU; the CUDA twin mirrors
// these). Elements are read with memcpy: NCCL buffers carry no C++ type.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "compress/codec.h"
#include "compress/half.h"

namespace squeeze::compress {

static_assert(std::endian::native == std::endian::little, "the codecs assume a little-endian host");

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Element i of a float buffer of dtype d, widened exactly to float.
inline float load_as_float(Dtype d, const uint8_t* base, uint64_t i) {
  switch (d) {
    case Dtype::kFloat32: return f32_from_bits(load_u32(base + 4 * i));
    case Dtype::kBfloat16: return bf16_to_f32(load_u16(base + 2 * i));
    case Dtype::kFloat16: return f16_to_f32(load_u16(base + 2 * i));
    case Dtype::kBytes: break;
  }
  return 0.0f;
}

// float -> fp16 that saturates finite values at +-65504 rather than rounding them to Inf.
inline uint16_t f32_to_f16_saturating(float f) {
  const uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) < 0x7f800000u && (u & 0x7fffffffu) > 0x477fe000u) {  // finite, > 65504
    return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7bffu);
  }
  return f32_to_f16(f);
}

// Writes y narrowed to value dtype vd at out (4 or 2 bytes, little-endian).
inline void store_value(Dtype vd, uint8_t* out, float y) {
  if (vd == Dtype::kFloat32) {
    const uint32_t u = f32_bits(y);
    std::memcpy(out, &u, 4);
  } else {
    const uint16_t h = vd == Dtype::kBfloat16 ? f32_to_bf16(y) : f32_to_f16_saturating(y);
    std::memcpy(out, &h, 2);
  }
}

// The float a stored value of dtype vd decodes to.
inline float stored_value_as_float(Dtype vd, const uint8_t* p) { return load_as_float(vd, p, 0); }

}  // namespace squeeze::compress
