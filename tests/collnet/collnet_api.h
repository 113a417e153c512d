// Test harness: the built plugin as NCCL's CollNet proxy sees it. Loads SQUEEZE_PLUGIN_PATH
// (perf/collective/plugin_lib.h), presents any exported CollNet table version (v8..v12) through
// perf/collective/collnet_table.h, with the net table (NCCL initialises it first) and the
// built-in profiler (which tells the collective network where its calls belong, played by
// perf/collective/prof_chain.h). squeeze-perf drives the same classes; nothing here calls the
// engine directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "perf/collective/collnet_table.h"
#include "perf/collective/plugin_lib.h"
#include "perf/collective/prof_chain.h"

namespace squeeze::testing {

using CollNetProps = perf::CollNetProps;

class CollNetApi {
 public:
  // version: 8, 9, 10, 11 or 12. Loads the plugin tests/plugin_path.h finds
  // (SQUEEZE_SOCKET_IFNAME defaults to lo). private_copy: loads a copy of the library
  // from a temporary path instead, so a test that drives the plugin in the test process
  // leaves the plugin unloaded there, and the ranks it forks later still load
  // (and initialise) a fresh one.
  explicit CollNetApi(int version, bool private_copy = false);
  ~CollNetApi();
  CollNetApi(const CollNetApi&) = delete;
  CollNetApi& operator=(const CollNetApi&) = delete;

  perf::CollNetTable& table() { return *table_; }
  int version() const { return table_->version(); }
  const char* name() const { return table_->name(); }
  bool has_iallgather() const { return table_->has_iallgather(); }
  bool has_ireducescatter() const { return table_->has_ireducescatter(); }
  // The net table's init, then the collective network's (v11, v12: with comm_id), as NCCL does.
  int init(uint64_t comm_id);
  int finalize();  // the collective network's finalize, the net table's, the profiler's
  int devices(int* n) { return table_->devices(n); }
  int props(int dev, CollNetProps* out) { return table_->props(dev, out); }
  int net_props(int dev, CollNetProps* out);  // the net table's (v11) view of the same device
  int listen(int dev, void* handle, void** l) { return table_->listen(dev, handle, l); }
  int connect(void** handles, int nranks, int rank, void* l, void** c) {
    return table_->connect(handles, nranks, rank, l, c);
  }
  int reduce_support(int dtype, int op, int* s) { return table_->reduce_support(dtype, op, s); }
  int reg_mr(void* c, void* data, std::size_t size, int type, void** mh) {
    return table_->reg_mr(c, data, size, type, mh);
  }
  int dereg_mr(void* c, void* mh) { return table_->dereg_mr(c, mh); }
  int iallreduce(void* c, void* send, void* recv, std::size_t count, int dtype, int op, void* smh,
                 void* rmh, void** req) {
    return table_->iallreduce(c, send, recv, count, dtype, op, smh, rmh, req);
  }
  int iflush(void* c, void* data, int size, void* mh, void** req) {
    return table_->iflush(c, data, size, mh, req);
  }
  int test(void* req, int* done, int* size) { return table_->test(req, done, size); }
  int close_coll(void* c) { return table_->close_coll(c); }
  int close_listen(void* l) { return table_->close_listen(l); }

  // The built-in profiler, initialised for comm_id as NCCL does at communicator init. Then
  // announce_allreduce() plays the Coll event NCCL starts before a CollNet all-reduce's proxy
  // ops.
  int profiler_init(uint64_t comm_id, int nranks, int rank);
  void announce_allreduce(uint64_t seq, uint64_t count, const char* nccl_dtype, int nchannels);

 private:
  perf::PluginLib lib_;
  std::unique_ptr<perf::CollNetTable> table_;
  void* net_ctx_ = nullptr;
  std::unique_ptr<perf::ProfChain> chain_;
};

}  // namespace squeeze::testing
