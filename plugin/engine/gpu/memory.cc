#include "plugin/engine/gpu/memory.h"

#if SQUEEZE_HAVE_CUDA

#include <string>

namespace squeeze::plugin::gpu {

transport::Status cuda_status(cudaError_t e, const char* what) {
  return transport::Status::System(std::string("CUDA: ") + what + ": " + cudaGetErrorName(e) +
                                   " (" + cudaGetErrorString(e) + ")");
}

DeviceGuard::DeviceGuard(int device) {
  error_ = cudaGetDevice(&prev_);
  if (error_ != cudaSuccess) {
    prev_ = -1;
    error_ = cudaSetDevice(device);
    return;
  }
  if (prev_ != device) {
    error_ = cudaSetDevice(device);
    restore_ = error_ == cudaSuccess;
  }
}

DeviceGuard::~DeviceGuard() {
  if (restore_) (void)cudaSetDevice(prev_);
}

Stream::~Stream() {
  if (s_ != nullptr) (void)cudaStreamDestroy(s_);
}
cudaError_t Stream::create() { return cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking); }

Event::~Event() {
  if (e_ != nullptr) (void)cudaEventDestroy(e_);
}
cudaError_t Event::create() { return cudaEventCreateWithFlags(&e_, cudaEventDefault); }

MemPool::~MemPool() {
  if (p_ != nullptr) (void)cudaMemPoolDestroy(p_);
}

cudaError_t MemPool::create(int device) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  if (cudaError_t e = cudaMemPoolCreate(&p_, &props); e != cudaSuccess) {
    p_ = nullptr;
    return e;
  }
  // Keep freed blocks cached: staging sizes repeat message after message.
  uint64_t keep = UINT64_MAX;
  return cudaMemPoolSetAttribute(p_, cudaMemPoolAttrReleaseThreshold, &keep);
}

PinnedMemory::~PinnedMemory() {
  if (p_ != nullptr) (void)cudaFreeHost(p_);
}

cudaError_t PinnedMemory::allocate(std::size_t bytes) {
  if (p_ != nullptr) {
    (void)cudaFreeHost(p_);
    p_ = nullptr;
    size_ = 0;
  }
  if (bytes == 0) return cudaSuccess;
  cudaError_t e = cudaHostAlloc(&p_, bytes, cudaHostAllocPortable);
  if (e != cudaSuccess) {
    p_ = nullptr;
    return e;
  }
  size_ = bytes;
  return cudaSuccess;
}

}  // namespace squeeze::plugin::gpu

#endif  // SQUEEZE_HAVE_CUDA
