// Frame-level GPU steps shared by all encoders: the body CRC32C (4 KiB chunks checksummed in
// parallel, then folded in order with crc32c_combine, giving the CPU's value), the frame
// header with its CRC, and the chunk's result.
#include "compress/cuda/gpu_util.cuh"

namespace squeeze::compress::gpu {
namespace {

constexpr std::size_t kCrcChunk = 4096;

struct CrcTable {
  uint32_t t[256];
};

constexpr CrcTable make_table() {
  CrcTable table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table.t[i] = c;
  }
  return table;
}

__device__ const CrcTable g_crc = make_table();

__global__ void crc_chunks_kernel(const uint8_t* body, const uint64_t* body_bytes,
                                  std::size_t max_chunks, uint32_t* chunk_crc) {
  __shared__ uint32_t table[256];
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) table[i] = g_crc.t[i];
  __syncthreads();
  const uint64_t n = *body_bytes;
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= max_chunks) return;
  const uint64_t begin = k * kCrcChunk;
  if (begin >= n) return;
  const uint64_t len = n - begin < kCrcChunk ? n - begin : kCrcChunk;
  chunk_crc[k] = ~crc_update(0xffffffffu, body + begin, static_cast<std::size_t>(len), table);
}

__global__ void crc_fold_kernel(const uint64_t* body_bytes, const uint32_t* chunk_crc,
                                uint32_t* out) {
  const uint64_t n = *body_bytes;
  const uint32_t full = crc32c_zeros_operator(kCrcChunk);
  uint32_t c = 0;  // CRC of nothing
  for (uint64_t begin = 0, k = 0; begin < n; begin += kCrcChunk, ++k) {
    const uint64_t len = n - begin < kCrcChunk ? n - begin : kCrcChunk;
    const uint32_t op = len == kCrcChunk ? full : crc32c_zeros_operator(len);
    c = crc32c_multmodp(op, c) ^ chunk_crc[k];
  }
  *out = c;
}

__global__ void header_kernel(uint8_t* dst, uint32_t dtype, uint64_t count, uint64_t original,
                              bool checksum, FrameState* st, ChunkResult* result) {
  const uint64_t body = st->body_bytes;
  dput32(dst + 0, kFrameMagic);
  dst[4] = kFrameVersion;
  dst[5] = static_cast<uint8_t>(st->codec);
  dst[6] = static_cast<uint8_t>(dtype);
  dst[7] = checksum ? 1 : 0;
  dput64(dst + 8, count);
  dput64(dst + 16, original);
  dput64(dst + 24, body);
  dput32(dst + 32, checksum ? st->body_crc : 0);
  dput32(dst + 36, ~crc_update(0xffffffffu, dst, 36, g_crc.t));
  result->bytes = kFrameHeaderBytes + body;
  result->code = 0;
  result->field = kFieldNone;
  result->offset = 0;
  result->value = 0;
}

}  // namespace

const uint32_t* device_crc_table() {
  void* p = nullptr;
  return cudaGetSymbolAddress(&p, g_crc) == cudaSuccess ? static_cast<const uint32_t*>(p) : nullptr;
}

Status enqueue_body_crc(const uint8_t* frame, const uint64_t* body_bytes_dev, std::size_t max_body,
                        uint32_t* crc_dev, cudaStream_t s, Scratch* scratch) {
  const std::size_t chunks = (max_body + kCrcChunk - 1) / kCrcChunk;
  uint32_t* chunk_crc = nullptr;
  if (!scratch->alloc(&chunk_crc, chunks))
    return {Status::Code::kNoSpace, "gpu: out of device memory (crc)"};
  if (chunks > 0) {
    const unsigned threads = 128;
    crc_chunks_kernel<<<static_cast<unsigned>((chunks + threads - 1) / threads), threads, 0, s>>>(
        frame + kFrameHeaderBytes, body_bytes_dev, chunks, chunk_crc);
  }
  crc_fold_kernel<<<1, 1, 0, s>>>(body_bytes_dev, chunk_crc, crc_dev);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

Status enqueue_encode_finish(uint8_t* dst, Dtype dtype, uint64_t count, bool checksum,
                             std::size_t max_body, FrameState* state, ChunkResult* result_dev,
                             cudaStream_t s, Scratch* scratch) {
  if (checksum) {
    Status st = enqueue_body_crc(dst, &state->body_bytes, max_body, &state->body_crc, s, scratch);
    if (!st.ok()) return st;
  }
  header_kernel<<<1, 1, 0, s>>>(dst, static_cast<uint32_t>(dtype), count, count * dtype_size(dtype),
                                checksum, state, result_dev);
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu
