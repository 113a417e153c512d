// RAII owners of the CUDA resources GPU staging uses: a stream, events, a stream-ordered
// memory pool, pinned host memory, and a guard that makes a device current. CUDA builds only.
//
// Destructors ignore errors on purpose: at process exit the CUDA runtime may already be
// unloading (cudaErrorCudartUnloading) or the context may be gone after a fatal error, and
// then there is nothing left to free.
#pragma once

#if SQUEEZE_HAVE_CUDA

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "transport/status.h"

namespace squeeze::plugin::gpu {

// A failed CUDA call as a status naming the call and CUDA's error name and text.
transport::Status cuda_status(cudaError_t e, const char* what);

#define SQ_CUDA_TRY(expr)                                                                         \
  do {                                                                                            \
    const cudaError_t sq_cuda_e_ = (expr);                                                        \
    if (sq_cuda_e_ != cudaSuccess) return ::squeeze::plugin::gpu::cuda_status(sq_cuda_e_, #expr); \
  } while (0)

// Makes `device` current on this thread for the guard's life, and restores the previous
// device only if it had to change it (NCCL's proxy threads already run on the buffer's
// device, so usually nothing changes).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  cudaError_t error() const { return error_; }

 private:
  int prev_ = -1;
  bool restore_ = false;
  cudaError_t error_ = cudaSuccess;
};

class Stream {
 public:
  Stream() = default;
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaError_t create();  // non-blocking: never waits for the legacy default stream
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() = default;
  ~Event();
  Event(Event&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaError_t create();  // with timing, for cudaEventElapsedTime
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// A memory pool of the device's own, so staging allocations are stream-ordered (no device
// synchronisation, unlike cudaMalloc/cudaFree) and stay cached between messages without
// changing the release threshold of the device's default pool, which the application owns.
class MemPool {
 public:
  MemPool() = default;
  ~MemPool();
  MemPool(const MemPool&) = delete;
  MemPool& operator=(const MemPool&) = delete;
  cudaError_t create(int device);
  cudaMemPool_t get() const { return p_; }

 private:
  cudaMemPool_t p_ = nullptr;
};

// Page-locked host memory (cudaHostAlloc, portable to every context).
class PinnedMemory {
 public:
  PinnedMemory() = default;
  ~PinnedMemory();
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  cudaError_t allocate(std::size_t bytes);
  uint8_t* data() const { return static_cast<uint8_t*>(p_); }
  std::size_t size() const { return size_; }

 private:
  void* p_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace squeeze::plugin::gpu

#endif  // SQUEEZE_HAVE_CUDA
