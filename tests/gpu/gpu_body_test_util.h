// Device buffers and a GPU fixture for the body-level CUDA twin tests. Skips without a GPU.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compress/cuda/gpu_bodies.h"
#include "compress/cuda/gpu_codec.h"

namespace squeeze::compress::gpu_test {

class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t n, uint8_t fill = 0) : n_(n) {
    EXPECT_EQ(cudaMalloc(&p_, n ? n : 1), cudaSuccess);
    EXPECT_EQ(cudaMemset(p_, fill, n ? n : 1), cudaSuccess);
  }
  explicit DeviceBytes(const std::vector<uint8_t>& v) : DeviceBytes(v.size()) {
    if (!v.empty()) {
      EXPECT_EQ(cudaMemcpy(p_, v.data(), v.size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
  }
  ~DeviceBytes() { cudaFree(p_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  uint8_t* get() { return static_cast<uint8_t*>(p_); }
  std::size_t size() const { return n_; }
  std::vector<uint8_t> download(std::size_t n) const {
    std::vector<uint8_t> out(n);
    if (n > 0) {
      EXPECT_EQ(cudaMemcpy(out.data(), p_, n, cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return out;
  }

 private:
  void* p_ = nullptr;
  std::size_t n_;
};

class GpuBodies : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu::device_available(&why)) GTEST_SKIP() << "no usable CUDA device: " << why;
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    void* r = nullptr;
    ASSERT_EQ(cudaMalloc(&r, sizeof(gpu::BodyResult)), cudaSuccess);
    result_ = static_cast<gpu::BodyResult*>(r);
  }
  void TearDown() override {
    if (result_ != nullptr) cudaFree(result_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  // Waits for the stream and returns the device-side result.
  gpu::BodyResult wait_result() {
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    gpu::BodyResult r;
    EXPECT_EQ(cudaMemcpy(&r, result_, sizeof r, cudaMemcpyDeviceToHost), cudaSuccess);
    return r;
  }

  cudaStream_t stream_ = nullptr;
  gpu::BodyResult* result_ = nullptr;
};

}  // namespace squeeze::compress::gpu_test
