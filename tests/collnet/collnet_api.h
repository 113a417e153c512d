// Test harness: dlopens the built plugin and presents any exported CollNet
// table version (v8..v11) through one v11-shaped interface, with the net table
// (NCCL initialises it first) and the built-in profiler (which tells the
// collective network where its calls belong). This is how NCCL's CollNet proxy
// sees the plugin; nothing here calls the engine directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/nccl/collnet_abi.h"
#include "plugin/nccl/net_abi.h"
#include "plugin/nccl/profiler_abi.h"

namespace squeeze::testing {

struct CollNetProps {
  std::string name;
  std::string pci_path;  // empty when null
  int ptr_support = 0;
  std::size_t max_coll = 0;  // 0 where the version has none
};

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

  int version() const { return version_; }
  const char* name() const;
  bool has_iallgather() const;
  bool has_ireducescatter() const;
  // The net table's init, then the collective network's (v11: with comm_id), as
  // NCCL does.
  int init(uint64_t comm_id);
  int finalize();  // v11: finalize(ctx) on both tables; older: nothing
  int devices(int* n);
  int props(int dev, CollNetProps* out);
  int net_props(int dev,
                CollNetProps* out);  // the net table's (v11) view of the same device
  int listen(int dev, void* handle, void** l);
  int connect(void** handles, int nranks, int rank, void* l, void** c);
  int reduce_support(int dtype, int op, int* supported);
  int reg_mr(void* c, void* data, std::size_t size, int type, void** mh);
  int dereg_mr(void* c, void* mh);
  int iallreduce(void* c, void* send, void* recv, std::size_t count, int dtype, int op, void* smh,
                 void* rmh, void** req);
  int iflush(void* c, void* data, int size, void* mh, void** req);
  int test(void* req, int* done, int* size);
  int close_coll(void* c);
  int close_listen(void* l);

  // The built-in profiler, initialised for comm_id as NCCL does at communicator
  // init. Then announce() plays the Coll event NCCL starts before a CollNet
  // all-reduce's proxy ops.
  int profiler_init(uint64_t comm_id, int nnodes, int nranks, int rank);
  void announce_allreduce(uint64_t seq, uint64_t count, const char* nccl_dtype, int nchannels);

 private:
  int version_;
  void* lib_ = nullptr;
  std::string copy_path_;
  nccl_net_v11* net_ = nullptr;
  void* net_ctx_ = nullptr;
  void* ctx_ = nullptr;
  nccl_collnet_v8* v8_ = nullptr;
  nccl_collnet_v9* v9_ = nullptr;  // also v10
  nccl_collnet_v11* v11_ = nullptr;
  nccl_collnet_v12* v12_ = nullptr;
  nccl_profiler_v5* prof_ = nullptr;
  void* prof_ctx_ = nullptr;
};

}  // namespace squeeze::testing
