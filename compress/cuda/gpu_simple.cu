// GPU stored and cast bodies, encode and decode (compress/FORMAT.md).
#include "compress/cuda/gpu_internal.cuh"
#include "compress/half.h"

namespace squeeze::compress::gpu {
namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(uint64_t n) {
  const uint64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535u * 16u ? (b ? b : 1) : 65535u * 16u);
}

__global__ void init_state_kernel(FrameState* st, uint64_t body, uint32_t codec) {
  st->err = kNoError;
  st->err_value = 0;
  st->body_bytes = body;
  st->codec = codec;
  st->body_crc = 0;
}

__global__ void narrow_kernel(const uint8_t* src, uint64_t n, uint8_t* body, bool to_f16) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    body[0] =
        to_f16 ? static_cast<uint8_t>(Dtype::kFloat16) : static_cast<uint8_t>(Dtype::kBfloat16);
    body[1] = body[2] = body[3] = 0;
  }
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float f = f32_from_bits(dget32(src + 4 * i));
    const uint16_t h = to_f16 ? f32_to_f16(f) : f32_to_bf16(f);
    body[4 + 2 * i] = static_cast<uint8_t>(h);
    body[5 + 2 * i] = static_cast<uint8_t>(h >> 8);
  }
}

__global__ void widen_kernel(const uint8_t* frame, const DecodeState* d, uint8_t* dst,
                             uint64_t max_n) {
  if (d->fs.err != kNoError || d->codec != static_cast<uint32_t>(CodecId::kCast)) return;
  const uint64_t n = d->count < max_n ? d->count : max_n;
  const uint8_t* body = frame + kFrameHeaderBytes;
  const bool f16 = body[0] == static_cast<uint8_t>(Dtype::kFloat16);
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const auto h = static_cast<uint16_t>(body[4 + 2 * i] | body[5 + 2 * i] << 8);
    dput32(dst + 4 * i, f32_bits(f16 ? f16_to_f32(h) : bf16_to_f32(h)));
  }
}

__global__ void copy_stored_kernel(const uint8_t* frame, const DecodeState* d, uint8_t* dst,
                                   uint64_t max_n) {
  if (d->fs.err != kNoError || d->codec != static_cast<uint32_t>(CodecId::kStored)) return;
  const uint64_t n = d->original < max_n ? d->original : max_n;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    dst[i] = frame[kFrameHeaderBytes + i];
  }
}

}  // namespace

Status enqueue_stored_encode(const EncodeChunk& c, FrameState* state, ChunkResult* result,
                             cudaStream_t s, Scratch* scratch) {
  const uint64_t original = c.count * dtype_size(c.dtype);
  auto* dst = static_cast<uint8_t*>(c.dst);
  init_state_kernel<<<1, 1, 0, s>>>(state, original, static_cast<uint32_t>(CodecId::kStored));
  if (original > 0)
    SQUEEZE_CUDA_TRY(
        cudaMemcpyAsync(dst + kFrameHeaderBytes, c.src, original, cudaMemcpyDeviceToDevice, s));
  const bool checksum = c.params && c.params->checksum;
  return enqueue_encode_finish(dst, c.dtype, c.count, checksum, original, state, result, s,
                               scratch);
}

Status enqueue_cast_encode(const EncodeChunk& c, FrameState* state, ChunkResult* result,
                           cudaStream_t s, Scratch* scratch) {
  if (c.count <= 2)
    return enqueue_stored_encode(c, state, result, s, scratch);  // 4 + 2n >= 4n: CPU stores too
  const uint64_t body = 4 + 2 * c.count;
  auto* dst = static_cast<uint8_t*>(c.dst);
  init_state_kernel<<<1, 1, 0, s>>>(state, body, static_cast<uint32_t>(CodecId::kCast));
  narrow_kernel<<<blocks_for(c.count), kThreads, 0, s>>>(static_cast<const uint8_t*>(c.src),
                                                         c.count, dst + kFrameHeaderBytes,
                                                         c.params->cast.to == Dtype::kFloat16);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return enqueue_encode_finish(dst, c.dtype, c.count, c.params->checksum, body, state, result, s,
                               scratch);
}

Status enqueue_simple_decode(const DecodeChunk& c, const DecodeState* d, cudaStream_t s) {
  const auto* frame = static_cast<const uint8_t*>(c.frame);
  auto* dst = static_cast<uint8_t*>(c.dst);
  copy_stored_kernel<<<blocks_for(c.dst_capacity), kThreads, 0, s>>>(frame, d, dst, c.dst_capacity);
  widen_kernel<<<blocks_for(c.dst_capacity / 4), kThreads, 0, s>>>(frame, d, dst,
                                                                   c.dst_capacity / 4);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu
