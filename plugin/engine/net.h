// The one implementation behind every exported net table version. The exports/ adapters
// convert argument types and call these; every function returns an ncclResult_t code and
// never throws (callers wrap them in guarded() all the same).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "plugin/engine/objects.h"
#include "plugin/engine/pays.h"
#include "plugin/policy/policy.h"
#include "plugin/policy/stats.h"
#include "plugin/nccl/net_abi.h"
#include "plugin/params/params.h"
#include "transport/transport.h"

namespace squeeze::plugin {

class Net {
 public:
  static Net& instance();

  // Idempotent: the first call picks the transport and discovers devices.
  nccl_result_t init(nccl_logger_t log, nccl_profiler_callback_t prof, NetContext** ctx);
  nccl_result_t finalize(NetContext* ctx);
  NetContext* default_context() { return &default_ctx_; }  // for v8..v10, which have no ctx
  nccl_result_t devices(int* ndev);
  nccl_result_t properties(int dev, nccl_net_props_v11* props);
  nccl_result_t set_attr(NetContext* ctx, const nccl_net_attr_v11* attr);

  nccl_result_t listen(NetContext* ctx, int dev, void* handle, void** listen_comm);
  nccl_result_t connect(NetContext* ctx, int dev, void* handle, void** send_comm, nccl_net_device_handle** dev_comm);
  nccl_result_t accept(void* listen_comm, void** recv_comm, nccl_net_device_handle** dev_comm);
  nccl_result_t reg_mr(void* comm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t reg_mr_dmabuf(void* comm, void* data, std::size_t size, int type, uint64_t offset, int fd,
                              void** mhandle);
  nccl_result_t dereg_mr(void* comm, void* mhandle);

  nccl_result_t isend(void* send_comm, void* data, std::size_t size, int tag, void* mhandle, void* phandle,
                      void** request);
  nccl_result_t irecv(void* recv_comm, int n, void** data, const std::size_t* sizes, const int* tags,
                      void** mhandles, void** phandles, void** request);
  nccl_result_t iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request);
  nccl_result_t test(void* request, int* done, int* sizes);

  nccl_result_t close_send(void* send_comm);
  nccl_result_t close_recv(void* recv_comm);
  nccl_result_t close_listen(void* listen_comm);

  // For tests: forget the transport so the next init() rediscovers devices.
  void reset_for_tests();

  const policy::Policy* policy() const { return policy_.get(); }
  policy::Stats* stats() const { return stats_.get(); }
  PaysController* pays() const { return pays_.get(); }
  // Writes the statistics (INFO summary line, SQUEEZE_STATS file). Called at finalize and exit.
  void report_stats();

 private:
  Net() = default;
  nccl_result_t load_settings_locked();
  nccl_result_t load_policy_locked();
  nccl_result_t register_region(void* comm, const transport::MemoryDesc& mem, void** mhandle);
  // GPU staging (SQUEEZE_GPU_STAGING=1): devices whose transport cannot reach GPU memory get
  // NCCL_PTR_CUDA declared, and their GPU buffers are staged through pinned host memory.
  bool staged_device(int dev) const;
  int ptr_support(int dev) const;  // what getProperties declares and regMr accepts
  void progress_send(SendComm* c);
  void sample_link(SendComm* c);
  nccl_result_t test_send(SendComm* c, Request* r, int* done, int* sizes);
  nccl_result_t test_recv(RecvComm* c, Request* r, int* done, int* sizes);
  nccl_result_t test_flush(RecvComm* c, Request* r, int* done);
  params::Settings settings_;  // read from the environment at the first init
  bool settings_loaded_ = false;
  std::shared_ptr<const policy::Policy> policy_;
  std::unique_ptr<policy::Stats> stats_;
  std::unique_ptr<PaysController> pays_;
  std::mutex mu_;
  std::unique_ptr<transport::Transport> transport_;
  bool gpu_staging_ = false;  // decided once, at the first init
  bool gpu_staging_decided_ = false;
  NetContext default_ctx_;
};

}  // namespace squeeze::plugin
