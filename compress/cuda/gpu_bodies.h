// CUDA twins of the threshold and lossless bodies (compress/threshold.h, compress/lossless.h):
// the same bytes as the CPU encoders for the same input, built in parallel on a stream.
// These work on bodies (what follows the 40-byte frame header); gpu::Codec wraps bodies
// into frames.
//
//   gpu::BodyResult* r;  // device memory (or mapped pinned host memory)
//   enqueue_lossless_body_encode(Dtype::kFloat32, src_dev, n, body_dev, cap, r, stream);
//   ... cudaStreamSynchronize(stream), then copy *r to the host ...
//
// Host-side checks fail with a Status before anything is enqueued. Device-side outcomes
// (sizes, and decode's validation failures) land in the BodyResult.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "compress/codec.h"

namespace squeeze::compress::gpu {

struct BodyResult {
  uint64_t bytes = 0;  // encode: body bytes; decode: bytes written
  uint32_t code = 0;   // a Status::Code; 0 = ok. Encode: kNoSpace when the body does not fit.
  uint32_t pad = 0;
  uint64_t offset = 0;  // decode failure: body offset of the first bad field found
  float tau = 0.0f;     // threshold encode: the tau used
  uint32_t pad2 = 0;
};

// Lossless: any dtype; dst_capacity >= lossless_body_bound_bytes(count * dtype_size).
Status enqueue_lossless_body_encode(Dtype dtype, const void* src, uint64_t count, void* dst,
                                    std::size_t dst_capacity, BodyResult* result,
                                    cudaStream_t stream);
// Validates the whole body on the device before any write; a failing body leaves dst untouched.
Status enqueue_lossless_body_decode(const void* body, std::size_t body_bytes, Dtype dtype,
                                    uint64_t count, void* dst, std::size_t dst_capacity,
                                    BodyResult* result, cudaStream_t stream);

// Threshold: float dtypes, count < 2^31. tau searched on the device from the same sample
// as the CPU (null tau), or the given one (a stream's reused tau). No error feedback on the
// GPU. Unless allow_expansion, a body not smaller than the input is kNoSpace, as on the CPU.
Status enqueue_threshold_body_encode(Dtype dtype, const void* src, uint64_t count,
                                     const ThresholdParams& params, const float* tau,
                                     bool allow_expansion, void* dst, std::size_t dst_capacity,
                                     BodyResult* result, cudaStream_t stream);

// Validates the whole body on the device before any write (the CPU decoder's checks); a
// failing body leaves dst untouched. count < 2^31.
Status enqueue_threshold_body_decode(const void* body, std::size_t body_bytes, Dtype dtype,
                                     uint64_t count, void* dst, std::size_t dst_capacity,
                                     BodyResult* result, cudaStream_t stream);

}  // namespace squeeze::compress::gpu
