// Internal to the CUDA quantize codec: device loads, the stream mapping (see FORMAT.md,
// "the stream"), the encoder's device-side layout, and the row dedupe step.
#pragma once

#include "compress/cuda/gpu_internal.cuh"
#include "compress/half.h"
#include "compress/quantize.h"
#include "compress/quantize_math.h"

namespace squeeze::compress::gpu {

template <Dtype D>
__device__ inline float load_elem(const uint8_t* src, uint64_t i) {
  if constexpr (D == Dtype::kFloat32) {
    return f32_from_bits(dget32(src + 4 * i));
  } else {
    const auto h = static_cast<uint16_t>(src[2 * i] | src[2 * i + 1] << 8);
    if constexpr (D == Dtype::kBfloat16) {
      return bf16_to_f32(h);
    } else {
      return f16_to_f32(h);
    }
  }
}

// Element index in the message of stream position p.
__device__ inline uint64_t stream_element(uint64_t p, bool dedupe, uint64_t L, uint64_t n_unique,
                                          uint64_t n_full_rows, const uint32_t* first_of_id) {
  if (!dedupe) return p;
  const uint64_t k = p / L;
  const uint64_t row = k < n_unique ? first_of_id[k] : n_full_rows;
  return row * L + (p - k * L);
}

// Float keys whose unsigned order is the float order (for atomicMin/atomicMax).
__device__ inline uint32_t order_key(float f) {
  const uint32_t u = f32_bits(f);
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}
__device__ inline float from_order_key(uint32_t k) {
  return f32_from_bits((k & 0x80000000u) ? k & 0x7fffffffu : ~k);
}

// The encoder's device-side plan of one body.
struct EncLayout {
  uint32_t mn_key, mx_key;
  qmath::Params msg;
  double bound_abs;
  uint64_t n_unique, map_bits, n_stream, n_blocks, n_param_rows;
  uint64_t map_bytes, off_params, off_widths, off_payload, payload, off_esc_idx, off_esc_val, n_esc;
  uint32_t stored, pad;
};

// Row dedupe on the device: fills lay->n_unique and lay->map_bits, first_of_id[id] (the row
// where content `id` first appears) and map_words (the packed row map, zero-initialized
// here), exactly as the CPU numbers rows (ids in order of first appearance).
Status enqueue_row_dedupe(const uint8_t* src, uint64_t n_rows, std::size_t row_bytes,
                          EncLayout* lay, uint32_t* first_of_id, uint32_t* map_words,
                          cudaStream_t s, Scratch* scratch);

inline unsigned grid_for(uint64_t items, unsigned per_block) {
  const uint64_t g = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(g ? g : 1);
}

}  // namespace squeeze::compress::gpu
