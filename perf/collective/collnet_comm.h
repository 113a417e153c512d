// One emulated NCCL communicator whose all-reduces run on the plugin's collective network
// (squeeze-perf --route collnet), set up as NCCL 2.28.9 does it with one rank per node
// (plugin/nccl/COLLNET.md): the profiler's init, the net table's init, the CollNet table's
// (v11: per communicator, with the commId), listen on the device, the handles exchanged through
// the bootstrap, one blocking connect(handles, nodes, node) on every rank at once, closeListen,
// then the CollNetChain proxy's shared buffer registered by its send and receive side
// (chain_proxy.h). Each all-reduce plays the Coll event NCCL starts (algo COLLNET_CHAIN, its
// channels), which is how the plugin learns the dtype and where each call lies in its tensor
// (error feedback), then runs through the proxy. Torn down in reverse: deregMr, closeColl, the
// CollNet table's finalize, the net table's, the profiler's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "perf/collective/bootstrap.h"
#include "perf/collective/chain_proxy.h"
#include "perf/collective/collnet_table.h"
#include "perf/collective/plugin_lib.h"
#include "perf/collective/prof_chain.h"

namespace squeeze::perf {

struct CollNetSpec {
  uint64_t comm_id = 0;  // same on every rank
  std::string name;      // communicator name, for the profiler
  int dev = 0;
  bool chain = true;  // play the profiler chain
  int channels = 2;   // CollNetChain channels: each call carries channels x chunk bytes
  double timeout_s = 120;
};

class CollNetComm {
 public:
  // Throws std::runtime_error naming the step that failed (init, listen, connect, regMr).
  CollNetComm(const PluginLib& lib, Bootstrap& boot, const CollNetSpec& spec);
  ~CollNetComm();
  CollNetComm(const CollNetComm&) = delete;
  CollNetComm& operator=(const CollNetComm&) = delete;

  // Whether the plugin's reduceSupport says yes to (ncclDataType_t, ncclRedOp_t).
  bool supports(int nccl_dtype, int nccl_op);
  // One all-reduce of `count` elements (ncclDataType_t nccl_dtype, elem bytes each; its NCCL
  // name for the profiler) from `in` to `out`. Throws std::runtime_error with the plugin's error
  // or a timeout.
  void allreduce(const uint8_t* in, uint8_t* out, uint64_t count, int nccl_dtype, std::size_t elem,
                 const char* nccl_dtype_name, int nccl_op);
  uint64_t calls() const { return proxy_ ? proxy_->calls() : 0; }

 private:
  void release() noexcept;

  const PluginLib& lib_;
  CollNetSpec spec_;
  int rank_, nranks_;
  std::unique_ptr<ProfChain> chain_;
  void* net_ctx_ = nullptr;
  std::unique_ptr<CollNetTable> table_;
  void* coll_ = nullptr;
  std::unique_ptr<ChainProxy> proxy_;
  uint64_t seq_ = 0;
};

}  // namespace squeeze::perf
