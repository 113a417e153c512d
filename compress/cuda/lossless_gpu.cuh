// Device helpers shared by the lossless encoder and decoder kernels (compress/cuda/).
#pragma once

#include <cstdint>

namespace squeeze::compress::gpu {

// Element i (w bytes, little-endian) rotated left by one bit and split into w planes of m
// bytes each, as compress/lossless_planes.h's split_planes.
__device__ inline void split_element(const uint8_t* data, uint32_t i, uint32_t m, uint32_t w,
                                     uint8_t* planes) {
  if (w == 1) {
    planes[i] = data[i];
  } else if (w == 2) {
    uint32_t v = static_cast<uint32_t>(data[2 * i]) | static_cast<uint32_t>(data[2 * i + 1]) << 8;
    v = ((v << 1) | (v >> 15)) & 0xffffu;
    planes[i] = static_cast<uint8_t>(v);
    planes[m + i] = static_cast<uint8_t>(v >> 8);
  } else {
    uint32_t v = static_cast<uint32_t>(data[4 * i]) | static_cast<uint32_t>(data[4 * i + 1]) << 8 |
                 static_cast<uint32_t>(data[4 * i + 2]) << 16 |
                 static_cast<uint32_t>(data[4 * i + 3]) << 24;
    v = (v << 1) | (v >> 31);
    for (uint32_t p = 0; p < 4; ++p) planes[p * m + i] = static_cast<uint8_t>(v >> (8 * p));
  }
}

// The inverse: element i rebuilt from the planes into out.
__device__ inline void merge_element(const uint8_t* planes, uint32_t i, uint32_t m, uint32_t w,
                                     uint8_t* out) {
  if (w == 1) {
    out[i] = planes[i];
  } else if (w == 2) {
    uint32_t v = static_cast<uint32_t>(planes[i]) | static_cast<uint32_t>(planes[m + i]) << 8;
    v = ((v >> 1) | (v << 15)) & 0xffffu;
    out[2 * i] = static_cast<uint8_t>(v);
    out[2 * i + 1] = static_cast<uint8_t>(v >> 8);
  } else {
    uint32_t v = 0;
    for (uint32_t p = 0; p < 4; ++p) v |= static_cast<uint32_t>(planes[p * m + i]) << (8 * p);
    v = (v >> 1) | (v << 31);
    for (uint32_t p = 0; p < 4; ++p) out[4 * i + p] = static_cast<uint8_t>(v >> (8 * p));
  }
}

}  // namespace squeeze::compress::gpu
