// Internal to GPU staging (staging.cc, send.cc, recv.cc): the per-comm CUDA
// state and the per-request progress. CUDA builds only.
#pragma once

#if SQUEEZE_HAVE_CUDA

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "compress/cuda/gpu_codec.h"
#include "plugin/engine/gpu/memory.h"
#include "plugin/engine/gpu/staging.h"
#include "transport/transport.h"

namespace squeeze::plugin {

// Where one request's GPU work stands.
enum class GpuStage : uint8_t {
  kIdle = 0,
  kCopying,       // send: raw D2H into the mirror; receive: H2D copies and GPU decodes
  kEncoding,      // send: GPU encode into a pool frame, result into pinned memory
  kCopyingFrame,  // send: D2H of exactly the frame's bytes into the mirror
  kReady,         // send: bytes in the mirror, statistics counted
};

// One per request slot of the comm (SendComm::requests / RecvComm::requests, same index).
struct GpuSlot {
  GpuStage stage = GpuStage::kIdle;
  gpu::Event start, done;  // around the request's GPU work; timing events
  // send
  void* frame_dev = nullptr;  // the encode's output, from the pool, until copied out
  bool frame = false;         // post a frame (else raw)
  // receive: the frames decoded on the GPU, in the order of the decode call
  int chunks = 0;
  std::array<int, transport::kMaxRecvs> chunk_item{};
  std::array<compress::CodecId, transport::kMaxRecvs> chunk_codec{};
};

struct GpuStaging::Impl {
  // Declared first so it is destroyed last, after everything that used it.
  gpu::Stream stream;
  gpu::MemPool pool;
  int device = -1;
  int nslots = 0;
  compress::gpu::Codec codec;
  gpu::PinnedMemory results;  // nslots x kMaxRecvs ChunkResults, written by the device
  std::unique_ptr<GpuSlot[]> slots;

  compress::gpu::ChunkResult* result(int slot, int item) {
    return reinterpret_cast<compress::gpu::ChunkResult*>(results.data()) +
           static_cast<std::size_t>(slot) * transport::kMaxRecvs + static_cast<std::size_t>(item);
  }
};

// Milliseconds between two completed timing events, as nanoseconds (0 when unknown).
uint64_t gpu_elapsed_ns(const gpu::Event& from, const gpu::Event& to);

// Once per device (warmup.cc): encodes and decodes a small message with every GPU codec
// and dtype on g's stream, waiting for it, so their kernels are loaded before the progress
// thread needs them, and fails when a codec does not work on this device. Service thread only.
transport::Status gpu_warm_up_once(GpuStaging::Impl& g);

}  // namespace squeeze::plugin

#endif  // SQUEEZE_HAVE_CUDA
