// Element i of a buffer of floating dtype d (float32, bfloat16 or float16; little-endian, as
// frames and NCCL buffers are), widened to float. For checks, references and benchmarks that
// pick the dtype at run time; the codecs' own loops use compile-time dtypes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "compress/codec.h"
#include "compress/half.h"

namespace squeeze::compress {

inline float float_element(const uint8_t* data, Dtype d, std::size_t i) {
  if (d == Dtype::kFloat32) {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, data + 2 * i, 2);
  return d == Dtype::kBfloat16 ? bf16_to_f32(h) : f16_to_f32(h);
}

}  // namespace squeeze::compress
