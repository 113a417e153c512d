#include "plugin/collnet/coll_comm.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "plugin/collnet/call_jobs.h"
#include "plugin/collnet/nccl_types.h"
#include "plugin/engine/codec_jobs.h"
#include "plugin/engine/result.h"
#include "plugin/log.h"
#include "plugin/policy/names.h"
#include "plugin/profiler/comm_registry.h"

namespace squeeze::collnet {

namespace {

using policy::CollNetHop;

nccl_result_t code_of(const transport::Status& s) {
  switch (s.code()) {
    case transport::Status::Code::kSystem: return kNcclSystemError;
    case transport::Status::Code::kRemote: return kNcclRemoteError;
    case transport::Status::Code::kInvalidUsage: return kNcclInvalidUsage;
    default: return kNcclInternalError;
  }
}
using policy::Collective;
using policy::Route;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int32_t tag_of(uint64_t seq) { return static_cast<int32_t>(seq & 0x7fffffffu); }

const char* hop_label(int hop) { return hop == 0 ? "contributions" : "results"; }

// Runs a job inline when it is small (handing it to a worker would cost more
// than the codec), else on the engine's workers.
void run_job(const plugin::Engine& e, plugin::WorkerPool::Fn fn, void* arg, std::size_t bytes) {
  if (bytes <= plugin::kInlineCodecBytes)
    fn(arg);
  else
    e.workers().submit(fn, arg);
}

}  // namespace

bool CollRegion::contains(const void* p, std::size_t bytes) const {
  const auto* b = static_cast<const uint8_t*>(data);
  const auto* q = static_cast<const uint8_t*>(p);
  return q >= b && bytes <= size && static_cast<std::size_t>(q - b) <= size - bytes;
}

CollComm::CollComm(const plugin::Engine& engine, int dev, int nodes, int me, uint64_t comm_hash,
                   std::vector<PeerLinks> links)
    : engine_(engine),
      dev_(dev),
      nodes_(nodes),
      me_(me),
      comm_hash_(comm_hash),
      calls_(std::make_unique<Call[]>(kMaxCalls)),
      identity_(comm_hash, nodes) {
  send_.resize(static_cast<std::size_t>(nodes * kHops));
  recv_.resize(static_cast<std::size_t>(nodes * kHops));
  for (int p = 0; p < nodes; ++p) {
    if (p == me) continue;
    for (int hop = 0; hop < kHops; ++hop) {
      PeerLinks& l = links[static_cast<std::size_t>(p)];
      const std::string what = std::string(" node ") + std::to_string(p) + ", " + hop_label(hop);
      send_[link(p, hop)] =
          std::make_unique<SendLane>(std::move(l.send[static_cast<std::size_t>(hop)]), "to" + what);
      recv_[link(p, hop)] = std::make_unique<RecvLane>(
          std::move(l.recv[static_cast<std::size_t>(hop)]), "from" + what);
    }
  }
  for (int i = 0; i < kMaxCalls; ++i) {
    calls_[static_cast<std::size_t>(i)].parts =
        std::make_unique<PeerPart[]>(static_cast<std::size_t>(nodes));
    for (int p = 0; p < nodes; ++p) {
      PeerPart& part = calls_[static_cast<std::size_t>(i)].parts[static_cast<std::size_t>(p)];
      part.call = &calls_[static_cast<std::size_t>(i)];
      part.peer = p;
    }
  }
  link_since_ = now_s();
}

CollComm::~CollComm() {
  wait_for_jobs();
  magic_ = 0;
}

void CollComm::wait_for_jobs(const Call& c) const {
  auto wait = [this](const Job& j) {
    while (j.load() == JobState::kRunning)
      if (!engine_.workers().try_run_one()) std::this_thread::yield();
  };
  wait(c.encode);
  wait(c.reduce);
  for (int p = 0; p < nodes_; ++p) wait(c.parts[static_cast<std::size_t>(p)].decode);
}

void CollComm::wait_for_jobs() const {
  for (int i = 0; i < kMaxCalls; ++i) wait_for_jobs(calls_[static_cast<std::size_t>(i)]);
}

// ---- memory
// ---------------------------------------------------------------------------------

nccl_result_t CollComm::reg_mr(const transport::MemoryDesc& mem, void** mhandle) {
  *mhandle = nullptr;
  if (mem.ptr_type != transport::kPtrHost) {
    SQ_WARN(
        "collective network regMr: memory type %d (%s) is not supported: "
        "its codecs and reductions run on "
        "the CPU over host memory (NCCL_PTR_HOST); GPU buffers need the "
        "GPU path, which is not built yet",
        mem.ptr_type, mem.ptr_type == transport::kPtrCuda ? "NCCL_PTR_CUDA" : "unknown");
    return kNcclInternalError;
  }
  auto r = std::make_unique<CollRegion>();
  r->data = mem.data;
  r->size = mem.size;
  r->type = mem.ptr_type;
  r->send_regs.resize(send_.size());
  r->recv_regs.resize(recv_.size());
  for (std::size_t i = 0; i < send_.size(); ++i) {
    if (send_[i]) SQ_CHECK_STATUS(send_[i]->comm().register_memory(mem, &r->send_regs[i]));
    if (recv_[i]) SQ_CHECK_STATUS(recv_[i]->comm().register_memory(mem, &r->recv_regs[i]));
  }
  std::lock_guard<std::mutex> lock(regions_mu_);
  *mhandle = r.get();
  regions_.push_back(std::move(r));
  return kNcclSuccess;
}

nccl_result_t CollComm::dereg_mr(void* mhandle) {
  // NCCL frees its buffer right after deregistering it, also when an error left
  // calls in flight: codec work still reading or writing it must end first.
  for (int i = 0; i < kMaxCalls; ++i) {
    const Call& c = calls_[static_cast<std::size_t>(i)];
    if (c.send_region == mhandle || c.recv_region == mhandle) wait_for_jobs(c);
  }
  std::lock_guard<std::mutex> lock(regions_mu_);
  for (auto it = regions_.begin(); it != regions_.end(); ++it) {
    if (it->get() == mhandle) {
      regions_.erase(it);
      return kNcclSuccess;
    }
  }
  SQ_WARN("collective network deregMr: unknown memory handle %p", mhandle);
  return kNcclInvalidArgument;
}

const CollRegion* CollComm::find_region(const void* mhandle) const {
  std::lock_guard<std::mutex> lock(regions_mu_);
  for (const auto& r : regions_)
    if (r.get() == mhandle) return r.get();
  return nullptr;
}

const transport::Registration* CollComm::reg_of(const CollRegion* r, int peer, int hop,
                                                bool send) const {
  if (r == nullptr) return nullptr;
  return (send ? r->send_regs : r->recv_regs)[link(peer, hop)].get();
}

// ---- planning
// -------------------------------------------------------------------------------

uint64_t CollComm::stream_message(const policy::StreamKey& key) {
  auto& slot = streams_[key];
  if (!slot) slot = std::make_unique<CollStream>();
  last_stream_ = slot.get();
  return slot->messages++;
}

bool CollComm::dedupe_open(const policy::StreamKey&) { return false; }  // rows do not apply here

bool CollComm::pays(compress::CodecId codec, uint64_t bytes) {
  plugin::PaysController* pc = engine_.pays.get();
  if (pc == nullptr) return true;
  pc->record_sent(bytes);
  std::optional<plugin::PaysController::View> sw;
  const bool compress = pc->should_compress(codec, &sw);
  if (sw)
    SQ_INFO(kSubsysNet,
            "collective network: %s %s: speedup %.2f (ratio %.2f, encode %.3f "
            "GB/s, decode %.3f GB/s x %.2f per "
            "byte sent, link %.3f GB/s)",
            compress::codec_name(codec),
            sw->compressing ? "pays, compressing" : "does not pay, sending raw", sw->speedup,
            sw->ratio, sw->encode_Bps * 1e-9, sw->decode_Bps * 1e-9, sw->decode_share,
            sw->link_Bps * 1e-9);
  return compress;
}

policy::MessageMeta CollComm::describe(const Call& c, const Piece& piece, CollNetHop hop) {
  if (!comm_info_ready_ && comm_hash_ != 0) {
    profiler::CommInfo info;
    if (profiler::lookup_comm(comm_hash_, &info)) {
      comm_nranks_ = info.nranks;
      comm_match_ = std::make_unique<policy::CommMatch>(engine_.policy->resolve_comm(info.name));
      comm_info_ready_ = true;
    }
  }
  policy::MessageMeta m;
  m.collective = Collective::kAllReduce;
  m.proto = policy::Proto::kSimple;  // CollNet runs only Simple
  m.dtype = c.dtype;
  m.algo = c.id.algo;
  m.is_send = true;
  m.bytes = piece.count * c.elem;
  m.count = c.id.known ? c.id.stream_count : c.count;
  m.coll_bytes = m.count * c.elem;
  m.nranks = comm_nranks_ > 0 ? comm_nranks_ : nodes_;
  m.comm = comm_match_.get();
  m.collnet.hop = hop;
  m.collnet.op = c.op;
  m.collnet.nodes = nodes_;
  m.collnet.stream_count = m.count;
  m.collnet.position = (c.id.known ? c.id.position : 0) + piece.begin;
  m.collnet.position_known = c.id.known;
  return m;
}

policy::Plan CollComm::plan(const Call& c, const Piece& piece, CollNetHop hop,
                            CollStream** stream) {
  last_stream_ = nullptr;
  policy::Plan p = policy::plan_message(*engine_.policy, describe(c, piece, hop),
                                        policy::Path::kCollNet, c.send != nullptr, this);
  *stream = p.compress ? last_stream_ : nullptr;
  if (p.feedback_off && !feedback_off_logged_) {
    feedback_off_logged_ = true;
    SQ_WARN(
        "collective network: rule %d asks for error feedback, which cannot be given where a "
        "piece's place in its tensor is unknown (%s): its pieces go by the rule's fallback "
        "(%s) instead of dropping values for good",
        p.rule, identity_.why_unknown().empty() ? "unknown" : identity_.why_unknown().c_str(),
        !p.compress && p.raw_cause == policy::RawCause::kNoFeedback ? "raw" : "lossless");
  }
  return p;
}

// ---- calls
// ----------------------------------------------------------------------------------

Call* CollComm::free_call() {
  for (int i = 0; i < kMaxCalls; ++i)
    if (calls_[static_cast<std::size_t>(i)].comm == nullptr)
      return &calls_[static_cast<std::size_t>(i)];
  return nullptr;
}

nccl_result_t CollComm::iallreduce(const void* send, void* recv, uint64_t count, int nccl_dtype,
                                   int nccl_op, void* send_mh, void* recv_mh, void** request) {
  *request = nullptr;
  if (!error_.empty()) {
    SQ_WARN("collective network: iallreduce after an earlier failure: %s", error_.c_str());
    return error_code_;
  }
  const policy::DataType dtype = dtype_from_nccl(nccl_dtype);
  const policy::ReduceOp op = reduce_op_from_nccl(nccl_op);
  if (!reduce_supported(nccl_dtype, nccl_op)) {
    SQ_WARN(
        "collective network iallreduce: %s on %s is not supported "
        "(reduceSupport says so)",
        nccl_op_name(nccl_op), nccl_dtype_name(nccl_dtype));
    return kNcclInvalidArgument;
  }
  const std::size_t elem = nccl_dtype_size(nccl_dtype);
  const uint64_t bytes = count * elem;
  if ((send == nullptr || recv == nullptr) && count != 0) {
    SQ_WARN("collective network iallreduce: null %s buffer for %llu elements",
            send == nullptr ? "send" : "receive", static_cast<unsigned long long>(count));
    return kNcclInvalidArgument;
  }
  const CollRegion* sr = send_mh != nullptr ? find_region(send_mh) : nullptr;
  const CollRegion* rr = recv_mh != nullptr ? find_region(recv_mh) : nullptr;
  if ((send_mh != nullptr && sr == nullptr) || (recv_mh != nullptr && rr == nullptr)) {
    SQ_WARN("collective network iallreduce: unknown memory handle %p",
            sr == nullptr ? send_mh : recv_mh);
    return kNcclInvalidArgument;
  }
  if ((sr != nullptr && !sr->contains(send, bytes)) ||
      (rr != nullptr && !rr->contains(recv, bytes))) {
    SQ_WARN(
        "collective network iallreduce: the %llu-byte %s buffer %p lies "
        "outside its registered region",
        static_cast<unsigned long long>(bytes),
        sr != nullptr && !sr->contains(send, bytes) ? "send" : "receive",
        sr != nullptr && !sr->contains(send, bytes) ? send : recv);
    return kNcclInvalidArgument;
  }
  Call* cp = free_call();
  if (cp == nullptr) return kNcclSuccess;  // NCCL retries once a call completed
  Call& c = *cp;
  c.comm = this;
  c.seq = next_seq_++;
  c.send = static_cast<const uint8_t*>(send);
  c.recv = static_cast<uint8_t*>(recv);
  c.count = count;
  c.nccl_dtype = nccl_dtype;
  c.dtype = dtype;
  c.elem = elem;
  c.op = op;
  c.send_region = sr;
  c.recv_region = rr;
  c.id = count != 0 ? identity_.next(count, dtype) : CallIdentity::Result{};
  c.encode.reset();
  c.reduce.reset();
  c.encode_started = c.encode_handled = c.reduce_started = c.reduce_handled = c.results_posted =
      false;
  c.result_stream = nullptr;
  c.result_frame_bytes = 0;
  c.result_encode_ns = 0;
  c.result_plan = policy::Plan{};

  const int32_t tag = tag_of(c.seq);
  const Piece mine = piece_of(count, nodes_, me_);
  const std::size_t mine_bytes = mine.count * elem;
  c.scratch.prepare(static_cast<std::size_t>(nodes_) * mine_bytes);
  for (int p = 0; p < nodes_; ++p) {
    PeerPart& part = c.parts[static_cast<std::size_t>(p)];
    part.piece = piece_of(count, nodes_, p);
    part.plan = policy::Plan{};
    part.stream = nullptr;
    part.frame_bytes = 0;
    part.encode_ns = 0;
    part.encode_error.clear();
    part.contribution_out = {};
    part.contribution_in = {};
    part.result_out = {};
    part.result_in = {};
    part.decode.reset();
    part.result_done = p == me_ || part.piece.count == 0;
    if (p == me_) continue;
    if (part.piece.count != 0) {
      part.plan = plan(c, part.piece, CollNetHop::kContribution, &part.stream);
      part.contribution_out.item.header.tag = tag;
      send_[link(p, 0)]->enqueue(&part.contribution_out);
      part.result_in.item = {tag, c.recv + part.piece.begin * elem, part.piece.count * elem,
                             reg_of(rr, p, 1, false)};
      recv_[link(p, 1)]->enqueue(&part.result_in);
    }
    if (mine.count != 0) {
      part.contribution_in.item = {tag, c.scratch.data() + static_cast<std::size_t>(p) * mine_bytes,
                                   mine_bytes, nullptr};
      part.contribution_in.ready = true;
      recv_[link(p, 0)]->enqueue(&part.contribution_in);
      part.result_out.item.header.tag = tag;
      send_[link(p, 1)]->enqueue(&part.result_out);
    }
  }
  if (mine.count != 0 && nodes_ > 1)
    c.result_plan = plan(c, mine, CollNetHop::kResult, &c.result_stream);
  if (nodes_ == 1 && bytes != 0 && c.recv != c.send)
    std::memmove(c.recv, c.send, bytes);  // nothing to reduce
  active_.push_back(&c);
  progress();
  *request = &c;
  return kNcclSuccess;
}

void CollComm::start_encode(Call& c) {
  std::size_t bytes = 0;
  for (int p = 0; p < nodes_; ++p) {
    PeerPart& part = c.parts[static_cast<std::size_t>(p)];
    if (part.stream != nullptr) part.stream->busy = true;
    if (part.plan.compress) bytes += part.piece.count * c.elem;
  }
  c.encode_started = true;
  if (bytes == 0) {
    c.encode.finish(JobState::kDone);
    return;
  }
  c.encode.start();
  run_job(engine_, run_encode_job, &c, bytes);
}

void CollComm::post_contributions(Call& c) {
  const plugin::Engine& e = engine_;
  for (int p = 0; p < nodes_; ++p) {
    PeerPart& part = c.parts[static_cast<std::size_t>(p)];
    if (part.stream != nullptr) part.stream->busy = false;
    if (p == me_ || part.piece.count == 0) continue;
    const std::size_t bytes = part.piece.count * c.elem;
    transport::SendItem& item = part.contribution_out.item;
    item.header.original_bytes = bytes;
    if (part.plan.compress && !part.encode_error.empty()) {
      SQ_WARN(
          "collective network: encoding piece %d of call %llu failed, "
          "sending it raw: %s",
          p, static_cast<unsigned long long>(c.seq), part.encode_error.c_str());
      part.plan.compress = false;
      part.plan.raw_cause = policy::RawCause::kFailed;
    }
    if (part.plan.compress) {
      item.header.kind = transport::PayloadKind::kFrame;
      item.header.payload_bytes = part.frame_bytes;
      item.data = part.frame.data();
      item.reg = nullptr;  // our staging: the transport registers it itself
                           // where it must
      if (e.stats)
        e.stats->record_encode(part.plan.stats_slot, Collective::kAllReduce, bytes,
                               part.frame_bytes, part.encode_ns, Route::kCollNet);
      if (e.pays)
        e.pays->record_encode(part.plan.params.codec, bytes, part.frame_bytes,
                              static_cast<double>(part.encode_ns) * 1e-9);
    } else {
      item.header.kind = transport::PayloadKind::kRaw;
      item.header.payload_bytes = bytes;
      item.data = c.send + part.piece.begin * c.elem;
      item.reg = reg_of(c.send_region, p, 0, true);
      if (e.stats)
        e.stats->record_raw(part.plan.stats_slot, Collective::kAllReduce, bytes,
                            part.plan.raw_cause, Route::kCollNet);
    }
    part.contribution_out.ready = true;
  }
  c.encode_handled = true;
}

void CollComm::start_reduce(Call& c) {
  const Piece mine = c.parts[static_cast<std::size_t>(me_)].piece;
  c.reduce_started = true;
  if (c.result_stream != nullptr) c.result_stream->busy = true;
  if (mine.count == 0 || nodes_ == 1) {
    c.reduce.finish(JobState::kDone);
    return;
  }
  c.reduce.start();
  run_job(engine_, run_reduce_job, &c, mine.count * c.elem * static_cast<std::size_t>(nodes_));
}

void CollComm::post_results(Call& c) {
  const plugin::Engine& e = engine_;
  if (c.result_stream != nullptr) c.result_stream->busy = false;
  const Piece mine = c.parts[static_cast<std::size_t>(me_)].piece;
  const std::size_t bytes = mine.count * c.elem;
  c.reduce_handled = true;
  if (mine.count == 0 || nodes_ == 1) return;
  if (c.result_plan.raw_cause == policy::RawCause::kFailed && !c.result_plan.compress)
    SQ_WARN(
        "collective network: encoding the result of call %llu failed, "
        "sending it raw",
        static_cast<unsigned long long>(c.seq));
  for (int p = 0; p < nodes_; ++p) {
    if (p == me_) continue;
    PeerPart& part = c.parts[static_cast<std::size_t>(p)];
    transport::SendItem& item = part.result_out.item;
    item.header.original_bytes = bytes;
    const bool first = p == (me_ == 0 ? 1 : 0);
    if (c.result_plan.compress) {
      item.header.kind = transport::PayloadKind::kFrame;
      item.header.payload_bytes = c.result_frame_bytes;
      item.data = c.result_frame.data();
      item.reg = nullptr;
      if (e.stats)
        e.stats->record_encode(c.result_plan.stats_slot, Collective::kAllReduce, bytes,
                               c.result_frame_bytes, first ? c.result_encode_ns : 0,
                               Route::kCollNet);
      if (e.pays && first)
        e.pays->record_encode(c.result_plan.params.codec, bytes, c.result_frame_bytes,
                              static_cast<double>(c.result_encode_ns) * 1e-9);
    } else {
      // The reduced piece is in recvData (NCCL's registered memory).
      item.header.kind = transport::PayloadKind::kRaw;
      item.header.payload_bytes = bytes;
      item.data = c.recv + mine.begin * c.elem;
      item.reg = reg_of(c.recv_region, p, 1, true);
      if (e.stats)
        e.stats->record_raw(c.result_plan.stats_slot, Collective::kAllReduce, bytes,
                            c.result_plan.raw_cause, Route::kCollNet);
    }
    if (!first && e.pays) e.pays->record_sent(bytes);  // the same bytes again, to one more node
    part.result_out.ready = true;
  }
  for (int q = 0; q < nodes_; ++q)
    if (q != me_) recv_[link(q, 0)]->release(&c.parts[static_cast<std::size_t>(q)].contribution_in);
}

bool CollComm::finish_result(Call& c, PeerPart& part) {
  const std::size_t bytes = part.piece.count * c.elem;
  const transport::Received& got = part.result_in.got;
  if (got.header.kind != transport::PayloadKind::kFrame) {
    if (got.header.original_bytes != bytes || got.header.payload_bytes != bytes) {
      fail("collective network: result from node " + std::to_string(part.peer) + " (call " +
           std::to_string(c.seq) + "): raw message of " +
           std::to_string(got.header.original_bytes) + " bytes for a " + std::to_string(bytes) +
           "-byte piece");
      return false;
    }
    if (engine_.pays) engine_.pays->record_received(bytes);
    recv_[link(part.peer, 1)]->release(&part.result_in);
    part.result_done = true;
    return true;
  }
  JobState js = part.decode.load();
  if (js == JobState::kIdle) {
    part.decode.start();
    run_job(engine_, run_result_decode_job, &part, bytes);
    js = part.decode.load();
  }
  if (js == JobState::kRunning) return true;
  if (js == JobState::kFailed) {
    fail("collective network: bad message: " + part.decode.error);
    return false;
  }
  if (engine_.pays) engine_.pays->record_received(bytes);
  recv_[link(part.peer, 1)]->release(&part.result_in);
  part.result_done = true;
  return true;
}

bool CollComm::advance(Call& c, bool* encode_blocked, bool* reduce_blocked) {
  // 1. Contributions: coded in call order, one call at a time per stream.
  if (!c.encode_started) {
    bool free = !*encode_blocked;
    for (int p = 0; p < nodes_ && free; ++p) {
      const CollStream* s = c.parts[static_cast<std::size_t>(p)].stream;
      free = s == nullptr || !s->busy;
    }
    if (free)
      start_encode(c);
    else
      *encode_blocked = true;
  }
  if (c.encode_started && !c.encode_handled) {
    const JobState js = c.encode.load();
    if (js == JobState::kFailed) {
      fail("collective network: encoding call " + std::to_string(c.seq) + ": " + c.encode.error,
           kNcclInternalError);
      return false;
    }
    if (js == JobState::kDone) post_contributions(c);
  }
  // 2. The owner's step, once every version of this node's piece is in.
  if (!c.reduce_started) {
    bool ready = !*reduce_blocked && (c.result_stream == nullptr || !c.result_stream->busy);
    for (int q = 0; q < nodes_ && ready; ++q) {
      const PeerPart& part = c.parts[static_cast<std::size_t>(q)];
      ready = q == me_ || part.contribution_in.item.capacity == 0 || part.contribution_in.arrived;
    }
    if (ready)
      start_reduce(c);
    else
      *reduce_blocked = true;
  }
  if (c.reduce_started && !c.reduce_handled) {
    const JobState js = c.reduce.load();
    if (js == JobState::kFailed) {
      fail("collective network: bad message: " + c.reduce.error);
      return false;
    }
    if (js == JobState::kDone) post_results(c);
  }
  // 3. Results land in recvData, which may be the send buffer (in place): only
  // once every contribution has left.
  if (!c.results_posted && c.encode_handled) {
    bool sent = true;
    for (int p = 0; p < nodes_ && sent; ++p) {
      const PeerPart& part = c.parts[static_cast<std::size_t>(p)];
      sent = p == me_ || part.piece.count == 0 || part.contribution_out.done;
    }
    if (sent) {
      for (int p = 0; p < nodes_; ++p) c.parts[static_cast<std::size_t>(p)].result_in.ready = true;
      c.results_posted = true;
    }
  }
  for (int p = 0; p < nodes_; ++p) {
    PeerPart& part = c.parts[static_cast<std::size_t>(p)];
    if (!part.result_done && part.result_in.arrived && !finish_result(c, part)) return false;
  }
  return true;
}

bool CollComm::complete(const Call& c) const {
  if (!c.encode_handled || !c.reduce_handled) return false;
  for (int p = 0; p < nodes_; ++p) {
    const PeerPart& part = c.parts[static_cast<std::size_t>(p)];
    if (!part.result_done) return false;
    if (part.contribution_out.item.header.original_bytes != 0 && !part.contribution_out.done)
      return false;
    if (part.result_out.item.header.original_bytes != 0 && !part.result_out.done) return false;
  }
  return true;
}

void CollComm::release(Call& c) {
  for (auto it = active_.begin(); it != active_.end(); ++it) {
    if (*it == &c) {
      active_.erase(it);
      break;
    }
  }
  c.comm = nullptr;
}

bool CollComm::progress_lanes() {
  uint64_t bytes = 0;
  for (std::size_t i = 0; i < send_.size(); ++i) {
    if (send_[i]) {
      if (transport::Status s = send_[i]->progress(&bytes); !s.ok()) {
        fail(s.message(), code_of(s));
        return false;
      }
    }
    if (recv_[i]) {
      if (transport::Status s = recv_[i]->progress(); !s.ok()) {
        fail(s.message(), code_of(s));
        return false;
      }
    }
  }
  if (bytes != 0) sample_link(bytes);
  return true;
}

void CollComm::progress() {
  if (!error_.empty()) return;
  if (!progress_lanes()) return;
  bool encode_blocked = false, reduce_blocked = false;
  for (Call* c : active_)
    if (!advance(*c, &encode_blocked, &reduce_blocked)) return;
  progress_lanes();
}

// The pays controller's link speed: the transport's own measure where it has
// one (TCP), else the bytes that left over the wall time (at least
// kLinkWindowSeconds).
void CollComm::sample_link(uint64_t bytes_done) {
  plugin::PaysController* pc = engine_.pays.get();
  if (pc == nullptr) return;
  bool measured = false;
  for (auto& lane : send_) {
    transport::LinkSample ls;
    if (!lane || !lane->comm().link_rate(&ls)) continue;
    measured = true;
    if (ls.fresh) pc->record_link_rate(ls.bytes_per_s, ls.lower_bound, ls.utilization);
  }
  if (measured) return;
  link_bytes_ += bytes_done;
  const double now = now_s();
  if (link_bytes_ < plugin::kLinkSampleBytes || now - link_since_ < plugin::kLinkWindowSeconds)
    return;
  pc->record_link(link_bytes_, now - link_since_);
  link_bytes_ = 0;
  link_since_ = now;
}

void CollComm::fail(const std::string& why, nccl_result_t code) {
  if (!error_.empty()) return;
  error_ = why;
  error_code_ = code == kNcclSuccess ? kNcclRemoteError : code;
  SQ_WARN("%s", why.c_str());
}

nccl_result_t CollComm::test(Call* c, int* done, int* size) {
  *done = 0;
  progress();
  if (!error_.empty()) return error_code_;
  // Waiting for codec work: lend a hand rather than spin, with every job that is waiting (each
  // may make the next one ready). NCCL's proxy yields the CPU when a test finds nothing done;
  // on a core it shares, that would hand the rest of a time slice to another process while
  // this rank's own coding is queued.
  while (!complete(*c) && error_.empty() && engine_.workers().try_run_one()) progress();
  if (!error_.empty()) return error_code_;
  if (!complete(*c)) return kNcclSuccess;
  if (size != nullptr) *size = plugin::clamp_int(c->count * c->elem);
  release(*c);
  *done = 1;
  return kNcclSuccess;
}

}  // namespace squeeze::collnet
