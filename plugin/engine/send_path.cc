// isend and the sending half of test(). A message is described, the policy decides, and it
// is either posted raw (zero copy) or encoded into the request's staging frame, on a worker
// thread for large messages, inline for small ones. Messages reach the transport strictly in
// isend order, so the receiver's FIFO matching holds whatever the codecs' timing. GPU memory
// on a staged device goes through gpu_send.cc (copy or GPU encode into the pinned mirror).
#include <chrono>
#include <cstdio>
#include <optional>

#include "compress/codec.h"
#include "plugin/engine/codec_jobs.h"
#include "plugin/engine/describe.h"
#include "plugin/engine/gpu_staging.h"
#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/engine/worker_pool.h"
#include "plugin/log.h"

namespace squeeze::plugin {

namespace {
using Clock = std::chrono::steady_clock;

// True when message `step` of a ring all-reduce proxy op carries a partial sum (the
// reduce-scatter half). NCCL 2.28.9: ring all-reduce sends 2(n-1) chunks per loop, each chunk
// ALLREDUCE_CHUNKSTEPS=4 NCCL steps posted as isends of ALLREDUCE_SLICESTEPS=2 steps, and the
// profiler's step counts isends; the first n-1 chunks of each loop are partial sums, the last
// n-1 carry final values (all-gather).
bool ring_allreduce_partial_sum(int32_t step, int32_t nranks) {
  if (step < 0 || nranks < 2) return false;
  return (step * 2 / 4) % (2 * (nranks - 1)) < nranks - 1;
}

// Chooses raw or a codec for the request; fills req.compress and the codec fields. `gpu`:
// the data is staged GPU memory, coded on the GPU. The pays controller models the CPU codec
// pool, so it does not judge GPU codecs (far faster than any link staging serves); their
// frames go raw when they would not be smaller.
void plan(Net& net, SendComm* c, Request& r, const policy::MessageMeta& m, bool gpu) {
  r.compress = false;
  r.collective = m.collective;
  const policy::Policy* pol = net.policy();
  policy::Stats* st = net.stats();
  if (pol == nullptr) return;
  policy::Decision d = pol->decide(m);
  r.stats_slot = pol->stats_slot(d);
  const compress::CodecParams* params = d.params;
  compress::Dtype dtype = d.codec_dtype;
  double hop_budget = 1.0;
  if (d.lossy && m.collective == policy::Collective::kAllReduce) {
    // Every hop of a ring adds its error: budget the rule's bound over the n-1 lossy hops.
    if (m.nranks > 2) hop_budget = 1.0 / (m.nranks - 1);
    // Bitwise consistency: only partial sums may be lossy; final values travel exactly, so
    // every rank ends with the owner's bits. Unknown position: not lossy.
    if (d.action->consistency == policy::Consistency::kBitwise &&
        !(m.algo == policy::Algo::kRing && ring_allreduce_partial_sum(m.step, m.nranks))) {
      if (d.action->fallback == policy::Fallback::kLossless) {
        params = &d.action->fallback_params;
        dtype = compress::Dtype::kBytes;
      } else {
        params = nullptr;
      }
    }
  }
  if (params == nullptr) {
    if (st) st->record_raw(r.stats_slot, m.collective, r.size, policy::raw_cause(d.raw_reason));
    return;
  }
  // Lossless of unknown data: code it as 4-byte words when it divides, so float data gets the
  // byte-plane split (still bit-exact for any bytes).
  if (params->codec == compress::CodecId::kLossless && dtype == compress::Dtype::kBytes && r.size % 4 == 0)
    dtype = compress::Dtype::kFloat32;
  std::size_t elem = compress::dtype_size(dtype);
  if (elem == 0 || r.size % elem != 0 || r.data == nullptr || r.size == 0) {
    if (st) st->record_raw(r.stats_slot, m.collective, r.size, policy::RawCause::kDtype);
    return;
  }
  if (!gpu && net.pays() != nullptr) {
    net.pays()->record_sent(r.size);
    std::optional<PaysController::View> sw;
    const bool compress = net.pays()->should_compress(params->codec, &sw);
    if (sw) {
      char busy[48] = "";
      if (sw->utilization >= 0) std::snprintf(busy, sizeof busy, ", busy %.0f%% of the time raw", 100 * sw->utilization);
      SQ_INFO(kSubsysNet, "%s %s: speedup %.2f (ratio %.2f, encode %.3f GB/s, decode %.3f GB/s x %.2f per byte sent, link %.3f GB/s%s)",
              compress::codec_name(params->codec), sw->compressing ? "pays, compressing" : "does not pay, sending raw",
              sw->speedup, sw->ratio, sw->encode_Bps * 1e-9, sw->decode_Bps * 1e-9, sw->decode_share, sw->link_Bps * 1e-9,
              busy);
    }
    if (!compress) {
      if (st) st->record_raw(r.stats_slot, m.collective, r.size, policy::RawCause::kNotWorthIt);
      return;
    }
  }
  r.compress = true;
  r.params = *params;
  r.dtype = dtype;
  r.count = r.size / elem;
  auto& slot = c->streams[{d.rule, r.count}];
  if (!slot) slot = std::make_unique<StreamState>();
  r.stream = slot.get();
  double mult = d.eb_multiplier * hop_budget * policy::schedule_multiplier(d.action->schedule, r.stream->messages++);
  r.params.quantize.error_bound *= mult;
  if (r.params.codec == compress::CodecId::kQuantize && r.params.quantize.dedupe_rows && !gpu)
    r.params.quantize.dedupe_rows = r.stream->dedupe.open();
}

// Registers the request's staging frame with the transport when it is new, has moved or has
// grown; the old registration goes first.
transport::Status register_frame(SendComm* c, Request* r) {
  if (r->frame_reg_data == r->frame.data() && r->frame_reg_size == r->frame.size()) return transport::Status::Ok();
  r->frame_reg.reset();
  r->frame_reg_data = nullptr;
  transport::MemoryDesc mem;
  mem.data = r->frame.data();
  mem.size = r->frame.size();
  mem.ptr_type = transport::kPtrHost;
  transport::Status s = c->t->register_memory(mem, &r->frame_reg);
  if (!s.ok()) return s;
  r->frame_reg_data = r->frame.data();
  r->frame_reg_size = r->frame.size();
  return s;
}

}  // namespace

nccl_result_t Net::isend(void* send_comm, void* data, std::size_t size, int tag, void* mhandle, void* phandle,
                         void** request) {
  *request = nullptr;
  auto* c = static_cast<SendComm*>(send_comm);
  if (c == nullptr || c->kind != CommKind::kSend) {
    SQ_WARN("isend: not a Squeeze send comm");
    return kNcclInvalidArgument;
  }
  if (c->free.empty()) return kNcclSuccess;  // NCCL retries later (only test() frees requests)
  int idx = c->free.back();
  Request& r = c->requests[idx];
  r.comm = c;
  r.slot = -1;
  r.n = 1;
  r.data = data;
  r.size = size;
  r.tag = tag;
  r.posted = false;
  r.stream = nullptr;
  r.stats_slot = -1;
  r.job.store(JobState::kIdle, std::memory_order_relaxed);
  r.op = c->ctx->op;
  r.algo = c->ctx->algo;
  r.proto = c->ctx->proto;
  resolve_comm_name(*c);
  const auto* mr = static_cast<const MemRegion*>(mhandle);
  r.reg = mr != nullptr ? mr->reg.get() : nullptr;
  r.gpu = mr != nullptr && mr->mirror != nullptr;  // GPU memory staged through the host
  r.host_stage[0] = nullptr;
  if (r.gpu) SQ_CHECK_STATUS(gpu_stage_address(*mr, data, size, &r.host_stage[0]));
  policy::MessageMeta m = describe_message(*c, r, mr, size, phandle, true);
  if (mr != nullptr && mr->type != nccl::kPtrHost && !r.gpu) {
    // GPU memory (GPUDirect RDMA): the CPU codecs cannot read it, so it travels raw.
    r.compress = false;
    r.collective = m.collective;
    if (policy_) r.stats_slot = policy_->stats_slot(policy_->decide(m));
    if (stats_) stats_->record_raw(r.stats_slot, m.collective, size, policy::RawCause::kDeviceMemory);
  } else {
    plan(*this, c, r, m, r.gpu);
  }
  SQ_TRACE("isend %zu B tag %d coll %d proto %d dtype %d -> %s", size, tag, static_cast<int>(m.collective),
           static_cast<int>(m.proto), static_cast<int>(m.dtype),
           r.compress ? compress::codec_name(r.params.codec) : "raw");
  c->free.pop_back();
  c->queue.push_back(&r);
  progress_send(c);
  *request = &r;
  return kNcclSuccess;
}

void Net::progress_send(SendComm* c) {
  // Start encodes in isend order. Threshold encodes of one stream run one at a time (they
  // share its threshold state); other codecs are stateless and all start at once.
  for (Request* r : c->queue) {
    if (r->gpu) {  // GPU staging: copies and encodes queue on the comm's stream at once
      if (r->job.load(std::memory_order_relaxed) != JobState::kIdle) continue;
      if (transport::Status s = gpu_send_start(c, r); !s.ok()) {
        c->error = s;
        return;
      }
      continue;
    }
    if (!r->compress || r->job.load(std::memory_order_acquire) != JobState::kIdle) continue;
    bool stateful = r->params.codec == compress::CodecId::kThreshold && r->stream != nullptr;
    if (stateful && r->stream->busy) continue;
    if (stateful) r->stream->busy = true;
    r->job.store(JobState::kRunning, std::memory_order_relaxed);
    if (r->size <= kInlineCodecBytes)
      run_encode_job(r);
    else
      WorkerPool::shared().submit(run_encode_job, r);
  }
  // Post to the transport in order.
  while (!c->queue.empty()) {
    Request* r = c->queue.front();
    transport::SendItem item;
    item.header.tag = r->tag;
    item.header.original_bytes = r->size;
    item.data = r->data;
    item.reg = r->reg;
    item.header.payload_bytes = r->size;
    item.header.kind = transport::PayloadKind::kRaw;
    if (r->gpu) {
      bool ready = false;
      GpuSendReady g;
      if (transport::Status s = gpu_send_poll(c, r, &ready, &g); !s.ok()) {
        c->error = s;
        break;
      }
      if (!ready) break;
      item.data = r->host_stage[0];  // the mirror; r->reg registers it
      item.header.payload_bytes = g.payload_bytes;
      if (g.frame) item.header.kind = transport::PayloadKind::kFrame;  // also in the mirror
    } else if (r->compress) {
      JobState js = r->job.load(std::memory_order_acquire);
      if (js == JobState::kRunning || js == JobState::kIdle) break;
      if (r->params.codec == compress::CodecId::kThreshold && r->stream != nullptr) r->stream->busy = false;
      if (js == JobState::kFailed) {
        SQ_WARN("encode failed, sending %zu bytes raw instead: %s", r->size, r->job_error.c_str());
        if (stats_) stats_->record_raw(r->stats_slot, r->collective, r->size, policy::RawCause::kFailed);
        r->compress = false;
      } else {
        item.header.kind = transport::PayloadKind::kFrame;
        item.header.payload_bytes = r->frame_bytes;
        item.data = r->frame.data();
        if (transport::Status s = register_frame(c, r); !s.ok()) {
          c->error = s;
          break;
        }
        item.reg = r->frame_reg.get();
        if (stats_) stats_->record_encode(r->stats_slot, r->collective, r->size, r->frame_bytes, r->encode_ns);
        if (pays_) pays_->record_encode(r->params.codec, r->size, r->frame_bytes, static_cast<double>(r->encode_ns) * 1e-9);
      }
    }
    int slot = -1;
    transport::Status s = c->t->post(item, &slot);
    if (!s.ok()) {
      c->error = s;  // reported by the next test() on any request of this comm
      break;
    }
    if (slot < 0) break;
    r->slot = slot;
    r->posted = true;
    r->wire_bytes = item.header.payload_bytes + 32;
    if (c->inflight++ == 0 && c->busy_bytes == 0) c->busy_since = Clock::now();
    c->queue.pop_front();
  }
}

// Feeds the pays controller with the link's delivery rate. The transport's own measure (TCP:
// the bytes the kernel saw acknowledged over the connection's busy time) sees the link
// itself; without it, the bytes that completed over the wall time since the last sample
// (at least kLinkWindowSeconds) are a rough lower bound, which a deep socket buffer can inflate.
void Net::sample_link(SendComm* c) {
  auto now = Clock::now();
  transport::LinkSample ls;
  if (c->t->link_rate(&ls)) {
    if (ls.fresh) {
      pays_->record_link_rate(ls.bytes_per_s, ls.lower_bound, ls.utilization);
      SQ_TRACE("link sample: %.3f GB/s%s", ls.bytes_per_s * 1e-9, ls.lower_bound ? " (a lower bound: the ends, not the network, held it back)" : "");
    }
  } else {
    const double seconds = std::chrono::duration<double>(now - c->busy_since).count();
    if (seconds < kLinkWindowSeconds) return;  // the window goes on, as TCP's does
    pays_->record_link(c->busy_bytes, seconds);
  }
  c->busy_bytes = 0;
  c->busy_since = now;
}

nccl_result_t Net::test_send(SendComm* c, Request* r, int* done, int* sizes) {
  progress_send(c);
  if (!c->error.ok()) return to_nccl(c->error, __FILE__, __LINE__);
  if (!r->posted) {
    // Waiting for an encode: lend a hand rather than spin.
    if (r->compress && r->job.load(std::memory_order_acquire) == JobState::kRunning &&
        WorkerPool::shared().try_run_one())
      progress_send(c);
    return kNcclSuccess;
  }
  bool finished = false;
  SQ_CHECK_STATUS(c->t->test(r->slot, &finished));
  if (!finished) return kNcclSuccess;
  c->t->release(r->slot);
  c->busy_bytes += r->wire_bytes;
  --c->inflight;
  if (pays_ && c->busy_bytes >= kLinkSampleBytes) sample_link(c);
  if (sizes != nullptr) sizes[0] = clamp_int(r->size);
  r->comm = nullptr;
  c->free.push_back(static_cast<int>(r - c->requests.data()));
  *done = 1;
  return kNcclSuccess;
}

}  // namespace squeeze::plugin
