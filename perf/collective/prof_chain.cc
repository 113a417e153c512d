#include "perf/collective/prof_chain.h"

#include <unistd.h>

#include <array>
#include <atomic>

#include "perf/collective/plugin_lib.h"

namespace squeeze::perf {
namespace {

// NCCL keeps the loaded profiler in a process-wide pointer; the stop and update callbacks
// reach it without a phandle. One per plugin instance (--baseline loads a second), each
// reached through its own callback.
std::array<std::atomic<nccl_profiler_v5*>, ProfChain::kInstances> g_profiler{};

constexpr uint64_t kNetPluginImplies = kProfileColl | kProfileP2p | kProfileProxyOp |
                                       kProfileProxyStep | kProfileCollApi | kProfileP2pApi;

}  // namespace

// NCCL 2.28.9 src/plugin/profiler.cc ncclProfilerCallback, with one guard NCCL lacks: a NULL
// phandle is ignored instead of dereferenced.
nccl_result_t prof_chain_callback(nccl_profiler_v5* prof, void** eh, int type, void* phandle,
                                  int64_t plugin_id, void* ext) {
  if (prof == nullptr || eh == nullptr) return kNcclSuccess;
  if (type == kProfilerNetEventStart) {
    const auto* h = static_cast<const ProxyEventHandle*>(phandle);
    if (h == nullptr || h->chain == nullptr || !h->chain->wants(kProfileNetPlugin))
      return kNcclSuccess;
    nccl_profiler_event_descr_v5 d{};
    d.type = kProfileNetPlugin;
    d.parentObj = h->step_event;
    d.rank = h->chain->rank_;
    d.netPlugin.id = plugin_id;
    d.netPlugin.data = ext;
    prof->startEvent(h->chain->ctx_, eh, &d);
  } else if (type == kProfilerNetEventStop) {
    prof->stopEvent(*eh);
  } else {
    nccl_profiler_event_state_args_v5 a{};
    a.netPlugin.data = ext;
    prof->recordEventState(*eh, kProfilerNetPluginUpdate, &a);
    if (type == kProfilerNetEventUpdateAndStop) prof->stopEvent(*eh);
  }
  return kNcclSuccess;
}

namespace {
template <int I>
nccl_result_t instance_callback(void** eh, int type, void* phandle, int64_t plugin_id, void* ext) {
  return prof_chain_callback(g_profiler[I].load(std::memory_order_acquire), eh, type, phandle,
                             plugin_id, ext);
}
}  // namespace

nccl_profiler_callback_t ProfChain::callback(int instance) {
  return instance == 0 ? instance_callback<0> : instance_callback<1>;
}

ProfChain::ProfChain(nccl_profiler_v5* profiler, int instance, uint64_t comm_hash,
                     const std::string& comm_name, int nranks, int rank)
    : p_(profiler), rank_(rank) {
  if (p_ == nullptr) return;
  g_profiler.at(static_cast<std::size_t>(instance)).store(p_, std::memory_order_release);
  int mask = 0;
  // nNodes = nranks: every rank is its own node, as with distinct NCCL_HOSTIDs.
  check_nccl(
      p_->init(&ctx_, comm_hash, &mask, comm_name.c_str(), nranks, nranks, rank, perf_logger),
      "profiler init");
  mask_ = mask;
}

ProfChain::~ProfChain() {
  if (p_ != nullptr) p_->finalize(ctx_);
}

bool ProfChain::wants(uint64_t type) const {
  if (p_ == nullptr) return false;
  const auto m = static_cast<uint64_t>(static_cast<unsigned>(mask_));
  return (m & type) != 0 || ((m & kProfileNetPlugin) != 0 && (type & kNetPluginImplies) != 0);
}

void* ProfChain::start(nccl_profiler_event_descr_v5* d) {
  if (!wants(d->type)) return nullptr;
  d->rank = rank_;
  void* h = nullptr;
  p_->startEvent(ctx_, &h, d);
  return h;
}

void* ProfChain::coll_api(const char* func, std::size_t count, const char* dtype) {
  nccl_profiler_event_descr_v5 d{};
  d.type = kProfileCollApi;
  d.collApi.func = func;
  d.collApi.count = count;
  d.collApi.datatype = dtype;
  d.collApi.root = 0;
  return start(&d);
}

void* ProfChain::coll(void* parent, uint64_t seq, const char* func, const void* sendbuff,
                      void* recvbuff, std::size_t count, const char* dtype, const char* algo,
                      const char* proto, int nchannels) {
  nccl_profiler_event_descr_v5 d{};
  d.type = kProfileColl;
  d.parentObj = parent;
  d.coll.seqNumber = seq;
  d.coll.func = func;
  d.coll.sendBuff = sendbuff;
  d.coll.recvBuff = recvbuff;
  d.coll.count = count;
  d.coll.root = 0;
  d.coll.datatype = dtype;
  d.coll.nChannels = static_cast<uint8_t>(nchannels);
  d.coll.nWarps = 16;
  d.coll.algo = algo;
  d.coll.proto = proto;
  return start(&d);
}

void* ProfChain::p2p(void* parent, const char* func, void* buff, std::size_t count,
                     const char* dtype, int peer) {
  nccl_profiler_event_descr_v5 d{};
  d.type = kProfileP2p;
  d.parentObj = parent;
  d.p2p.func = func;
  d.p2p.buff = buff;
  d.p2p.datatype = dtype;
  d.p2p.count = count;
  d.p2p.peer = peer;
  d.p2p.nChannels = 1;
  return start(&d);
}

void* ProfChain::proxy_op(void* parent, int peer, int nsteps, int chunk_size, bool is_send) {
  nccl_profiler_event_descr_v5 d{};
  d.type = kProfileProxyOp;
  d.parentObj = parent;
  d.proxyOp.pid = getpid();
  d.proxyOp.channelId = 0;
  d.proxyOp.peer = peer;
  d.proxyOp.nSteps = nsteps;
  d.proxyOp.chunkSize = chunk_size;
  d.proxyOp.isSend = is_send ? 1 : 0;
  return start(&d);
}

void* ProfChain::proxy_step(void* op, int step) {
  nccl_profiler_event_descr_v5 d{};
  d.type = kProfileProxyStep;
  d.parentObj = op;
  d.proxyStep.step = step;
  return start(&d);
}

void ProfChain::stop(void* handle) {
  if (p_ != nullptr && handle != nullptr) p_->stopEvent(handle);
}

const char* nccl_dtype_name(const std::string& dtype) {
  if (dtype == "bfloat16") return "ncclBfloat16";
  if (dtype == "float16") return "ncclFloat16";
  return "ncclFloat32";
}

}  // namespace squeeze::perf
