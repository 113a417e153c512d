// The one implementation behind every exported net table version: the thin object the
// exports/ adapters call (they convert argument types and guard against exceptions). It reads
// the settings and the policy at the first init, picks the transport, and creates the comms,
// handing each the Engine (policy, statistics, pays controller). isend, irecv, test and the
// rest go to the comm or request NCCL passes. Every function returns an ncclResult_t code.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "plugin/engine/engine.h"
#include "plugin/engine/net_context.h"
#include "plugin/nccl/net_abi.h"
#include "plugin/params/params.h"
#include "transport/transport.h"

namespace squeeze::plugin {

class Net {
 public:
  // The process's instance. Only the ABI adapters (plugin/exports, the tuner's) call this.
  static Net& instance();

  // Idempotent: the first call reads the settings and policy, picks the transport and
  // discovers devices. `ctx` (v11, v12) receives a new context; null for v8..v10, which share
  // one.
  nccl_result_t init(nccl_logger_t log, nccl_profiler_callback_t prof, NetContext** ctx);
  nccl_result_t finalize(NetContext* ctx);
  nccl_result_t devices(int* ndev);
  // The newest layout (v12); exports/legacy_props.h converts it down for v8..v11.
  nccl_result_t properties(int dev, nccl_net_props_v12* props);
  nccl_result_t set_attr(NetContext* ctx, const nccl_net_attr_v11* attr);

  nccl_result_t listen(NetContext* ctx, int dev, void* handle, void** listen_comm);
  nccl_result_t connect(NetContext* ctx, int dev, void* handle, void** send_comm,
                        nccl_net_device_handle** dev_comm);
  nccl_result_t accept(void* listen_comm, void** recv_comm, nccl_net_device_handle** dev_comm);
  nccl_result_t reg_mr(void* comm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t reg_mr_dmabuf(void* comm, void* data, std::size_t size, int type, uint64_t offset,
                              int fd, void** mhandle);
  nccl_result_t dereg_mr(void* comm, void* mhandle);

  nccl_result_t isend(void* send_comm, void* data, std::size_t size, int tag, void* mhandle,
                      void* phandle, void** request);
  nccl_result_t irecv(void* recv_comm, int n, void** data, const std::size_t* sizes,
                      const int* tags, void** mhandles, void** phandles, void** request);
  nccl_result_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles,
                       void** request);
  nccl_result_t test(void* request, int* done, int* sizes);

  nccl_result_t close_send(void* send_comm);
  nccl_result_t close_recv(void* recv_comm);
  nccl_result_t close_listen(void* listen_comm);

  // The running policy (null before the first successful init), for the built-in tuner.
  std::shared_ptr<const policy::Policy> policy() const;
  // For the collective network (plugin/collnet), which runs over the same transport with the
  // same settings, policy, statistics and pays controller. Null (and empty settings) before
  // the first successful init; never change after it.
  transport::Transport* transport() const;
  const Engine* engine() const;
  const params::Settings* settings() const;
  // Writes the statistics (INFO summary line, SQUEEZE_STATS file). Called at finalize and exit.
  void report_stats();

 private:
  Net() = default;
  nccl_result_t load_settings_locked();
  nccl_result_t load_engine_locked();
  nccl_result_t open_transport_locked();
  void decide_gpu_staging_locked();
  nccl_result_t register_region(void* comm, const transport::MemoryDesc& mem, void** mhandle);
  // GPU staging (SQUEEZE_GPU_STAGING=1): devices whose transport cannot reach GPU memory get
  // NCCL_PTR_CUDA declared, and their GPU buffers are staged through pinned host memory.
  bool staged_device(int dev) const;
  int ptr_support(int dev) const;  // what getProperties declares and regMr accepts
  bool valid_device(int dev) const;

  mutable std::mutex mu_;
  params::Settings settings_;  // read from the environment at the first init
  bool settings_loaded_ = false;
  Engine engine_;
  std::unique_ptr<transport::Transport> transport_;
  bool gpu_staging_ = false;  // decided once, at the first init
  bool gpu_staging_decided_ = false;
  NetContext shared_ctx_;  // for v8..v10, which have no ctx
};

}  // namespace squeeze::plugin
