// GPU memory over transports that cannot reach it (TCP, UCX without CUDA, verbs without
// GPUDirect): SQUEEZE_GPU_STAGING=1 makes the engine declare NCCL_PTR_CUDA for them and move
// GPU buffers through pinned host memory. Compressed messages are encoded and decoded on
// the GPU (compress/cuda), so only compressed bytes cross PCIe.
//
// Memory: every GPU region NCCL registers on a staged device gets a pinned host mirror of
// the same size (GpuMirror), allocated at regMr on NCCL's service thread; a message at
// offset o of the region is staged at offset o of the mirror. NCCL never has two messages in
// flight on overlapping parts of a region, so neither do the mirrors. This is the pinned
// memory NCCL would allocate itself for host buffers. Per comm (GpuStaging, also created at
// the first GPU regMr, because pinned allocations and lazy kernel loading may wait for the
// device, and NCCL's kernels wait for the progress thread): a non-blocking stream on the
// buffer's device, a memory pool for the device-side frames of each message, events, pinned
// codec results, the GPU codec, whose kernels a warm-up loads once per device.
//
// Send (progress thread, in isend order): raw: D2H copy into the mirror, event; compressed:
// GPU encode into a pool frame, event; then D2H of exactly the frame's bytes into the mirror,
// event. A frame that failed or is not smaller than the message goes raw instead. The GPU
// threshold encoder keeps no per-stream state: it searches tau for each message and applies
// no error feedback.
// Receive: raw payloads land in the mirror and are copied H2D; frames are copied into the
// mirror, H2D into a pool buffer and decoded on the GPU into NCCL's buffer. test() says done
// only when the copies' event completed and every decode result is ok. Nothing here blocks
// the progress thread: completion is polled with cudaEventQuery.
//
// Builds without CUDA keep the same entry points; they say "GPU staging not built".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/status.h"

namespace squeeze::plugin {

class CommBase;
class SendComm;
class RecvComm;
struct SendRequest;
struct RecvRequest;
struct MemRegion;

// The largest GPU region mirrored in pinned memory (NCCL's own buffers are a few MiB).
inline constexpr std::size_t kGpuMirrorMaxBytes = std::size_t{1} << 30;

// `requested`: SQUEEZE_GPU_STAGING is on. Then counts CUDA devices. True: staging is on.
// *why is the reason, for the INFO line.
bool decide_gpu_staging(bool requested, std::string* why);

// The pinned host twin of a GPU region (see above).
struct GpuMirror {
  GpuMirror() = default;
  ~GpuMirror();
  GpuMirror(const GpuMirror&) = delete;
  GpuMirror& operator=(const GpuMirror&) = delete;
  uint8_t* host = nullptr;  // pinned; never null once made (an empty region gets a few bytes)
  std::size_t size = 0;     // the region's size
  int device = -1;
};

// Per-comm CUDA state (stream, pool, events, results, codec); defined in gpu_staging_impl.h.
class GpuStaging {
 public:
  struct Impl;
  explicit GpuStaging(std::unique_ptr<Impl> impl);
  ~GpuStaging();  // waits for the comm's stream, then frees
  GpuStaging(const GpuStaging&) = delete;
  GpuStaging& operator=(const GpuStaging&) = delete;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// regMr of NCCL_PTR_CUDA memory on a staged device: checks that [data, data+size) is CUDA
// memory, allocates its mirror into mr->mirror and creates the comm's GpuStaging on first use.
transport::Status gpu_stage_region(CommBase* c, MemRegion* mr);

// isend/irecv on a staged region: where [data, data+size) is staged in the region's mirror
// (never null). Fails unless the buffer lies inside the region.
transport::Status gpu_stage_address(const MemRegion& mr, const void* data, std::size_t size,
                                    uint8_t** stage);

// Send side, progress thread. Start the copy or encode of r (r->gpu); poll until its bytes
// are in the mirror: *ready then, and *item describes them (raw or frame). Statistics are
// counted once, when the request becomes ready.
transport::Status gpu_send_start(SendComm* c, SendRequest* r);
struct GpuSendReady {
  bool frame = false;
  uint64_t payload_bytes = 0;
};
transport::Status gpu_send_poll(SendComm* c, SendRequest* r, bool* ready, GpuSendReady* out);

// Receive side, progress thread. Once the transport delivered r (r->gpu), start the copies
// and decodes into NCCL's buffers (sets r->job kRunning, or kFailed with r->job_error); poll
// moves a running request to kDone or kFailed. Errors returned are local CUDA failures.
transport::Status gpu_recv_start(RecvComm* c, RecvRequest* r);
transport::Status gpu_recv_poll(RecvComm* c, RecvRequest* r);

// closeSend/closeRecv: waits for the comm's GPU work and settles its running requests, so
// the comm can be freed. Blocks; never call it from the progress path.
void gpu_quiesce(SendComm* c, SendRequest* begin, SendRequest* end);
void gpu_quiesce(RecvComm* c, RecvRequest* begin, RecvRequest* end);

}  // namespace squeeze::plugin
