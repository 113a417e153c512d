// Threshold and lossless frames on the GPU: the body twins of compress/cuda/gpu_bodies.h
// wrapped into frames like encode_frame()/decode_frame() wrap the CPU bodies (stored
// fallback when a body is not smaller than the input; header and checksum validated before
// the destination is written).
#include <algorithm>

#include "compress/cuda/gpu_bodies.h"
#include "compress/cuda/gpu_internal.cuh"
#include "compress/lossless.h"

namespace squeeze::compress::gpu {
namespace {

constexpr unsigned kThreads = 256;

unsigned grid(uint64_t n) {
  const uint64_t g = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<uint64_t>(g, 1, 8192));
}

// Keeps the body when the encoder produced one smaller than the input, else stores.
__global__ void adopt_kernel(const BodyResult* r, const uint8_t* body, const uint8_t* src,
                             uint64_t original, uint32_t codec, uint8_t* dst_body, FrameState* st) {
  const bool keep = r->code == 0 && r->bytes < original;
  const uint64_t n = keep ? r->bytes : original;
  const uint8_t* from = keep ? body : src;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    dst_body[i] = from[i];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    st->err = kNoError;
    st->err_value = 0;
    st->body_bytes = n;
    st->codec = keep ? codec : static_cast<uint32_t>(CodecId::kStored);
    st->body_crc = 0;
  }
}

// Copies the decoded body into place only when the frame and the body both checked out.
__global__ void deliver_kernel(DecodeState* d, uint32_t codec, const BodyResult* r,
                               const uint8_t* out, uint64_t n, uint8_t* dst) {
  if (d->codec != codec || d->fs.err != kNoError) return;
  if (r->code != 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      report(&d->fs.err, kFrameHeaderBytes + r->offset, kFieldBody);
      d->fs.err_value = r->code;
    }
    return;
  }
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    dst[i] = out[i];
  }
}

}  // namespace

Status enqueue_body_codec_encode(const EncodeChunk& c, FrameState* state, ChunkResult* result,
                                 cudaStream_t s, Scratch* sc) {
  const uint64_t original = c.count * dtype_size(c.dtype);
  const CodecId id = c.params->codec;
  const std::size_t cap = id == CodecId::kLossless
                              ? std::max<std::size_t>(lossless_body_bound_bytes(original), original)
                              : original;
  uint8_t* body = nullptr;
  BodyResult* r = nullptr;
  if (!sc->alloc(&body, cap) || !sc->alloc(&r, 1))
    return {Status::Code::kNoSpace, "gpu: out of device memory"};
  Status st = id == CodecId::kLossless
                  ? enqueue_lossless_body_encode(c.dtype, c.src, c.count, body, cap, r, s)
                  : enqueue_threshold_body_encode(c.dtype, c.src, c.count, c.params->threshold,
                                                  nullptr, false, body, cap, r, s);
  if (!st.ok()) return st;
  auto* dst = static_cast<uint8_t*>(c.dst);
  adopt_kernel<<<grid(original), kThreads, 0, s>>>(r, body, static_cast<const uint8_t*>(c.src),
                                                   original, static_cast<uint32_t>(id),
                                                   dst + kFrameHeaderBytes, state);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return enqueue_encode_finish(dst, c.dtype, c.count, c.params->checksum, original, state, result,
                               s, sc);
}

Status enqueue_body_codec_decode(const DecodeChunk& c, const FrameInfo& info, DecodeState* d,
                                 cudaStream_t s, Scratch* sc) {
  if (info.codec != CodecId::kThreshold && info.codec != CodecId::kLossless) return Status::Ok();
  uint8_t* out = nullptr;
  BodyResult* r = nullptr;
  const auto n = static_cast<std::size_t>(info.original_bytes);
  if (!sc->alloc(&out, n) || !sc->alloc(&r, 1))
    return {Status::Code::kNoSpace, "gpu: out of device memory"};
  const auto* body = static_cast<const uint8_t*>(c.frame) + kFrameHeaderBytes;
  const auto body_bytes = static_cast<std::size_t>(info.body_bytes);
  Status st =
      info.codec == CodecId::kLossless
          ? enqueue_lossless_body_decode(body, body_bytes, info.dtype, info.count, out, n, r, s)
          : enqueue_threshold_body_decode(body, body_bytes, info.dtype, info.count, out, n, r, s);
  if (!st.ok()) return st;
  deliver_kernel<<<grid(n), kThreads, 0, s>>>(d, static_cast<uint32_t>(info.codec), r, out, n,
                                              static_cast<uint8_t*>(c.dst));
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu
