// GPU staging, receive side: raw payloads landed in the pinned mirror and are copied H2D;
// frames are copied into the mirror, H2D into a pool buffer and decoded on the GPU into
// NCCL's buffer (the host copy of the header goes along, which threshold and lossless
// frames need). Host destinations in the same receive are decoded on the CPU, as usual.
// Completion is polled with cudaEventQuery; a frame that fails to decode fails the receive.
#include "plugin/engine/gpu/staging.h"

#if SQUEEZE_HAVE_CUDA

#include <chrono>
#include <cstring>
#include <string>

#include "plugin/engine/codec_jobs.h"
#include "plugin/engine/gpu/staging_impl.h"
#include "plugin/engine/recv_comm.h"

namespace squeeze::plugin {

namespace {

using Clock = std::chrono::steady_clock;

void fail(RecvRequest* r, int i, const std::string& why) {
  const transport::Received& g = r->got[i];
  r->job.finish(JobState::kFailed, "receive " + std::to_string(i) + " (tag " +
                                       std::to_string(g.header.tag) + ", " +
                                       std::to_string(g.staged.size()) + "-byte frame): " + why);
}

// Decodes item i's frame on the CPU into dst (host memory: NCCL's buffer or the mirror),
// after the same header checks as every other decode.
compress::Status cpu_decode(const Engine& e, RecvRequest* r, int i, uint8_t* dst, std::size_t cap,
                            std::size_t* written) {
  const transport::Received& g = r->got[i];
  const auto t0 = Clock::now();
  compress::FrameInfo info{};
  compress::Status s = check_frame(g, &info);
  if (s.ok()) s = compress::decode_frame(g.staged, {dst, cap}, written);
  if (!s.ok()) return s;
  const auto ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
  if (e.stats) e.stats->record_decode(info.codec, r->collective, g.staged.size(), *written, ns);
  if (e.pays) e.pays->record_decode(info.codec, *written, static_cast<double>(ns) * 1e-9);
  return s;
}

}  // namespace

transport::Status gpu_recv_start(RecvComm* c, RecvRequest* r) {
  if (c->gpu() == nullptr)
    return transport::Status::Internal(
        "GPU staging: a GPU receive on a comm without GPU staging state");
  GpuStaging::Impl& g = c->gpu()->impl();
  const int slot = c->index_of(r);
  GpuSlot& s = g.slots[slot];
  s.chunks = 0;
  // First everything that can fail on bad input, before any copy is enqueued: host
  // destinations decode on the CPU; GPU frames have their headers checked.
  for (int i = 0; i < r->n; ++i) {
    const transport::Received& got = r->got[i];
    if (got.header.kind != transport::PayloadKind::kFrame) continue;
    std::size_t written = 0;
    compress::Status st;
    if (r->host_stage[i] == nullptr) {
      st = cpu_decode(c->engine(), r, i, static_cast<uint8_t*>(r->dst[i]), r->cap[i], &written);
    } else {
      compress::FrameInfo info{};
      st = check_frame(got, &info);
      // Frames only the CPU decodes (the collective network's) never reach a GPU buffer.
      if (st.ok()) st = compress::gpu_decodable(got.staged);
    }
    if (!st.ok()) {
      fail(r, i, st.message());
      return transport::Status::Ok();
    }
  }
  gpu::DeviceGuard dev(g.device);
  if (dev.error() != cudaSuccess) return gpu::cuda_status(dev.error(), "cudaSetDevice");
  (void)cudaGetLastError();  // a benign failure of ours must not fail the codec's launch checks
  cudaStream_t stream = g.stream.get();
  SQ_CUDA_TRY(cudaEventRecord(s.start.get(), stream));
  std::array<compress::gpu::DecodeChunk, transport::kMaxRecvs> chunks{};
  std::array<void*, transport::kMaxRecvs> frames{};
  transport::Status err;
  for (int i = 0; i < r->n && err.ok(); ++i) {
    const transport::Received& got = r->got[i];
    uint8_t* stage = r->host_stage[i];
    if (stage == nullptr) continue;  // host destination: done above
    if (got.header.kind != transport::PayloadKind::kFrame) {
      const auto n =
          static_cast<std::size_t>(got.header.original_bytes);  // the transport checked it fits
      if (n == 0) continue;
      if (cudaError_t e = cudaMemcpyAsync(r->dst[i], stage, n, cudaMemcpyHostToDevice, stream);
          e != cudaSuccess)
        err = gpu::cuda_status(e, "cudaMemcpyAsync (raw, host to device)");
      continue;
    }
    const std::size_t fbytes = got.staged.size();
    void* dev_frame = nullptr;
    if (fbytes > r->cap[i] ||
        cudaMallocFromPoolAsync(&dev_frame, fbytes, g.pool.get(), stream) != cudaSuccess) {
      // Larger than this receive's part of the mirror (a stored frame of a full-size
      // message), or no device memory: decode on the CPU into the mirror, then copy raw.
      (void)cudaGetLastError();
      std::size_t written = 0;
      compress::Status st = cpu_decode(c->engine(), r, i, stage, r->cap[i], &written);
      if (!st.ok()) {
        fail(r, i, st.message());
        break;
      }
      if (written == 0) continue;
      if (cudaError_t e =
              cudaMemcpyAsync(r->dst[i], stage, written, cudaMemcpyHostToDevice, stream);
          e != cudaSuccess)
        err = gpu::cuda_status(e, "cudaMemcpyAsync (decoded, host to device)");
      continue;
    }
    frames[static_cast<std::size_t>(s.chunks)] = dev_frame;
    std::memcpy(stage, got.staged.data(), fbytes);  // pinned, so the H2D copy below is asynchronous
    if (cudaError_t e = cudaMemcpyAsync(dev_frame, stage, fbytes, cudaMemcpyHostToDevice, stream);
        e != cudaSuccess) {
      err = gpu::cuda_status(e, "cudaMemcpyAsync (frame, host to device)");
      ++s.chunks;
      break;
    }
    compress::FrameInfo info{};
    (void)compress::peek_frame(got.staged, &info);  // checked above
    compress::gpu::DecodeChunk& ch = chunks[static_cast<std::size_t>(s.chunks)];
    ch.frame = dev_frame;
    ch.frame_bytes = fbytes;
    ch.dst = r->dst[i];
    ch.dst_capacity = r->cap[i];
    ch.host_header = stage;  // the mirror holds the frame's header too
    s.chunk_item[static_cast<std::size_t>(s.chunks)] = i;
    s.chunk_codec[static_cast<std::size_t>(s.chunks)] = info.codec;
    ++s.chunks;
  }
  if (err.ok() && r->job.load() != JobState::kFailed && s.chunks > 0) {
    compress::Status st = g.codec.decode({chunks.data(), static_cast<std::size_t>(s.chunks)},
                                         stream, g.result(slot, 0));
    if (!st.ok()) {
      (void)cudaGetLastError();
      fail(r, s.chunk_item[0], "GPU decode: " + st.message());
    }
  }
  for (int k = 0; k < s.chunks; ++k)
    if (frames[static_cast<std::size_t>(k)] != nullptr)
      (void)cudaFreeAsync(frames[static_cast<std::size_t>(k)], stream);
  if (!err.ok()) return err;
  if (r->job.load() == JobState::kFailed) {
    s.chunks = 0;
    return transport::Status::Ok();
  }
  SQ_CUDA_TRY(cudaEventRecord(s.done.get(), stream));
  s.stage = GpuStage::kCopying;
  r->job.start();
  return transport::Status::Ok();
}

transport::Status gpu_recv_poll(RecvComm* c, RecvRequest* r) {
  if (c->gpu() == nullptr)
    return transport::Status::Internal(
        "GPU staging: a GPU receive on a comm without GPU staging state");
  GpuStaging::Impl& g = c->gpu()->impl();
  const int slot = c->index_of(r);
  GpuSlot& s = g.slots[slot];
  if (s.stage != GpuStage::kCopying) return transport::Status::Ok();
  gpu::DeviceGuard dev(g.device);
  if (dev.error() != cudaSuccess) return gpu::cuda_status(dev.error(), "cudaSetDevice");
  const cudaError_t e = cudaEventQuery(s.done.get());
  if (e == cudaErrorNotReady) return transport::Status::Ok();
  if (e != cudaSuccess) return gpu::cuda_status(e, "cudaEventQuery (GPU staging, receive)");
  s.stage = GpuStage::kIdle;
  uint64_t out_bytes = 0;
  for (int k = 0; k < s.chunks; ++k) {
    const compress::gpu::ChunkResult res = *g.result(slot, k);
    const int i = s.chunk_item[static_cast<std::size_t>(k)];
    const compress::Status rs = compress::gpu::result_status(res);
    if (!rs.ok()) {
      fail(r, i, rs.message());
      return transport::Status::Ok();
    }
    if (res.bytes != r->got[i].header.original_bytes) {
      fail(r, i,
           "GPU decode wrote " + std::to_string(res.bytes) + " bytes, the message header says " +
               std::to_string(r->got[i].header.original_bytes));
      return transport::Status::Ok();
    }
    out_bytes += res.bytes;
  }
  // The decodes share one stream: the elapsed time is split over them by bytes written.
  const uint64_t ns = s.chunks > 0 ? gpu_elapsed_ns(s.start, s.done) : 0;
  const Engine& engine = c->engine();
  for (int k = 0; k < s.chunks && engine.stats != nullptr; ++k) {
    const int i = s.chunk_item[static_cast<std::size_t>(k)];
    const uint64_t bytes = r->got[i].header.original_bytes;
    const uint64_t share =
        out_bytes > 0 ? static_cast<uint64_t>(static_cast<double>(ns) * static_cast<double>(bytes) /
                                              static_cast<double>(out_bytes))
                      : 0;
    engine.stats->record_decode(s.chunk_codec[static_cast<std::size_t>(k)], r->collective,
                                r->got[i].staged.size(), bytes, share);
  }
  s.chunks = 0;
  r->job.finish(JobState::kDone);
  return transport::Status::Ok();
}

}  // namespace squeeze::plugin

#endif  // SQUEEZE_HAVE_CUDA
