// squeeze-codec-bench --gpu: the CUDA codecs (compress/cuda/gpu_codec.h) on the same data
// sets and configurations as the CPU mode. Built only where CMake enables CUDA
// (SQUEEZE_HAVE_CUDA); the CPU mode refuses --gpu otherwise.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compress/codec.h"

namespace squeeze::perf::codec_bench {

struct GpuOptions {
  std::size_t size = 16u << 20;  // message bytes per data set, as in the CPU mode
  int iters = 5;                 // timed batches; the median is reported
  bool json_only = false;
  std::string codec_filter, data_filter;  // name prefixes
  compress::Dtype dtype = compress::Dtype::kFloat32;
  // Chunk sizes in bytes; each message is cut into chunks of this size (whole rows) and
  // all chunks go to the device as one batch. 0 = the whole message as one chunk.
  std::vector<std::size_t> chunks{0, 128u << 10};
};

// Runs the GPU mode; returns the process exit status: 0 when every GPU frame and decode
// matched the CPU's, 1 on a mismatch or a failure, 77 (printing "SKIP: ...") when no CUDA
// device is usable.
int run_gpu_bench(const GpuOptions& o);

}  // namespace squeeze::perf::codec_bench
