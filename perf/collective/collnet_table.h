// A collective network table (ncclCollNetPlugin_v8 .. _v12) found in a loaded plugin library,
// seen through one v11-shaped interface: the version-specific signatures (v8's int count, v11's
// per-communicator context) stay in here. This is the table NCCL's CollNet proxy calls; the
// emulator (squeeze-perf --route collnet) and the collective network's tests both drive it
// through this class and through ChainProxy (chain_proxy.h). NCCL 2.28.9 takes v11, 2.30 v12.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "perf/collective/plugin_lib.h"
#include "plugin/nccl/collnet_abi.h"

namespace squeeze::perf {

struct CollNetProps {
  std::string name;
  std::string pci_path;  // empty when null
  int ptr_support = 0;
  std::size_t max_coll = 0;  // 0 where the version has none (v8)
};

class CollNetTable {
 public:
  static constexpr int kNcclVersion = 11;  // what NCCL 2.28.9 looks for first

  // The ncclCollNetPlugin_v<version> table of `lib` (8 .. 12). Throws std::runtime_error
  // naming the symbol when the library has none, or the version when it is not one of those.
  CollNetTable(const PluginLib& lib, int version);
  ~CollNetTable();  // finalize() when init() succeeded and nobody finalized
  CollNetTable(const CollNetTable&) = delete;
  CollNetTable& operator=(const CollNetTable&) = delete;

  int version() const { return version_; }
  const char* name() const;
  bool has_iallgather() const;
  bool has_ireducescatter() const;
  // v11 and v12: init(&ctx, comm_id, log), once per communicator; older: init(log).
  int init(uint64_t comm_id, nccl_logger_t log);
  int finalize();  // v11 and v12: finalize(ctx); older tables have none (0)
  int devices(int* n);
  int props(int dev, CollNetProps* out);
  int listen(int dev, void* handle, void** listen_comm);
  int connect(void** handles, int nranks, int rank, void* listen_comm, void** coll_comm);
  int reduce_support(int nccl_dtype, int nccl_op, int* supported);
  int reg_mr(void* coll_comm, void* data, std::size_t size, int type, void** mhandle);
  int dereg_mr(void* coll_comm, void* mhandle);
  // v8 takes an int count: a count beyond INT_MAX is refused here (ncclInvalidArgument).
  int iallreduce(void* coll_comm, void* send, void* recv, std::size_t count, int nccl_dtype,
                 int nccl_op, void* send_mh, void* recv_mh, void** request);
  int iflush(void* coll_comm, void* data, int size, void* mhandle, void** request);
  int test(void* request, int* done, int* size);
  int close_coll(void* coll_comm);
  int close_listen(void* listen_comm);

 private:
  int version_;
  void* ctx_ = nullptr;  // v11, v12
  bool initialized_ = false;
  nccl_collnet_v8* v8_ = nullptr;
  nccl_collnet_v9* v9_ = nullptr;  // also v10
  nccl_collnet_v11* v11_ = nullptr;
  nccl_collnet_v12* v12_ = nullptr;
};

}  // namespace squeeze::perf
