// The one implementation behind every exported CollNet table version
// (plugin/exports/collnet_*): Squeeze as NCCL's collective network. It runs
// over the net plugin's transport with its settings, policy, statistics and
// pays controller (plugin/engine/net.h), describes the same devices (so NCCL
// marks them collective-capable), builds a full mesh between the nodes at
// connect and runs each iallreduce as a compressed reduce-scatter and
// all-gather whose result is bit-identical on every node
// (plugin/collnet/README.md). Every function returns an ncclResult_t code; the
// adapters guard against exceptions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/engine/net.h"
#include "plugin/nccl/collnet_abi.h"

namespace squeeze::collnet {

// What init returns as the context (v11): the communicator's commId.
struct CollNetContext {
  uint64_t comm_id = 0;
};

class CollNet {
 public:
  // `net` is the process's net plugin engine (its ABI adapters hand it over).
  explicit CollNet(plugin::Net& net) : net_(net) {}

  // v11 and v12 pass a ctx pointer to fill; v8..v10 pass null (no commId: error
  // feedback stays off).
  nccl_result_t init(nccl_logger_t log, uint64_t comm_id, CollNetContext** ctx);
  nccl_result_t finalize(CollNetContext* ctx);
  nccl_result_t devices(int* ndev);
  nccl_result_t properties(int dev, nccl_net_props_v12* props);
  nccl_result_t listen(CollNetContext* ctx, int dev, void* handle, void** listen_comm);
  // Builds the mesh. NCCL calls it once, on its proxy service thread, and takes
  // a null comm for a failure (it falls back to its other algorithms), so it
  // blocks until every node has joined or SQUEEZE_COLLNET_CONNECT_TIMEOUT_S
  // passes.
  nccl_result_t connect(void* const* handles, int nranks, int rank, void* listen_comm,
                        void** coll_comm);
  static nccl_result_t reduce_support(int dtype, int op, int* supported);
  nccl_result_t reg_mr(void* coll_comm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t reg_mr_dmabuf(void* coll_comm, void* data, std::size_t size, int type,
                              uint64_t offset, int fd, void** mhandle);
  nccl_result_t dereg_mr(void* coll_comm, void* mhandle);
  nccl_result_t iallreduce(void* coll_comm, void* send, void* recv, std::size_t count, int dtype,
                           int op, void* send_mh, void* recv_mh, void** request);
  // Host memory never needs a flush: *request stays null, which NCCL takes as
  // done.
  nccl_result_t iflush(void* coll_comm, void* data, int size, void* mhandle, void** request);
  nccl_result_t test(void* request, int* done, int* size);
  nccl_result_t close_coll(void* coll_comm);
  nccl_result_t close_listen(void* listen_comm);

 private:
  plugin::Net& net_;
};

}  // namespace squeeze::collnet
