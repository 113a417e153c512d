#include "plugin/profiler/chain_profiler.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin/params/params.h"
#include "plugin/policy/names.h"
#include "plugin/profiler/comm_registry.h"
#include "plugin/profiler/net_query.h"

namespace squeeze::profiler {

using policy::Collective;
using policy::DataType;

ChainProfiler& ChainProfiler::instance() {
  // Never destroyed: NCCL's proxy threads may still report events while the process exits.
  static ChainProfiler* p = new ChainProfiler(getpid());
  return *p;
}

ChainProfiler::ChainProfiler(pid_t pid, uint32_t max_slots, uint32_t retained_tasks)
    : pid_(pid), pool_(max_slots, retained_tasks) {}

nccl_result_t ChainProfiler::init(void** context, uint64_t comm_hash, int* mask,
                                  const char* comm_name, int nnodes, int nranks, int rank,
                                  nccl_logger_t log) {
  if (context != nullptr) *context = nullptr;
  if (context == nullptr || mask == nullptr) return kNcclInvalidArgument;
  std::string problem;  // a bad value also stops the net plugin's init, which says so
  const params::Value env = params::Settings::read_env(params::Id::kProfiler, &problem);
  const bool off = env.set && env.integer == 0;
  CommInfo info;
  info.comm_hash = comm_hash;
  info.name = comm_name != nullptr ? comm_name : "";
  info.nranks = nranks;
  info.rank = rank;
  info.nnodes = nnodes;
  // The context is registered even when events are off: the engine and the tuner still learn
  // the communicator's name and size from it.
  *context = CommRegistry::instance().add(std::move(info));
  *mask = off ? 0 : static_cast<int>(kProfileNetPlugin);
  if (log != nullptr && !logged_active_.exchange(true)) {
    if (off) {
      log(kLogInfo, kSubsysInit, __FILE__, __LINE__,
          "Squeeze profiler: %s=%s, no events requested: every message's dtype is \"unknown\"",
          env.from, env.text.c_str());
    } else {
      log(kLogInfo, kSubsysInit, __FILE__, __LINE__,
          "Squeeze profiler: active; recovers the collective, dtype and count of each network "
          "message");
    }
  }
  return kNcclSuccess;
}

void ChainProfiler::start_task(void* context, void** handle,
                               const nccl_profiler_event_descr_v5* d) {
  CommInfo comm;
  if (!CommRegistry::instance().context_info(context, &comm)) return;
  ChainMeta m;
  m.comm_hash = comm.comm_hash;
  m.nranks = comm.nranks;
  m.rank = d->rank;
  TaskKind kind = TaskKind::kColl;
  switch (d->type) {
    case kProfileCollApi:
      kind = TaskKind::kCollApi;
      m.func = policy::collective_from_nccl_string(d->collApi.func);
      m.dtype = policy::dtype_from_nccl_string(d->collApi.datatype);
      m.count = d->collApi.count;
      m.peer = d->collApi.root;
      CommRegistry::instance().note_api_call(context, m.func, m.dtype, m.count);
      break;
    case kProfileColl: {
      kind = TaskKind::kColl;
      m.from_coll = true;
      m.func = policy::collective_from_nccl_string(d->coll.func);
      m.dtype = policy::dtype_from_nccl_string(d->coll.datatype);
      m.count = d->coll.count;
      m.seq = d->coll.seqNumber;
      m.has_seq = true;
      m.algo = policy::algo_from_nccl_string(d->coll.algo);
      m.proto = policy::proto_from_nccl_string(d->coll.proto);
      m.peer = d->coll.root;
      if (m.func == Collective::kAllReduce &&
          (m.algo == policy::Algo::kCollNetChain || m.algo == policy::Algo::kCollNetDirect)) {
        CollNetColl c;
        c.seq = m.seq;
        c.count = m.count;
        c.dtype = m.dtype;
        c.algo = m.algo;
        c.nchannels = d->coll.nChannels;
        CommRegistry::instance().note_collnet_coll(context, c);
      }
      // NCCL runs AllGather and Broadcast as int8 with count in bytes (enqueue.cc
      // collTaskAppend); the CollApi parent still has the user's dtype and count.
      TaskKind pk{};
      ChainMeta api;
      if ((m.func == Collective::kAllGather || m.func == Collective::kBroadcast) &&
          m.dtype == DataType::kInt8 && pool_.read_task(d->parentObj, &pk, &api) &&
          pk == TaskKind::kCollApi && api.func == m.func && api.dtype != DataType::kUnknown &&
          api.count * policy::dtype_size(api.dtype) == m.count) {
        m.dtype = api.dtype;
        m.count = api.count;
      }
      break;
    }
    case kProfileP2p:
      kind = TaskKind::kP2p;
      m.from_p2p = true;
      m.func = policy::collective_from_nccl_string(d->p2p.func);
      m.dtype = policy::dtype_from_nccl_string(d->p2p.datatype);
      m.count = d->p2p.count;
      m.peer = d->p2p.peer;
      break;
    default: return;
  }
  *handle = pool_.create_task(kind, m);
}

void ChainProfiler::answer_query(const nccl_profiler_event_descr_v5* d) {
  if (d->netPlugin.id != kNetPluginId || d->netPlugin.data == nullptr) return;  // not our query
  auto* q = static_cast<NetQuery*>(d->netPlugin.data);
  if (q->magic != kNetQueryMagic || q->size != sizeof(NetQuery)) return;
  q->answered = true;
  EventPool::StepView v;
  if (pool_.read_step(d->parentObj, &v)) {
    q->found_op = true;
    q->meta = v.meta;
    q->op = v.op;
    q->step = v.step;
  }
  answered_.fetch_add(1, std::memory_order_relaxed);
}

nccl_result_t ChainProfiler::start(void* context, void** handle,
                                   const nccl_profiler_event_descr_v5* d) {
  if (handle == nullptr) return kNcclSuccess;
  *handle = nullptr;
  if (d == nullptr) return kNcclSuccess;
  switch (d->type) {
    case kProfileCollApi:
    case kProfileColl:
    case kProfileP2p: start_task(context, handle, d); break;
    case kProfileProxyOp: {
      // The context of a PXN op is another process's pointer: it is never used here.
      OpInfo info;
      info.foreign = d->proxyOp.pid != pid_;
      info.peer = d->proxyOp.peer;
      info.channel = d->proxyOp.channelId;
      info.is_send = d->proxyOp.isSend;
      info.nsteps = d->proxyOp.nSteps;
      info.chunk_size = d->proxyOp.chunkSize;
      *handle = pool_.create_op(info.foreign ? nullptr : d->parentObj, info);
      break;
    }
    case kProfileProxyStep: *handle = pool_.start_step(d->parentObj, d->proxyStep.step); break;
    case kProfileNetPlugin:
      answer_query(d);  // no event: nothing for the net plugin to stop
      break;
    default:
      break;  // Group, GroupApi, P2pApi (its func is Send/Recv, like P2p's), KernelLaunch,
              // KernelCh, ProxyCtrl
  }
  return kNcclSuccess;
}

nccl_result_t ChainProfiler::stop(void* handle) {
  pool_.stop(handle);
  return kNcclSuccess;
}

nccl_result_t ChainProfiler::record(void*, nccl_profiler_event_state_t,
                                    const nccl_profiler_event_state_args_v5*) {
  return kNcclSuccess;  // state changes carry nothing the policy needs
}

nccl_result_t ChainProfiler::finalize(void* context) {
  CommRegistry::instance().remove(context);
  return kNcclSuccess;
}

}  // namespace squeeze::profiler
