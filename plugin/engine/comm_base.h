// What send and receive comms share: the NCCL context and engine they belong to, their
// device, the memory regions NCCL registered on them (and GPU staging state), and the
// policy's view of their communicator's name.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "plugin/engine/engine.h"
#include "plugin/engine/mem_region.h"
#include "plugin/engine/net_context.h"
#include "plugin/policy/policy.h"
#include "transport/transport.h"

namespace squeeze::plugin {

enum class CommKind : uint32_t {
  kSend = 0x53514353,
  kRecv = 0x53514352
};  // tags to tell comms apart

class CommBase;

// Every request NCCL holds starts with its comm, so test() finds the comm and the kind.
struct RequestBase {
  CommBase* comm = nullptr;  // null: not in use
};

class CommBase {
 public:
  CommBase(CommKind kind, NetContext* ctx, const Engine* engine, int dev, bool staged);
  virtual ~CommBase();
  CommBase(const CommBase&) = delete;
  CommBase& operator=(const CommBase&) = delete;

  CommKind kind() const { return kind_; }
  NetContext* ctx() const { return ctx_; }
  const Engine& engine() const { return *engine_; }
  int dev() const { return dev_; }
  int registrations() const { return next_reg_index_; }

  // regMr/regMrDmaBuf of memory the device supports (the caller checked): GPU memory on a
  // staged device gets a pinned mirror, which the transport registers instead.
  transport::Status register_region(const transport::MemoryDesc& mem, MemRegion** out);
  bool deregister_region(const MemRegion* mr);

  // The policy's "comm" patterns resolved against this comm's communicator name, once the
  // profiler knows it (v11); null until then.
  const policy::CommMatch* comm_match();

  // GPU staging state, from the first staged GPU regMr.
  GpuStaging* gpu() { return gpu_.get(); }
  std::unique_ptr<GpuStaging>& gpu_owner() { return gpu_; }

 protected:
  virtual transport::Status register_memory(const transport::MemoryDesc& mem,
                                            std::unique_ptr<transport::Registration>* reg) = 0;

 private:
  CommKind kind_;
  NetContext* ctx_;
  const Engine* engine_;
  int dev_;
  bool staged_;
  int next_reg_index_ = 0;
  std::vector<std::unique_ptr<MemRegion>> regions_;
  // Declared after `regions_`: destroyed first, and waits for the copies into their mirrors.
  std::unique_ptr<GpuStaging> gpu_;
  std::unique_ptr<policy::CommMatch> comm_match_;
  bool comm_match_ready_ = false;
};

}  // namespace squeeze::plugin
