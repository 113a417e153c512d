// One irecv (up to kMaxRecvs grouped receives that complete together) or iflush NCCL is
// waiting for: where each message goes and, once the transport delivered them, what arrived.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "plugin/engine/comm_base.h"
#include "plugin/engine/job.h"
#include "plugin/policy/message_meta.h"
#include "transport/transport.h"

namespace squeeze::plugin {

struct RecvRequest : RequestBase {
  int slot = -1;       // the transport's receive (or flush) slot
  int n = 0;           // grouped receives
  bool flush = false;  // an iflush, not a receive
  policy::Collective collective = policy::Collective::kUnknown;  // for the statistics
  std::array<void*, transport::kMaxRecvs> dst{};
  std::array<std::size_t, transport::kMaxRecvs> cap{};
  std::array<int, transport::kMaxRecvs> dst_type{};  // NCCL_PTR_* of each destination
  // GPU staging: destination i is GPU memory staged at host_stage[i] (null: not staged).
  bool gpu = false;
  std::array<uint8_t*, transport::kMaxRecvs> host_stage{};
  // Once the transport delivered every item
  bool arrived = false;
  std::array<transport::Received, transport::kMaxRecvs> got{};
  Job job;  // decoding the frames (or the GPU staging copies)
};

}  // namespace squeeze::plugin
