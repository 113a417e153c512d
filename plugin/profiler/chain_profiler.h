// Squeeze's built-in NCCL profiler (v5, v6): it records only what the net plugin needs to know
// about each network message (the collective, dtype, count, sequence number and communicator)
// and answers the net plugin's NetPlugin queries with it. The C adapter in
// profiler_v5_adapter.cc maps NCCL's table onto this class; profiler_v6_adapter.cc converts
// v6's descriptors to v5's.
//
// NCCL's side, as read in NCCL 2.28.9 (src/plugin/profiler.cc, enqueue.cc, proxy.cc,
// transport/net.cc):
// - init's activation mask is process-global; NetPlugin (1<<7) alone turns on Coll, P2p,
//   ProxyOp and ProxyStep events (and, unasked, GroupApi/CollApi/P2pApi/Group events).
// - Coll/P2p events start and stop on the launching thread around ncclProxyStart, usually
//   before the proxy thread starts their ProxyOps: parents must outlive their stop.
// - ProxyOp events run on the proxy thread with parentObj = the Coll/P2p handle and the pid
//   of the process that built the op; under PXN that is another process, and both the parent
//   handle and the context pointer belong to it: neither may be dereferenced.
// - ProxyStep events: parentObj = the ProxyOp handle; NetPlugin events: parentObj = the
//   ProxyStep handle of the message, which is live while isend/irecv run.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

#include "plugin/nccl/profiler_abi.h"
#include "plugin/profiler/event_pool.h"

namespace squeeze::profiler {

// SQUEEZE_PROFILER (plugin/params): off requests no events.

class ChainProfiler {
 public:
  static ChainProfiler& instance();  // process-wide; never destroyed
  explicit ChainProfiler(pid_t pid, uint32_t max_slots = EventPool::kDefaultMaxSlots,
                         uint32_t retained_tasks = EventPool::kDefaultRetainedTasks);

  nccl_result_t init(void** context, uint64_t comm_hash, int* mask, const char* comm_name,
                     int nnodes, int nranks, int rank, nccl_logger_t log);
  nccl_result_t start(void* context, void** handle, const nccl_profiler_event_descr_v5* d);
  nccl_result_t stop(void* handle);
  nccl_result_t record(void* handle, nccl_profiler_event_state_t state,
                       const nccl_profiler_event_state_args_v5* args);
  nccl_result_t finalize(void* context);

  const EventPool& pool() const { return pool_; }
  pid_t pid() const { return pid_; }
  uint64_t queries_answered() const { return answered_.load(std::memory_order_relaxed); }

 private:
  void start_task(void* context, void** handle, const nccl_profiler_event_descr_v5* d);
  void answer_query(const nccl_profiler_event_descr_v5* d);

  const pid_t pid_;
  EventPool pool_;
  std::atomic<uint64_t> answered_{0};
  std::atomic<bool> logged_active_{false};
};

}  // namespace squeeze::profiler
