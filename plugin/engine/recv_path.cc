// irecv and the receiving half of test(). Raw messages land in NCCL's buffer directly; a
// frame lands in the transport's staging and is decoded into NCCL's buffer (inline when
// small, else on a worker) before test() reports done. A frame that fails to decode is an
// error from test(), never silent garbage. GPU destinations on a staged device land in the
// pinned mirror and go through gpu_recv.cc (H2D copy, or GPU decode).
#include <algorithm>
#include <array>
#include <string>

#include "plugin/engine/codec_jobs.h"
#include "plugin/engine/describe.h"
#include "plugin/engine/gpu_staging.h"
#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/engine/worker_pool.h"
#include "plugin/log.h"

namespace squeeze::plugin {

namespace {
// Takes one of c's free requests (the caller checked there is one) for a posted transport slot.
Request& claim_request(RecvComm* c, int slot, int n, bool flush) {
  const int idx = c->free.back();
  c->free.pop_back();
  Request& r = c->requests[idx];
  r.comm = c;
  r.slot = slot;
  r.n = n;
  r.flush = flush;
  r.arrived = false;
  r.job.store(JobState::kIdle, std::memory_order_relaxed);
  return r;
}
}  // namespace

nccl_result_t Net::irecv(void* recv_comm, int n, void** data, const std::size_t* sizes, const int* tags,
                         void** mhandles, void** phandles, void** request) {
  *request = nullptr;
  auto* c = static_cast<RecvComm*>(recv_comm);
  if (c == nullptr || c->kind != CommKind::kRecv) {
    SQ_WARN("irecv: not a Squeeze receive comm");
    return kNcclInvalidArgument;
  }
  if (n < 1 || n > transport::kMaxRecvs) {
    SQ_WARN("irecv: n=%d outside [1, %d]", n, transport::kMaxRecvs);
    return kNcclInvalidArgument;
  }
  if (c->free.empty()) return kNcclSuccess;
  std::array<transport::RecvItem, transport::kMaxRecvs> items;
  std::array<uint8_t*, transport::kMaxRecvs> stage{};  // GPU staging: where item i lands in its mirror
  std::array<int, transport::kMaxRecvs> types{};       // NCCL_PTR_* of each destination
  for (int i = 0; i < n; ++i) {
    const auto* mr = mhandles != nullptr ? static_cast<const MemRegion*>(mhandles[i]) : nullptr;
    if (mr != nullptr && mr->mirror != nullptr) SQ_CHECK_STATUS(gpu_stage_address(*mr, data[i], sizes[i], &stage[i]));
    types[i] = mr != nullptr ? mr->type : nccl::kPtrHost;
    items[i] = {tags[i], stage[i] != nullptr ? stage[i] : data[i], sizes[i], mr != nullptr ? mr->reg.get() : nullptr};
  }
  int slot = -1;
  SQ_CHECK_STATUS(c->t->post({items.data(), static_cast<std::size_t>(n)}, &slot));
  if (slot < 0) return kNcclSuccess;
  Request& r = claim_request(c, slot, n, false);
  c->posted.push_back(&r);
  r.op = c->ctx->op;
  r.algo = c->ctx->algo;
  r.proto = c->ctx->proto;
  r.gpu = false;
  r.host_stage = stage;
  for (int i = 0; i < n; ++i) {
    r.gpu |= stage[i] != nullptr;
    r.dst[i] = data[i];
    r.cap[i] = sizes[i];
  }
  r.dst_type = types;
  resolve_comm_name(*c);
  policy::MessageMeta m = describe_message(*c, r, mhandles ? static_cast<const MemRegion*>(mhandles[0]) : nullptr,
                                           sizes[0], phandles ? phandles[0] : nullptr, false);
  r.collective = m.collective;
  *request = &r;
  return kNcclSuccess;
}

// Once a receive's bytes are in, starts decoding its frames (inline when small). Returns the
// request's job state; kIdle means its bytes are not all in yet.
static transport::Status start_decode(RecvComm* c, Request* r, JobState* state) {
  JobState js = r->job.load(std::memory_order_acquire);
  if (js == JobState::kRunning && r->gpu) {  // GPU staging: copies and decodes in flight
    if (transport::Status s = gpu_recv_poll(c, r); !s.ok()) return s;
    js = r->job.load(std::memory_order_acquire);
  }
  if (js != JobState::kIdle || r->arrived) {
    *state = js;
    return transport::Status::Ok();
  }
  bool finished = false;
  if (transport::Status s = c->t->test(r->slot, &finished, r->got); !s.ok()) return s;
  *state = JobState::kIdle;
  if (!finished) return transport::Status::Ok();
  r->arrived = true;
  if (r->gpu) {
    if (transport::Status s = gpu_recv_start(c, r); !s.ok()) return s;
    *state = r->job.load(std::memory_order_acquire);
    return transport::Status::Ok();
  }
  uint64_t frame_bytes = 0;
  bool frames = false;
  for (int i = 0; i < r->n; ++i) {
    if (r->got[i].header.kind == transport::PayloadKind::kFrame) {
      if (r->dst_type[i] != nccl::kPtrHost) {
        // The sender compressed, but this receive lands in GPU memory, which the CPU decoder
        // cannot write: fail loudly rather than leave NCCL's buffer unwritten.
        r->job_error = "frame of " + std::to_string(r->got[i].header.original_bytes) + " bytes (tag " +
                       std::to_string(r->got[i].header.tag) +
                       ") arrived for a GPU-memory receive; compression needs host buffers on both sides";
        r->job.store(JobState::kFailed, std::memory_order_relaxed);
        *state = JobState::kFailed;
        return transport::Status::Ok();
      }
      frames = true;
      frame_bytes += r->got[i].header.original_bytes;
    }
  }
  if (!frames) {
    r->job.store(JobState::kDone, std::memory_order_relaxed);
  } else {
    r->job.store(JobState::kRunning, std::memory_order_relaxed);
    if (frame_bytes <= kInlineCodecBytes)
      run_decode_job(r);
    else
      WorkerPool::shared().submit(run_decode_job, r);
  }
  *state = r->job.load(std::memory_order_acquire);
  return transport::Status::Ok();
}

nccl_result_t Net::test_recv(RecvComm* c, Request* r, int* done, int* sizes) {
  // Receives complete in posting order: start the decodes of every one whose bytes are in,
  // so decoding overlaps the transfers behind it instead of waiting for NCCL to test it.
  for (Request* q : c->posted) {
    JobState st;
    SQ_CHECK_STATUS(start_decode(c, q, &st));
    if (st == JobState::kIdle) break;
  }
  JobState js = r->job.load(std::memory_order_acquire);
  if (js == JobState::kRunning && WorkerPool::shared().try_run_one()) js = r->job.load(std::memory_order_acquire);
  if (js == JobState::kIdle || js == JobState::kRunning) return kNcclSuccess;
  nccl_result_t rc = kNcclSuccess;
  if (js == JobState::kFailed) {
    SQ_WARN("corrupt or undecodable frame: %s", r->job_error.c_str());
    rc = kNcclRemoteError;
  } else {
    if (sizes != nullptr)
      for (int i = 0; i < r->n; ++i) sizes[i] = clamp_int(r->got[i].header.original_bytes);
    if (!r->gpu && pays_ != nullptr)  // what the codec threads decode when the peers compress
      for (int i = 0; i < r->n; ++i) pays_->record_received(r->got[i].header.original_bytes);
  }
  c->t->release(r->slot);
  r->comm = nullptr;
  r->arrived = false;
  r->job.store(JobState::kIdle, std::memory_order_relaxed);
  for (auto it = c->posted.begin(); it != c->posted.end(); ++it) {
    if (*it == r) {
      c->posted.erase(it);
      break;
    }
  }
  c->free.push_back(static_cast<int>(r - c->requests.data()));
  if (rc == kNcclSuccess) *done = 1;
  return rc;
}

nccl_result_t Net::test(void* request, int* done, int* sizes) {
  *done = 0;
  auto* r = static_cast<Request*>(request);
  if (r == nullptr || r->comm == nullptr) {
    SQ_WARN("test: invalid request %p", request);
    return kNcclInvalidArgument;
  }
  if (r->comm->kind == CommKind::kSend) return test_send(static_cast<SendComm*>(r->comm), r, done, sizes);
  if (r->flush) return test_flush(static_cast<RecvComm*>(r->comm), r, done);
  return test_recv(static_cast<RecvComm*>(r->comm), r, done, sizes);
}

// iflush: host memory never needs one; GPU memory written by the NIC (verbs with GPUDirect
// RDMA) does when the transport says so. The flush rides on a request of its own.
nccl_result_t Net::iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request) {
  *request = nullptr;
  auto* c = static_cast<RecvComm*>(recv_comm);
  if (c == nullptr || c->kind != CommKind::kRecv) {
    SQ_WARN("iflush: not a Squeeze receive comm");
    return kNcclInvalidArgument;
  }
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
  if (!device || c->free.empty()) return kNcclSuccess;  // nothing to flush, or NCCL retries later
  int slot = transport::RecvComm::kNothingToFlush;
  SQ_CHECK_STATUS(c->t->flush({items.data(), static_cast<std::size_t>(n)}, &slot));
  if (slot == transport::RecvComm::kNothingToFlush || slot < 0) return kNcclSuccess;
  *request = &claim_request(c, slot, n, true);
  return kNcclSuccess;
}

nccl_result_t Net::test_flush(RecvComm* c, Request* r, int* done) {
  bool finished = false;
  transport::Status s = c->t->test_flush(r->slot, &finished);
  if (s.ok() && !finished) return kNcclSuccess;
  r->comm = nullptr;
  r->flush = false;
  c->free.push_back(static_cast<int>(r - c->requests.data()));
  if (!s.ok()) return to_nccl(s, __FILE__, __LINE__);
  *done = 1;
  return kNcclSuccess;
}

}  // namespace squeeze::plugin
