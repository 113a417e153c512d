// Small owners of CUDA resources for squeeze-codec-bench's GPU mode: device and pinned host
// memory, a stream, events. Every CUDA call is checked; a failure throws CudaError naming
// the call and CUDA's message (the bench catches it in run_gpu_bench and exits 1).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace squeeze::perf::codec_bench {

class CudaError : public std::runtime_error {
 public:
  CudaError(const char* call, cudaError_t e)
      : std::runtime_error(std::string(call) + ": " + cudaGetErrorString(e)) {}
};

inline void cuda_check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw CudaError(call, e);
}
#define SQUEEZE_BENCH_CUDA(call) ::squeeze::perf::codec_bench::cuda_check((call), #call)

// Device memory, at least one byte so that an empty buffer still has an address.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) { SQUEEZE_BENCH_CUDA(cudaMalloc(&p_, n ? n : 1)); }
  ~DeviceBuffer() {
    if (p_) (void)cudaFree(p_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint8_t* get() const { return static_cast<uint8_t*>(p_); }
  std::size_t size() const { return n_; }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

// Page-locked host memory for `n` objects of T (trivially destructible), value-initialised.
template <typename T>
class PinnedArray {
  static_assert(std::is_trivially_destructible_v<T>);

 public:
  explicit PinnedArray(std::size_t n) : n_(n) {
    void* p = nullptr;
    SQUEEZE_BENCH_CUDA(cudaMallocHost(&p, (n ? n : 1) * sizeof(T)));
    p_ = static_cast<T*>(p);
    for (std::size_t i = 0; i < n; ++i) new (p_ + i) T{};
  }
  ~PinnedArray() {
    if (p_) (void)cudaFreeHost(p_);
  }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  T& operator[](std::size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

class Stream {
 public:
  Stream() { SQUEEZE_BENCH_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) (void)cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const { SQUEEZE_BENCH_CUDA(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { SQUEEZE_BENCH_CUDA(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_) (void)cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& s) const { SQUEEZE_BENCH_CUDA(cudaEventRecord(e_, s.get())); }
  void synchronize() const { SQUEEZE_BENCH_CUDA(cudaEventSynchronize(e_)); }
  // Seconds from `start` to this event; both must have completed.
  double seconds_since(const Event& start) const {
    float ms = 0;
    SQUEEZE_BENCH_CUDA(cudaEventElapsedTime(&ms, start.e_, e_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace squeeze::perf::codec_bench
