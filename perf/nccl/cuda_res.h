// The CUDA and NCCL resources one row holds, each released by its destructor: device
// memory, a stream, a communicator (destroyed after a clean run, aborted after an error).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>

#include "perf/nccl/nccl_lib.h"

namespace squeeze::perf::nccl {

// Throws std::runtime_error "<what>: <cudaGetErrorString>" unless e is cudaSuccess.
void cuda_check(cudaError_t e, const char* what);

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  char* bytes() const { return static_cast<char*>(p_); }

 private:
  void* p_ = nullptr;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Comm {
 public:
  // ncclCommInitRank; throws std::runtime_error with NCCL's reason.
  Comm(const NcclLib& lib, int nranks, const ncclUniqueId& id, int rank);
  ~Comm();  // aborts unless close() succeeded
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ncclComm_t get() const { return c_; }
  // ncclCommFinalize + ncclCommDestroy (the net plugin's finalize runs here). Throws.
  void close();
  // Waits for the stream, polling NCCL's async error; throws on an error or after timeout_s.
  void wait(const Stream& s, double timeout_s) const;
  // Throws std::runtime_error "<call>: <reason>" unless r is ncclSuccess.
  void check(ncclResult_t r, const char* call) const;

 private:
  const NcclLib& lib_;
  ncclComm_t c_ = nullptr;
};

}  // namespace squeeze::perf::nccl
