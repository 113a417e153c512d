// What the profiler chain knows about the call a network message belongs to.
#pragma once

#include <cstdint>

#include "plugin/policy/message_meta.h"

namespace squeeze::profiler {

struct ChainMeta {
  policy::Collective func = policy::Collective::kUnknown;  // Coll: its func; P2p: kSend/kRecv
  policy::DataType dtype = policy::DataType::kUnknown;
  policy::Algo algo = policy::Algo::kUnknown;
  policy::Proto proto = policy::Proto::kUnknown;
  bool from_coll = false;  // the chain reached a Coll event
  bool from_p2p = false;   // the chain reached a P2p event
  bool has_seq = false;
  uint64_t count = 0;  // elements of the call (per peer for p2p)
  uint64_t seq = 0;    // Coll sequence number (per func, per communicator)
  uint64_t comm_hash = 0;
  int32_t nranks = 0;
  int32_t rank = -1;
  int32_t peer = -1;  // p2p peer, or the root of a rooted collective
};

// What one ProxyOp event says about itself.
struct OpInfo {
  bool foreign = false;  // created by another process (PXN): its parent handle is not ours
  int32_t peer = -1;
  int32_t channel = -1;
  int32_t is_send = -1;
  int32_t nsteps = 0;
  int32_t chunk_size = 0;
};

}  // namespace squeeze::profiler
