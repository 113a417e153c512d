#include "perf/nccl/cuda_res.h"

#include <chrono>
#include <stdexcept>
#include <thread>

namespace squeeze::perf::nccl {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  cuda_check(cudaMalloc(&p_, bytes == 0 ? 1 : bytes), "cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() { cudaFree(p_); }

Stream::Stream() {
  cuda_check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate");
}
Stream::~Stream() { cudaStreamDestroy(s_); }

Comm::Comm(const NcclLib& lib, int nranks, const ncclUniqueId& id, int rank) : lib_(lib) {
  const ncclResult_t r = lib_.CommInitRank(&c_, nranks, id, rank);
  if (r != ncclSuccess) {
    c_ = nullptr;
    throw std::runtime_error(lib_.describe("ncclCommInitRank", r));
  }
}

Comm::~Comm() {
  if (c_ != nullptr) lib_.CommAbort(c_);
}

void Comm::check(ncclResult_t r, const char* call) const {
  if (r != ncclSuccess) throw std::runtime_error(lib_.describe(call, r, c_));
}

void Comm::close() {
  if (lib_.CommFinalize != nullptr) check(lib_.CommFinalize(c_), "ncclCommFinalize");
  const ncclResult_t r = lib_.CommDestroy(c_);
  c_ = nullptr;  // destroyed or not, never abort it afterwards
  if (r != ncclSuccess) throw std::runtime_error(lib_.describe("ncclCommDestroy", r));
}

void Comm::wait(const Stream& s, double timeout_s) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s.get());
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) cuda_check(e, "cudaStreamQuery");
    ncclResult_t async = ncclSuccess;
    check(lib_.CommGetAsyncError(c_, &async), "ncclCommGetAsyncError");
    if (async != ncclSuccess && async != ncclInProgress) check(async, "NCCL (asynchronous error)");
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("the collective did not finish within " +
                               std::to_string(static_cast<int>(timeout_s)) +
                               " s (a rank or the network is stuck; NCCL_DEBUG=INFO tells more)");
    std::this_thread::yield();
  }
}

}  // namespace squeeze::perf::nccl
