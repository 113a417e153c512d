// GPU staging: the decision at init, mirrors of GPU regions, the per-comm CUDA state and
// closing. The send and receive halves are in send.cc and recv.cc.
#include "plugin/engine/gpu/staging.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin/engine/mem_region.h"
#include "plugin/engine/recv_comm.h"
#include "plugin/engine/send_comm.h"
#include "plugin/log.h"

#if SQUEEZE_HAVE_CUDA
#include "plugin/engine/gpu/staging_impl.h"
#endif

namespace squeeze::plugin {

namespace {

constexpr const char* kOffWhy = "off (SQUEEZE_GPU_STAGING is off)";

}  // namespace

#if SQUEEZE_HAVE_CUDA

bool decide_gpu_staging(bool requested, std::string* why) {
  if (!requested) {
    *why = kOffWhy;
    return false;
  }
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    *why = std::string("off: no CUDA device (") +
           (e != cudaSuccess ? cudaGetErrorName(e) : "0 devices") + ")";
    return false;
  }
  *why = "on: " + std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") +
         "; GPU buffers are staged through pinned host memory and compressed on the GPU";
  return true;
}

uint64_t gpu_elapsed_ns(const gpu::Event& from, const gpu::Event& to) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, from.get(), to.get()) != cudaSuccess || ms < 0) {
    (void)cudaGetLastError();
    return 0;
  }
  return static_cast<uint64_t>(static_cast<double>(ms) * 1e6);
}

GpuMirror::~GpuMirror() {
  if (host != nullptr) (void)cudaFreeHost(host);  // errors ignored: the runtime may be unloading
}

GpuStaging::GpuStaging(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GpuStaging::~GpuStaging() {
  if (!impl_) return;
  gpu::DeviceGuard dev(impl_->device);
  // Copies into the mirrors and frees into the pool must be over before either goes.
  if (impl_->stream.get() != nullptr) (void)cudaStreamSynchronize(impl_->stream.get());
  (void)cudaGetLastError();
}

namespace {

transport::Status make_staging(int device, int nslots, std::unique_ptr<GpuStaging>* out) {
  auto g = std::make_unique<GpuStaging::Impl>();
  g->device = device;
  g->nslots = nslots;
  gpu::DeviceGuard dev(device);
  if (dev.error() != cudaSuccess) return gpu::cuda_status(dev.error(), "cudaSetDevice");
  SQ_CUDA_TRY(g->stream.create());
  SQ_CUDA_TRY(g->pool.create(device));
  SQ_CUDA_TRY(g->results.allocate(static_cast<std::size_t>(nslots) * transport::kMaxRecvs *
                                  sizeof(compress::gpu::ChunkResult)));
  g->slots = std::make_unique<GpuSlot[]>(static_cast<std::size_t>(nslots));
  for (int i = 0; i < nslots; ++i) {
    SQ_CUDA_TRY(g->slots[i].start.create());
    SQ_CUDA_TRY(g->slots[i].done.create());
  }
  if (transport::Status s = gpu_warm_up_once(*g); !s.ok()) return s;
  *out = std::make_unique<GpuStaging>(std::move(g));
  return transport::Status::Ok();
}

}  // namespace

transport::Status gpu_stage_region(CommBase* c, MemRegion* mr) {
  if (mr->size > kGpuMirrorMaxBytes)
    return transport::Status::Usage(
        "regMr: GPU staging mirrors each GPU region in pinned host memory; " +
        std::to_string(mr->size) + " bytes is more than its limit of " +
        std::to_string(kGpuMirrorMaxBytes) + " bytes");
  int device = -1;
  if (mr->data != nullptr) {
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, mr->data);
    if (e != cudaSuccess || a.type == cudaMemoryTypeUnregistered) {
      (void)cudaGetLastError();
      char where[32];
      snprintf(where, sizeof where, "%p", mr->data);
      return transport::Status::Usage(
          std::string("regMr: ") + where + " (" + std::to_string(mr->size) +
          " bytes) was registered as NCCL_PTR_CUDA but is not CUDA memory" +
          (e != cudaSuccess ? std::string(" (") + cudaGetErrorName(e) + ")" : ""));
    }
    device = a.device;
  } else if (c->gpu() != nullptr) {
    device = c->gpu()->impl().device;
  } else if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = 0;
  }
  if (c->gpu() != nullptr && c->gpu()->impl().device != device)
    return transport::Status::Usage("regMr: GPU memory on device " + std::to_string(device) +
                                    ", but this comm stages through device " +
                                    std::to_string(c->gpu()->impl().device));
  if (c->gpu() == nullptr) {
    const int nslots = c->kind() == CommKind::kSend ? SendComm::kRequests : RecvComm::kRequests;
    if (transport::Status s = make_staging(device, nslots, &c->gpu_owner()); !s.ok()) return s;
    static bool logged = false;
    if (!logged) {
      logged = true;
      SQ_INFO(
          kSubsysNet,
          "GPU staging: first GPU region (%zu bytes on device %d) mirrored in pinned host memory",
          mr->size, device);
    }
  }
  auto m = std::make_unique<GpuMirror>();
  m->device = device;
  {
    // At least a few bytes, so a staged address is never null, even in an empty region.
    gpu::DeviceGuard dev(device);
    void* p = nullptr;
    SQ_CUDA_TRY(cudaHostAlloc(&p, mr->size > 64 ? mr->size : 64, cudaHostAllocPortable));
    m->host = static_cast<uint8_t*>(p);
    m->size = mr->size;
  }
  mr->mirror = std::move(m);
  return transport::Status::Ok();
}

namespace {

template <typename Comm, typename Request>
void quiesce(Comm* c, Request* begin, Request* end) {
  if (c->gpu() == nullptr) return;
  GpuStaging::Impl& g = c->gpu()->impl();
  gpu::DeviceGuard dev(g.device);
  (void)cudaStreamSynchronize(g.stream.get());
  (void)cudaGetLastError();
  for (Request* r = begin; r != end; ++r) {
    if (!r->gpu || r->job.load() != JobState::kRunning) continue;
    GpuSlot& s = g.slots[r - begin];
    if (s.frame_dev != nullptr) (void)cudaFreeAsync(s.frame_dev, g.stream.get());
    s.frame_dev = nullptr;
    s.stage = GpuStage::kIdle;
    r->job.finish(JobState::kFailed, "closed with GPU work in flight");
  }
  (void)cudaStreamSynchronize(g.stream.get());
  (void)cudaGetLastError();
}

}  // namespace

void gpu_quiesce(SendComm* c, SendRequest* begin, SendRequest* end) { quiesce(c, begin, end); }
void gpu_quiesce(RecvComm* c, RecvRequest* begin, RecvRequest* end) { quiesce(c, begin, end); }

#else  // !SQUEEZE_HAVE_CUDA

namespace {
transport::Status not_built() {
  return transport::Status::Internal("GPU staging not built: this plugin was built without CUDA");
}
}  // namespace

bool decide_gpu_staging(bool requested, std::string* why) {
  if (!requested) {
    *why = kOffWhy;
    return false;
  }
  *why = "off: GPU staging not built (this plugin was built without CUDA)";
  return false;
}

GpuMirror::~GpuMirror() = default;
struct GpuStaging::Impl {};
GpuStaging::GpuStaging(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuStaging::~GpuStaging() = default;

transport::Status gpu_stage_region(CommBase*, MemRegion*) { return not_built(); }
transport::Status gpu_send_start(SendComm*, SendRequest*) { return not_built(); }
transport::Status gpu_send_poll(SendComm*, SendRequest*, bool* ready, GpuSendReady*) {
  *ready = false;
  return not_built();
}
transport::Status gpu_recv_start(RecvComm*, RecvRequest*) { return not_built(); }
transport::Status gpu_recv_poll(RecvComm*, RecvRequest*) { return not_built(); }
void gpu_quiesce(SendComm*, SendRequest*, SendRequest*) {}
void gpu_quiesce(RecvComm*, RecvRequest*, RecvRequest*) {}

#endif  // SQUEEZE_HAVE_CUDA

transport::Status gpu_stage_address(const MemRegion& mr, const void* data, std::size_t size,
                                    uint8_t** stage) {
  *stage = nullptr;
  const auto base = reinterpret_cast<uintptr_t>(mr.data);
  const auto p = reinterpret_cast<uintptr_t>(data);
  if (mr.mirror == nullptr || p < base || p - base > mr.size || size > mr.size - (p - base)) {
    char where[64];
    snprintf(where, sizeof where, "[%p, +%zu)", data, size);
    return transport::Status::Usage(
        std::string("GPU staging: buffer ") + where +
        " is not inside the GPU region registered with its memory handle (" +
        std::to_string(mr.size) + " bytes)");
  }
  *stage = mr.mirror->host + (p - base);
  return transport::Status::Ok();
}

}  // namespace squeeze::plugin
