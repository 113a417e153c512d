#include "plugin/engine/recv_comm.h"

#include <algorithm>
#include <string>

#include "plugin/engine/codec_jobs.h"
#include "plugin/engine/describe.h"
#include "plugin/engine/gpu/staging.h"
#include "plugin/engine/result.h"
#include "plugin/log.h"

namespace squeeze::plugin {

RecvComm::RecvComm(NetContext* ctx, const Engine* engine, int dev, bool staged,
                   std::unique_ptr<transport::RecvComm> t)
    : CommBase(CommKind::kRecv, ctx, engine, dev, staged), t_(std::move(t)) {
  for (int i = kRequests - 1; i >= 0; --i) free_.push_back(i);
}

RecvComm::~RecvComm() {
  if (gpu() != nullptr) gpu_quiesce(this, requests_.data(), requests_.data() + requests_.size());
  wait_for_jobs(engine(), requests_.data(), requests_.data() + requests_.size());
}

transport::Status RecvComm::register_memory(const transport::MemoryDesc& mem,
                                            std::unique_ptr<transport::Registration>* reg) {
  return t_->register_memory(mem, reg);
}

// Takes one of the free requests (the caller checked there is one) for a transport slot.
RecvRequest& RecvComm::claim(int slot, int n, bool flush) {
  RecvRequest& r = requests_[static_cast<std::size_t>(free_.back())];
  free_.pop_back();
  r.comm = this;
  r.slot = slot;
  r.n = n;
  r.flush = flush;
  r.arrived = false;
  r.gpu = false;
  r.host_stage = {};
  r.job.reset();
  return r;
}

void RecvComm::release(RecvRequest* r) {
  r->comm = nullptr;
  r->arrived = false;
  r->flush = false;
  r->job.reset();
  free_.push_back(index_of(r));
}

nccl_result_t RecvComm::irecv(int n, void** data, const std::size_t* sizes, const int* tags,
                              void** mhandles, void** phandles, void** request) {
  *request = nullptr;
  if (n < 1 || n > transport::kMaxRecvs) {
    SQ_WARN("irecv: n=%d outside [1, %d]", n, transport::kMaxRecvs);
    return kNcclInvalidArgument;
  }
  if (free_.empty()) return kNcclSuccess;
  std::array<transport::RecvItem, transport::kMaxRecvs> items;
  std::array<uint8_t*, transport::kMaxRecvs>
      stage{};                                    // GPU staging: where item i lands in its mirror
  std::array<int, transport::kMaxRecvs> types{};  // NCCL_PTR_* of each destination
  for (int i = 0; i < n; ++i) {
    const auto* mr = mhandles != nullptr ? static_cast<const MemRegion*>(mhandles[i]) : nullptr;
    if (mr != nullptr && mr->mirror != nullptr)
      SQ_CHECK_STATUS(gpu_stage_address(*mr, data[i], sizes[i], &stage[i]));
    types[i] = mr != nullptr ? mr->type : nccl::kPtrHost;
    items[i] = {tags[i], stage[i] != nullptr ? stage[i] : data[i], sizes[i],
                mr != nullptr ? mr->reg.get() : nullptr};
  }
  int slot = -1;
  SQ_CHECK_STATUS(t_->post({items.data(), static_cast<std::size_t>(n)}, &slot));
  if (slot < 0) return kNcclSuccess;
  RecvRequest& r = claim(slot, n, false);
  posted_.push_back(&r);
  r.host_stage = stage;
  r.dst_type = types;
  for (int i = 0; i < n; ++i) {
    r.gpu |= stage[i] != nullptr;
    r.dst[i] = data[i];
    r.cap[i] = sizes[i];
  }
  const policy::MessageMeta m = describe_message(
      *this, mhandles != nullptr ? static_cast<const MemRegion*>(mhandles[0]) : nullptr, sizes[0],
      phandles != nullptr ? phandles[0] : nullptr, false);
  r.collective = m.collective;
  *request = static_cast<RequestBase*>(&r);
  return kNcclSuccess;
}

transport::Status RecvComm::start_decode(RecvRequest* r, JobState* state) {
  JobState js = r->job.load();
  if (js == JobState::kRunning && r->gpu) {  // GPU staging: copies and decodes in flight
    if (transport::Status s = gpu_recv_poll(this, r); !s.ok()) return s;
    js = r->job.load();
  }
  if (js != JobState::kIdle || r->arrived) {
    *state = js;
    return transport::Status::Ok();
  }
  bool finished = false;
  if (transport::Status s = t_->test(r->slot, &finished, r->got); !s.ok()) return s;
  *state = JobState::kIdle;
  if (!finished) return transport::Status::Ok();
  r->arrived = true;
  if (r->gpu) {
    if (transport::Status s = gpu_recv_start(this, r); !s.ok()) return s;
    *state = r->job.load();
    return transport::Status::Ok();
  }
  uint64_t frame_bytes = 0;
  bool frames = false;
  for (int i = 0; i < r->n; ++i) {
    if (r->got[i].header.kind != transport::PayloadKind::kFrame) continue;
    if (r->dst_type[i] != nccl::kPtrHost) {
      // The sender compressed, but this receive lands in GPU memory, which the CPU decoder
      // cannot write: fail loudly rather than leave NCCL's buffer unwritten.
      r->job.finish(JobState::kFailed,
                    "frame of " + std::to_string(r->got[i].header.original_bytes) + " bytes (tag " +
                        std::to_string(r->got[i].header.tag) +
                        ") arrived for a GPU-memory receive; compression needs host buffers "
                        "on both sides");
      *state = JobState::kFailed;
      return transport::Status::Ok();
    }
    frames = true;
    frame_bytes += r->got[i].header.original_bytes;
  }
  if (!frames) {
    r->job.finish(JobState::kDone);
  } else {
    r->job.start();
    if (frame_bytes <= kInlineCodecBytes)
      run_decode_job(r);
    else
      engine().workers().submit(run_decode_job, r);
  }
  *state = r->job.load();
  return transport::Status::Ok();
}

nccl_result_t RecvComm::test(RecvRequest* r, int* done, int* sizes) {
  return r->flush ? test_flush(r, done) : test_recv(r, done, sizes);
}

nccl_result_t RecvComm::test_recv(RecvRequest* r, int* done, int* sizes) {
  // Receives complete in posting order: start the decodes of every one whose bytes are in,
  // so decoding overlaps the transfers behind it instead of waiting for NCCL to test it.
  for (RecvRequest* q : posted_) {
    JobState st;
    SQ_CHECK_STATUS(start_decode(q, &st));
    if (st == JobState::kIdle) break;
  }
  JobState js = r->job.load();
  if (js == JobState::kRunning && engine().workers().try_run_one()) js = r->job.load();
  if (js == JobState::kIdle || js == JobState::kRunning) return kNcclSuccess;
  nccl_result_t rc = kNcclSuccess;
  if (js == JobState::kFailed) {
    SQ_WARN("corrupt or undecodable frame: %s", r->job.error.c_str());
    rc = kNcclRemoteError;
  } else {
    if (sizes != nullptr)
      for (int i = 0; i < r->n; ++i) sizes[i] = clamp_int(r->got[i].header.original_bytes);
    if (!r->gpu && engine().pays)  // what the codec threads decode when the peers compress
      for (int i = 0; i < r->n; ++i)
        engine().pays->record_received(r->got[i].header.original_bytes);
  }
  t_->release(r->slot);
  posted_.erase(std::find(posted_.begin(), posted_.end(), r));
  release(r);
  if (rc == kNcclSuccess) *done = 1;
  return rc;
}

// iflush: host memory never needs one; GPU memory written by the NIC (verbs with GPUDirect
// RDMA) does when the transport says so. The flush rides on a request of its own.
nccl_result_t RecvComm::iflush(int n, void** data, const int* sizes, void** mhandles,
                               void** request) {
  *request = nullptr;
  if (n < 1 || n > transport::kMaxRecvs) return kNcclInvalidArgument;
  std::array<transport::RecvItem, transport::kMaxRecvs> items;
  bool device = false;
  for (int i = 0; i < n; ++i) {
    const auto* mr = mhandles != nullptr ? static_cast<const MemRegion*>(mhandles[i]) : nullptr;
    // Staged GPU memory needs none: test() said done only after the copy into it completed.
    device |= mr != nullptr && mr->type != nccl::kPtrHost && mr->mirror == nullptr;
    items[i] = {0, data[i], sizes != nullptr ? static_cast<std::size_t>(std::max(sizes[i], 0)) : 0,
                mr != nullptr ? mr->reg.get() : nullptr};
  }
  if (!device || free_.empty()) return kNcclSuccess;  // nothing to flush, or NCCL retries later
  int slot = transport::RecvComm::kNothingToFlush;
  SQ_CHECK_STATUS(t_->flush({items.data(), static_cast<std::size_t>(n)}, &slot));
  if (slot == transport::RecvComm::kNothingToFlush || slot < 0) return kNcclSuccess;
  *request = static_cast<RequestBase*>(&claim(slot, n, true));
  return kNcclSuccess;
}

nccl_result_t RecvComm::test_flush(RecvRequest* r, int* done) {
  bool finished = false;
  const transport::Status s = t_->test_flush(r->slot, &finished);
  if (s.ok() && !finished) return kNcclSuccess;
  release(r);
  if (!s.ok()) return to_nccl(s, __FILE__, __LINE__);
  *done = 1;
  return kNcclSuccess;
}

}  // namespace squeeze::plugin
