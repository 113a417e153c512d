// NCCL's side of the profiler chain, played for the plugin's built-in profiler: the
// ncclProfilerCallback_t NCCL hands to the net plugin's init, the Coll / P2p / ProxyOp /
// ProxyStep events NCCL starts around each collective, and the per-request event handle the
// net plugin receives as `phandle`. This is how `--dtype` reaches the plugin: the datatype is
// never in the net API, only in the Coll (or P2p) event the profiler walks up to.
//
// With no profiler in the library, or `--chain off`, every call is a no-op and the plugin
// sees an unanswered query (dtype unknown), as under NCCL with another profiler loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/nccl/profiler_abi.h"

namespace squeeze::perf {

class ProfChain;

// What `phandle` points at while a request is posted (NCCL's struct ncclProxyEventHandle:
// the step's event handle and the sub-args that know the profiler context).
struct ProxyEventHandle {
  void* step_event = nullptr;
  const ProfChain* chain = nullptr;
};

class ProfChain {
 public:
  static constexpr int kInstances =
      2;  // plugin instances in one process: the plugin and a --baseline copy
  // profiler == nullptr: no chain. Calls the profiler's init (NCCL does so per communicator).
  // `instance`: which plugin instance's profiler (PluginLib::instance()).
  ProfChain(nccl_profiler_v5* profiler, int instance, uint64_t comm_hash,
            const std::string& comm_name, int nranks, int rank);
  ~ProfChain();  // the profiler's finalize
  ProfChain(const ProfChain&) = delete;
  ProfChain& operator=(const ProfChain&) = delete;

  // The callback to pass to that instance's net plugin init (NCCL's ncclProfilerCallback).
  static nccl_profiler_callback_t callback(int instance);
  bool active() const { return p_ != nullptr && mask_ != 0; }
  int rank() const { return rank_; }

  // Each returns the profiler's event handle, or nullptr (no chain, or event type not asked).
  void* coll_api(const char* func, std::size_t count, const char* dtype);
  // nchannels: the channels NCCL runs it on (the collective network learns its calls' shape
  // from it).
  void* coll(void* parent, uint64_t seq, const char* func, const void* sendbuff, void* recvbuff,
             std::size_t count, const char* dtype, const char* algo, const char* proto,
             int nchannels = 1);
  void* p2p(void* parent, const char* func, void* buff, std::size_t count, const char* dtype,
            int peer);
  void* proxy_op(void* parent, int peer, int nsteps, int chunk_size, bool is_send);
  void* proxy_step(void* op, int step);
  void stop(void* handle);

 private:
  friend nccl_result_t prof_chain_callback(nccl_profiler_v5*, void**, int, void*, int64_t, void*);
  bool wants(uint64_t type) const;
  void* start(nccl_profiler_event_descr_v5* d);

  nccl_profiler_v5* p_ = nullptr;
  void* ctx_ = nullptr;
  int mask_ = 0;
  int rank_ = 0;
};

// NCCL's datatype names ("ncclFloat32", ...) for the emulator's dtypes.
const char* nccl_dtype_name(const std::string& dtype);

}  // namespace squeeze::perf
