// Internal to the CUDA codecs: error handling, stream-ordered scratch memory, device-side
// byte access, the frame header writer, error reporting and CRC32C.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/crc32c_combine.h"
#include "compress/cuda/gpu_codec.h"

namespace squeeze::compress::gpu {

// Why a chunk failed (ChunkResult::field); result_status() turns these into messages.
enum Field : uint32_t {
  kFieldNone = 0,
  kFieldFrameSize,  // fewer than 40 bytes
  kFieldMagic,
  kFieldVersion,
  kFieldHeaderCrc,
  kFieldCodec,
  kFieldDtype,
  kFieldFlags,
  kFieldBodyCrcUnset,  // checksum flag clear, field non-zero
  kFieldOriginalBytes,
  kFieldBodyTruncated,
  kFieldBodyTrailing,
  kFieldDstTooSmall,
  kFieldBodyCrc,
  kFieldStoredSize,
  kFieldCastHeader,
  kFieldCastSize,
  kFieldCastDtype,
  kFieldQuantizeHeader,   // a field of the quantize header (offset says which)
  kFieldQuantizeSection,  // a section runs past the body
  kFieldRowMap,
  kFieldRowParams,
  kFieldWidth,
  kFieldEscapeIndex,
  kFieldPadding,
  kFieldTrailing,
  kFieldUnsupportedCodec,
  kFieldBody,  // a threshold/lossless body check (err_value holds its Status::Code)
};

#define SQUEEZE_CUDA_TRY(expr)                                           \
  do {                                                                   \
    const cudaError_t e_ = (expr);                                       \
    if (e_ != cudaSuccess) {                                             \
      return ::squeeze::compress::Status(                                \
          ::squeeze::compress::Status::Code::kInvalidArgument,           \
          std::string("gpu: ") + #expr + ": " + cudaGetErrorString(e_)); \
    }                                                                    \
  } while (0)

// Stream-ordered device allocations for one call, released (stream-ordered) on destruction.
// As many as the call needs: a batch of chunks allocates a few per chunk (it once held at most
// 32, so a batch of more than a handful of chunks failed as "out of device memory" with the
// device's memory free).
class Scratch {
 public:
  explicit Scratch(cudaStream_t s) : stream_(s) { ptrs_.reserve(16); }
  ~Scratch() {
    for (void* p : ptrs_) cudaFreeAsync(p, stream_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  // Allocates n elements of T (at least one); returns false on failure.
  template <typename T>
  bool alloc(T** p, std::size_t n) {
    void* v = nullptr;
    try {
      ptrs_.reserve(ptrs_.size() + 1);
    } catch (...) {
      return false;
    }
    if (cudaMallocAsync(&v, (n ? n : 1) * sizeof(T), stream_) != cudaSuccess) return false;
    ptrs_.push_back(v);
    *p = static_cast<T*>(v);
    return true;
  }

 private:
  cudaStream_t stream_;
  std::vector<void*> ptrs_;
};

// dtype_size() for device code (codec.h's is a host function).
__host__ __device__ inline uint64_t dsize(uint32_t dtype) {
  return dtype == 1 ? 4 : (dtype == 2 || dtype == 3) ? 2 : dtype == 0 ? 1 : 0;
}
__host__ __device__ inline uint64_t dsize(Dtype dtype) {
  return dsize(static_cast<uint32_t>(dtype));
}

__device__ inline void dput32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
__device__ inline void dput64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
__device__ inline uint32_t dget32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
__device__ inline uint64_t dget64(const uint8_t* p) {
  return static_cast<uint64_t>(dget32(p)) | static_cast<uint64_t>(dget32(p + 4)) << 32;
}

// Bytewise CRC32C update (raw register, no conditioning), table in shared or global memory.
__device__ inline uint32_t crc_update(uint32_t c, const uint8_t* p, std::size_t n,
                                      const uint32_t* table) {
  for (std::size_t i = 0; i < n; ++i) c = (c >> 8) ^ table[(c ^ p[i]) & 0xffu];
  return c;
}

// Errors found by parallel checks meet here: the smallest (offset, field) wins, so the
// report does not depend on thread timing.
__device__ inline void report(unsigned long long* err, uint64_t offset, uint32_t field) {
  atomicMin(err, static_cast<unsigned long long>((offset << 8) | field));
}
inline constexpr unsigned long long kNoError = ~0ull;

// Per-chunk state shared by the encode/decode pipelines' last steps.
struct FrameState {
  unsigned long long err;  // kNoError, or (offset << 8) | field
  uint64_t err_value;
  uint64_t body_bytes;  // encode: final body size
  uint32_t codec;       // encode: codec actually written
  uint32_t body_crc;
};

// Enqueues: the body CRC (when checksum) over dst[40, 40 + state->body_bytes), then the
// frame header with both CRCs, then the result. Used by every encoder.
Status enqueue_encode_finish(uint8_t* dst, Dtype dtype, uint64_t count, bool checksum,
                             std::size_t max_body, FrameState* state, ChunkResult* result_dev,
                             cudaStream_t s, Scratch* scratch);

// Enqueues the body CRC of frame[40, 40 + *body_bytes_dev) into *crc_dev; max_body bounds it.
Status enqueue_body_crc(const uint8_t* frame, const uint64_t* body_bytes_dev, std::size_t max_body,
                        uint32_t* crc_dev, cudaStream_t s, Scratch* scratch);

// The CRC table in device memory (built once per process).
const uint32_t* device_crc_table();

}  // namespace squeeze::compress::gpu
