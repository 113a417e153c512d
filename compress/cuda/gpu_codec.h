// The CUDA twins of the CPU codecs: stored, cast and quantize frames encoded and decoded on
// device buffers, on a caller's stream, for a batch of chunks per call. Frames are
// byte-identical to what encode_frame() produces on the CPU for the same input and
// parameters (compress/FORMAT.md), so either side decodes the other's frames.
//
//   gpu::Codec codec;
//   std::vector<gpu::ChunkResult> res(chunks.size());   // pinned memory is best
//   Status st = codec.encode(chunks, stream, res.data()); // host-side checks only
//   cudaStreamSynchronize(stream);
//   for (auto& r : res) if (!gpu::result_status(r).ok()) ...; else frame size = r.bytes
//
// Encode supports every stored/cast/quantize request the CPU supports (all bound modes,
// row dedupe, checksums), and threshold and lossless through the body twins of
// compress/cuda/gpu_bodies.h (threshold without per-stream state: tau is searched for each
// message, no error feedback). Decode validates each frame on the device before writing
// anything (a failing chunk leaves its destination untouched). Stored, cast and quantize
// frames decode from device memory alone; threshold and lossless frames also need the
// header on the host (DecodeChunk::host_header), else they come back kUnsupported.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "compress/codec.h"

namespace squeeze::compress::gpu {

// True when a CUDA device is usable; otherwise *why (if given) says why not.
bool device_available(std::string* why);

struct EncodeChunk {
  Dtype dtype = Dtype::kBytes;
  const void* src = nullptr;  // device memory, count elements of dtype
  uint64_t count = 0;
  const CodecParams* params = nullptr;  // host memory; null means stored
  void* dst = nullptr;                  // device memory for the frame
  std::size_t dst_capacity = 0;         // at least max_frame_bytes() of the request
};

struct DecodeChunk {
  const void* frame = nullptr;  // device memory
  std::size_t frame_bytes = 0;
  void* dst = nullptr;  // device memory
  std::size_t dst_capacity = 0;
  // Optional: a host copy of the frame's first kFrameHeaderBytes (e.g. from the receive
  // staging). Needed for threshold and lossless frames; must describe this frame.
  const void* host_header = nullptr;
};

// Per-chunk outcome, written by the device. Valid once the stream has passed the call.
struct ChunkResult {
  uint64_t bytes = 0;   // encode: frame bytes; decode: bytes written
  uint32_t code = 0;    // a Status::Code; 0 = ok
  uint32_t field = 0;   // which check failed (a gpu::Field), for the message
  uint64_t offset = 0;  // byte offset in the frame of the failing field
  uint64_t value = 0;   // the offending value, where one applies
};

// The failure a result describes, with a message naming the field and offset.
Status result_status(const ChunkResult& r);

class Codec {
 public:
  Codec();
  ~Codec();
  Codec(const Codec&) = delete;
  Codec& operator=(const Codec&) = delete;

  // Checks every request on the host first (kInvalidArgument, kNoSpace, kUnsupported: no
  // work is enqueued then), then enqueues all chunks on `stream`. `results` is host memory
  // with chunks.size() entries, filled asynchronously.
  Status encode(std::span<const EncodeChunk> chunks, cudaStream_t stream, ChunkResult* results);
  Status decode(std::span<const DecodeChunk> chunks, cudaStream_t stream, ChunkResult* results);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace squeeze::compress::gpu
