// GPU staging, send side: a GPU buffer reaches the pinned mirror raw (one D2H copy) or as a
// frame encoded on the GPU (encode, then D2H of exactly the frame's bytes). Driven from the
// progress thread by polling events; never waits for the device.
#include "plugin/engine/gpu/staging.h"

#if SQUEEZE_HAVE_CUDA

#include <atomic>
#include <string>

#include "plugin/engine/gpu/staging_impl.h"
#include "plugin/engine/send_comm.h"
#include "plugin/log.h"

namespace squeeze::plugin {

namespace {

// Enqueues the raw copy of r into its mirror and the completion event.
transport::Status enqueue_raw(GpuStaging::Impl& g, GpuSlot& s, SendRequest* r) {
  if (r->size > 0)
    SQ_CUDA_TRY(
        cudaMemcpyAsync(r->host_stage, r->data, r->size, cudaMemcpyDeviceToHost, g.stream.get()));
  SQ_CUDA_TRY(cudaEventRecord(s.done.get(), g.stream.get()));
  s.frame = false;
  s.stage = GpuStage::kCopying;
  return transport::Status::Ok();
}

// The message goes raw after all: counted under `why`, said at WARN when the codec failed.
transport::Status fall_back_to_raw(const Engine& e, GpuStaging::Impl& g, GpuSlot& s, SendRequest* r,
                                   policy::RawCause why, const std::string& reason) {
  if (why == policy::RawCause::kFailed)
    SQ_WARN("GPU encode (%s) failed, sending %zu bytes raw instead: %s",
            compress::codec_name(r->plan.params.codec), r->size, reason.c_str());
  if (e.stats) e.stats->record_raw(r->plan.stats_slot, r->plan.collective, r->size, why);
  r->plan.compress = false;
  return enqueue_raw(g, s, r);
}

void note_threshold_state_once(const SendRequest* r) {
  static std::atomic<bool> said{false};
  if (!compress::codec_traits(r->plan.params.codec).stateful || said.exchange(true)) return;
  SQ_INFO(kSubsysNet, "GPU staging: threshold on the GPU searches tau for every message%s",
          r->plan.params.threshold.error_feedback
              ? " and applies no error feedback (the rule asks for it)"
              : "");
}

}  // namespace

transport::Status gpu_send_start(SendComm* c, SendRequest* r) {
  if (c->gpu() == nullptr)
    return transport::Status::Internal(
        "GPU staging: a GPU send on a comm without GPU staging state");
  GpuStaging::Impl& g = c->gpu()->impl();
  GpuSlot& s = g.slots[c->index_of(r)];
  gpu::DeviceGuard dev(g.device);
  if (dev.error() != cudaSuccess) return gpu::cuda_status(dev.error(), "cudaSetDevice");
  (void)cudaGetLastError();  // a benign failure of ours must not fail the codec's launch checks
  s.frame_dev = nullptr;
  s.frame = false;
  r->job.start();
  SQ_CUDA_TRY(cudaEventRecord(s.start.get(), g.stream.get()));
  if (!r->plan.compress) return enqueue_raw(g, s, r);
  note_threshold_state_once(r);
  // The frame never exceeds the message plus its header (a stored frame at worst).
  const std::size_t cap = r->size + compress::kFrameHeaderBytes;
  if (cudaError_t e = cudaMallocFromPoolAsync(&s.frame_dev, cap, g.pool.get(), g.stream.get());
      e != cudaSuccess) {
    (void)cudaGetLastError();
    s.frame_dev = nullptr;
    return fall_back_to_raw(c->engine(), g, s, r, policy::RawCause::kFailed,
                            std::string("no device memory for the frame: ") + cudaGetErrorName(e));
  }
  compress::gpu::EncodeChunk chunk;
  chunk.dtype = r->plan.dtype;
  chunk.src = r->data;
  chunk.count = r->plan.count;
  chunk.params = &r->plan.params;
  chunk.dst = s.frame_dev;
  chunk.dst_capacity = cap;
  compress::Status st = g.codec.encode({&chunk, 1}, g.stream.get(), g.result(c->index_of(r), 0));
  if (!st.ok()) {
    (void)cudaGetLastError();
    (void)cudaFreeAsync(s.frame_dev, g.stream.get());
    s.frame_dev = nullptr;
    return fall_back_to_raw(c->engine(), g, s, r, policy::RawCause::kFailed, st.message());
  }
  SQ_CUDA_TRY(cudaEventRecord(s.done.get(), g.stream.get()));
  s.stage = GpuStage::kEncoding;
  return transport::Status::Ok();
}

transport::Status gpu_send_poll(SendComm* c, SendRequest* r, bool* ready, GpuSendReady* out) {
  *ready = false;
  if (c->gpu() == nullptr)
    return transport::Status::Internal(
        "GPU staging: a GPU send on a comm without GPU staging state");
  GpuStaging::Impl& g = c->gpu()->impl();
  GpuSlot& s = g.slots[c->index_of(r)];
  if (s.stage != GpuStage::kReady) {
    gpu::DeviceGuard dev(g.device);
    if (dev.error() != cudaSuccess) return gpu::cuda_status(dev.error(), "cudaSetDevice");
    const cudaError_t e = cudaEventQuery(s.done.get());
    if (e == cudaErrorNotReady) return transport::Status::Ok();
    if (e != cudaSuccess) return gpu::cuda_status(e, "cudaEventQuery (GPU staging, send)");
    if (s.stage == GpuStage::kEncoding) {
      const compress::gpu::ChunkResult res = *g.result(c->index_of(r), 0);
      const compress::Status rs = compress::gpu::result_status(res);
      // Lossless coding here asks the pays gate (plan.cc), which learns the codec's speed and
      // ratio from these encodes, frames that came out no smaller included.
      if (const Engine& engine = c->engine(); rs.ok() && engine.pays && !r->plan.lossy)
        engine.pays->record_encode(r->plan.params.codec, r->size, res.bytes,
                                   static_cast<double>(gpu_elapsed_ns(s.start, s.done)) * 1e-9);
      if (!rs.ok() || res.bytes >= r->size) {
        // Failed, or no smaller than the message (a stored frame): the raw bytes are better.
        (void)cudaFreeAsync(s.frame_dev, g.stream.get());
        s.frame_dev = nullptr;
        return fall_back_to_raw(c->engine(), g, s, r,
                                rs.ok() ? policy::RawCause::kNotWorthIt : policy::RawCause::kFailed,
                                rs.message());
      }
      r->encode_ns = gpu_elapsed_ns(s.start, s.done);
      r->frame_bytes = static_cast<std::size_t>(res.bytes);
      SQ_CUDA_TRY(cudaMemcpyAsync(r->host_stage, s.frame_dev, r->frame_bytes,
                                  cudaMemcpyDeviceToHost, g.stream.get()));
      SQ_CUDA_TRY(cudaFreeAsync(s.frame_dev, g.stream.get()));
      s.frame_dev = nullptr;
      SQ_CUDA_TRY(cudaEventRecord(s.done.get(), g.stream.get()));
      s.frame = true;
      s.stage = GpuStage::kCopyingFrame;
      return transport::Status::Ok();
    }
    if (const Engine& engine = c->engine(); s.frame && engine.stats)
      engine.stats->record_encode(r->plan.stats_slot, r->plan.collective, r->size, r->frame_bytes,
                                  r->encode_ns);
    s.stage = GpuStage::kReady;
    r->job.finish(JobState::kDone);
  }
  *ready = true;
  out->frame = s.frame;
  out->payload_bytes = s.frame ? r->frame_bytes : r->size;
  return transport::Status::Ok();
}

}  // namespace squeeze::plugin

#endif  // SQUEEZE_HAVE_CUDA
