// What the engine knows about one message before the policy decides: the collective, algo
// and protocol from setNetAttr, the protocol of the buffer from the regMr order, and the
// dtype, count and sequence number from the profiler chain.
//
// NCCL 2.28.9 (src/transport/net.cc, setXferNetAttrs) sets, right before an isend/irecv
// whose attributes changed: op = 1 << collAPI, algo = 1 << algorithm, proto = 1 << protocol.
// All three are bit masks; for point-to-point APIs (Send, Recv, AlltoAll, Gather, Scatter)
// algo and proto are NOT updated and hold whatever the previous collective left there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/engine/comm_base.h"
#include "plugin/policy/message_meta.h"

namespace squeeze::plugin {

// One-hot bit -> index, or -1 when zero or several bits are set (NCCL_NET_ATTR_UNDEF is all ones).
int single_bit(uint32_t mask);

policy::Collective collective_from_func(int func);  // ncclFunc_t index
policy::Proto proto_from_index(int proto);          // NCCL_PROTO_LL=0, LL128=1, SIMPLE=2
policy::Algo algo_from_index(int algo);             // NCCL_ALGO_TREE=0, RING=1, ...

// The protocol of `mr` on its comm, from the regMr order: a collective connection registers
// LL, LL128 and SIMPLE buffers in that order; a comm with a single region is point-to-point
// (SIMPLE only). Anything else is unknown.
policy::Proto proto_from_registration(int registrations, const MemRegion* mr);

// Fills everything the engine knows about a message (not the decision): the comm's current
// setNetAttr attributes, the protocol of its buffer, the profiler chain's answer for
// `phandle`, and the policy's view of the communicator's name.
policy::MessageMeta describe_message(CommBase& comm, const MemRegion* mr, std::size_t bytes,
                                     void* phandle, bool is_send);

}  // namespace squeeze::plugin
