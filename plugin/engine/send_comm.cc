#include "plugin/engine/send_comm.h"

#include <cstdio>
#include <optional>

#include "compress/codec.h"
#include "plugin/engine/codec_jobs.h"
#include "plugin/engine/describe.h"
#include "plugin/engine/gpu/staging.h"
#include "plugin/engine/result.h"
#include "plugin/log.h"

namespace squeeze::plugin {

namespace {
using Clock = std::chrono::steady_clock;

// The frame header the transport sends in front of every payload (TCP's wire header; the
// other transports' are no larger), counted in the link measurement.
constexpr uint64_t kWireHeaderBytes = 32;
}  // namespace

SendComm::SendComm(NetContext* ctx, const Engine* engine, int dev, bool staged,
                   std::unique_ptr<transport::SendComm> t)
    : CommBase(CommKind::kSend, ctx, engine, dev, staged), t_(std::move(t)) {
  for (int i = kRequests - 1; i >= 0; --i) free_.push_back(i);
}

SendComm::~SendComm() {
  if (gpu() != nullptr) gpu_quiesce(this, requests_.data(), requests_.data() + requests_.size());
  wait_for_jobs(engine(), requests_.data(), requests_.data() + requests_.size());
}

transport::Status SendComm::register_memory(const transport::MemoryDesc& mem,
                                            std::unique_ptr<transport::Registration>* reg) {
  return t_->register_memory(mem, reg);
}

StreamState* SendComm::stream(const policy::StreamKey& key) {
  auto& slot = streams_[key];
  if (!slot) slot = std::make_unique<StreamState>();
  return slot.get();
}

uint64_t SendComm::stream_message(const policy::StreamKey& key) {
  planned_stream_ = stream(key);
  return planned_stream_->messages++;
}

bool SendComm::dedupe_open(const policy::StreamKey& key) { return stream(key)->dedupe.open(); }

bool SendComm::pays(compress::CodecId codec, uint64_t bytes) {
  PaysController* pc = engine().pays.get();
  if (pc == nullptr) return true;
  pc->record_sent(bytes);
  std::optional<PaysController::View> sw;
  const bool compress = pc->should_compress(codec, &sw);
  if (sw) {
    char busy[48] = "";
    if (sw->utilization >= 0)
      std::snprintf(busy, sizeof busy, ", busy %.0f%% of the time raw", 100 * sw->utilization);
    SQ_INFO(kSubsysNet,
            "%s %s: speedup %.2f (ratio %.2f, encode %.3f GB/s, decode %.3f GB/s x %.2f per byte "
            "sent, link %.3f GB/s%s)",
            compress::codec_name(codec),
            sw->compressing ? "pays, compressing" : "does not pay, sending raw", sw->speedup,
            sw->ratio, sw->encode_Bps * 1e-9, sw->decode_Bps * 1e-9, sw->decode_share,
            sw->link_Bps * 1e-9, busy);
  }
  return compress;
}

nccl_result_t SendComm::isend(void* data, std::size_t size, int tag, void* mhandle, void* phandle,
                              void** request) {
  *request = nullptr;
  if (free_.empty()) return kNcclSuccess;  // NCCL retries later (only test() frees requests)
  SendRequest& r = requests_[static_cast<std::size_t>(free_.back())];
  const auto* mr = static_cast<const MemRegion*>(mhandle);
  r.data = data;
  r.size = size;
  r.tag = tag;
  r.reg = mr != nullptr ? mr->reg.get() : nullptr;
  r.slot = -1;
  r.posted = false;
  r.stream = nullptr;
  r.job.reset();
  r.gpu = mr != nullptr && mr->mirror != nullptr;  // GPU memory staged through the host
  r.host_stage = nullptr;
  if (r.gpu) SQ_CHECK_STATUS(gpu_stage_address(*mr, data, size, &r.host_stage));
  const policy::MessageMeta m = describe_message(*this, mr, size, phandle, true);
  // GPU memory that nothing stages (GPUDirect RDMA): the CPU codecs cannot read it.
  const policy::Path path = r.gpu                                         ? policy::Path::kGpuStaged
                            : mr != nullptr && mr->type != nccl::kPtrHost ? policy::Path::kDevice
                                                                          : policy::Path::kHost;
  planned_stream_ = nullptr;
  r.plan = policy::plan_message(*engine().policy, m, path, data != nullptr, this);
  if (r.plan.compress) {
    r.stream = planned_stream_;
  } else if (engine().stats) {
    engine().stats->record_raw(r.plan.stats_slot, m.collective, size, r.plan.raw_cause);
  }
  SQ_TRACE("isend %zu B tag %d coll %d proto %d dtype %d -> %s", size, tag,
           static_cast<int>(m.collective), static_cast<int>(m.proto), static_cast<int>(m.dtype),
           r.plan.compress ? compress::codec_name(r.plan.params.codec) : "raw");
  r.comm = this;
  free_.pop_back();
  queue_.push_back(&r);
  progress();
  *request = static_cast<RequestBase*>(&r);
  return kNcclSuccess;
}

void SendComm::progress() {
  start_encodes();
  if (error_.ok()) post_ready();
}

void SendComm::start_encodes() {
  for (SendRequest* r : queue_) {
    if (r->job.load() != JobState::kIdle) continue;
    if (r->gpu) {  // GPU staging: copies and encodes queue on the comm's stream at once
      if (transport::Status s = gpu_send_start(this, r); !s.ok()) {
        error_ = s;
        return;
      }
      continue;
    }
    if (!r->plan.compress) continue;
    // A stateful codec's stream encodes one message at a time; the others all start at once.
    const bool stateful =
        compress::codec_traits(r->plan.params.codec).stateful && r->stream != nullptr;
    if (stateful && r->stream->busy) continue;
    if (stateful) r->stream->busy = true;
    r->job.start();
    if (r->size <= kInlineCodecBytes)
      run_encode_job(r);
    else
      engine().workers().submit(run_encode_job, r);
  }
}

void SendComm::post_ready() {
  const Engine& e = engine();
  while (!queue_.empty()) {
    SendRequest* r = queue_.front();
    transport::SendItem item;
    item.header.tag = r->tag;
    item.header.original_bytes = r->size;
    item.header.payload_bytes = r->size;
    item.header.kind = transport::PayloadKind::kRaw;
    item.data = r->data;
    item.reg = r->reg;
    if (r->gpu) {
      bool ready = false;
      GpuSendReady g;
      if (transport::Status s = gpu_send_poll(this, r, &ready, &g); !s.ok()) {
        error_ = s;
        break;
      }
      if (!ready) break;
      item.data = r->host_stage;  // the mirror; r->reg registers it
      item.header.payload_bytes = g.payload_bytes;
      if (g.frame) item.header.kind = transport::PayloadKind::kFrame;  // also in the mirror
    } else if (r->plan.compress) {
      const JobState js = r->job.load();
      if (js == JobState::kRunning || js == JobState::kIdle) break;
      if (r->stream != nullptr) r->stream->busy = false;
      if (js == JobState::kFailed) {
        SQ_WARN("encode failed, sending %zu bytes raw instead: %s", r->size, r->job.error.c_str());
        if (e.stats)
          e.stats->record_raw(r->plan.stats_slot, r->plan.collective, r->size,
                              policy::RawCause::kFailed);
        r->plan.compress = false;
      } else {
        item.header.kind = transport::PayloadKind::kFrame;
        item.header.payload_bytes = r->frame_bytes;
        item.data = r->frame.data();
        if (transport::Status s = register_frame(r); !s.ok()) {
          error_ = s;
          break;
        }
        item.reg = r->frame_reg.get();
        if (e.stats)
          e.stats->record_encode(r->plan.stats_slot, r->plan.collective, r->size, r->frame_bytes,
                                 r->encode_ns);
        if (e.pays)
          e.pays->record_encode(r->plan.params.codec, r->size, r->frame_bytes,
                                static_cast<double>(r->encode_ns) * 1e-9);
      }
    }
    int slot = -1;
    if (transport::Status s = t_->post(item, &slot); !s.ok()) {
      error_ = s;  // reported by the next test() on any request of this comm
      break;
    }
    if (slot < 0) break;
    r->slot = slot;
    r->posted = true;
    r->wire_bytes = item.header.payload_bytes + kWireHeaderBytes;
    if (inflight_++ == 0 && busy_bytes_ == 0) busy_since_ = Clock::now();
    queue_.pop_front();
  }
}

// Registers the request's staging frame with the transport when it is new, has moved or has
// grown; the old registration goes first.
transport::Status SendComm::register_frame(SendRequest* r) {
  if (r->frame_reg_data == r->frame.data() && r->frame_reg_size == r->frame.size())
    return transport::Status::Ok();
  r->frame_reg.reset();
  r->frame_reg_data = nullptr;
  transport::MemoryDesc mem;
  mem.data = r->frame.data();
  mem.size = r->frame.size();
  mem.ptr_type = transport::kPtrHost;
  if (transport::Status s = t_->register_memory(mem, &r->frame_reg); !s.ok()) return s;
  r->frame_reg_data = r->frame.data();
  r->frame_reg_size = r->frame.size();
  return transport::Status::Ok();
}

// Feeds the pays controller with the link's delivery rate. The transport's own measure (TCP:
// the bytes the kernel saw acknowledged over the connection's busy time) sees the link
// itself; without it, the bytes that completed over the wall time since the last sample
// (at least kLinkWindowSeconds) are a rough lower bound, which a deep socket buffer can inflate.
void SendComm::sample_link() {
  PaysController* pc = engine().pays.get();
  const auto now = Clock::now();
  transport::LinkSample ls;
  if (t_->link_rate(&ls)) {
    if (ls.fresh) {
      pc->record_link_rate(ls.bytes_per_s, ls.lower_bound, ls.utilization);
      SQ_TRACE("link sample: %.3f GB/s%s", ls.bytes_per_s * 1e-9,
               ls.lower_bound ? " (a lower bound: the ends, not the network, held it back)" : "");
    }
  } else {
    const double seconds = std::chrono::duration<double>(now - busy_since_).count();
    if (seconds < kLinkWindowSeconds) return;  // the window goes on, as TCP's does
    pc->record_link(busy_bytes_, seconds);
  }
  busy_bytes_ = 0;
  busy_since_ = now;
}

nccl_result_t SendComm::test(SendRequest* r, int* done, int* sizes) {
  progress();
  if (!error_.ok()) return to_nccl(error_, __FILE__, __LINE__);
  if (!r->posted) {
    // Waiting for an encode: lend a hand rather than spin.
    if (r->plan.compress && r->job.load() == JobState::kRunning && engine().workers().try_run_one())
      progress();
    return kNcclSuccess;
  }
  bool finished = false;
  SQ_CHECK_STATUS(t_->test(r->slot, &finished));
  if (!finished) return kNcclSuccess;
  t_->release(r->slot);
  busy_bytes_ += r->wire_bytes;
  --inflight_;
  if (engine().pays && busy_bytes_ >= kLinkSampleBytes) sample_link();
  if (sizes != nullptr) sizes[0] = clamp_int(r->size);
  r->comm = nullptr;
  free_.push_back(index_of(r));
  *done = 1;
  return kNcclSuccess;
}

}  // namespace squeeze::plugin
