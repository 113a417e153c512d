// One case of squeeze-codec-bench --gpu: one codec configuration on one data set cut into
// a batch of chunks. The CPU reference frames and decode are built first; then the batch
// is encoded and decoded on the device, checked against them, and timed with cudaEvents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compress/codec.h"
#include "compress/cuda/gpu_codec.h"
#include "perf/codec_bench_cases.h"
#include "perf/codec_bench_cuda.h"

namespace squeeze::perf::codec_bench {

// A message cut into chunks of whole rows, uploaded once, with room on the device for every
// chunk's frame (slot i: kFrameHeaderBytes + its input bytes, which always suffices) and for
// the decoded message.
struct Batch {
  Batch(compress::Dtype d, const std::vector<uint8_t>& message, std::size_t chunk_bytes,
        uint32_t row_length);

  compress::Dtype dtype;
  const std::vector<uint8_t>& host;    // the message
  std::size_t chunk_elements = 0;      // elements per chunk (the last may hold fewer)
  std::vector<uint64_t> first, count;  // per chunk, in elements
  std::vector<std::size_t> slot;       // per chunk, byte offset of its frame slot in `frames`
  DeviceBuffer input, frames, output;

  std::size_t chunks() const { return count.size(); }
  std::size_t bytes(std::size_t i) const { return count[i] * compress::dtype_size(dtype); }
  std::size_t offset(std::size_t i) const { return first[i] * compress::dtype_size(dtype); }
};

struct CaseResult {
  std::string cpu_error;      // the CPU reference failed: the case is skipped, as in CPU mode
  std::string gpu_error;      // the device failed where the CPU did not
  std::size_t bytes_out = 0;  // all GPU frames together
  std::size_t mismatched_chunks = 0;  // GPU frames that differ from the CPU's
  bool decode_same = false;           // the GPU decode of the batch equals the CPU decode
  double max_abs_err = 0;             // GPU decode against the input
  double bound = 0;                   // loosest promised bound over the chunks (NaN: none)
  double encode_s = 0, decode_s = 0;  // median seconds per batch
};

// Runs `c` (row_length already set) on `b`: one checked warm-up batch each way, then `iters`
// timed batches each way.
CaseResult run_case(const Config& c, const Batch& b, int iters, const Stream& stream,
                    compress::gpu::Codec& codec);

}  // namespace squeeze::perf::codec_bench
