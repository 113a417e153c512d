// The InfiniBand verbs transport (SQUEEZE_TRANSPORT=ib): RC queue pairs set up over a TCP
// side channel, receiver-posted clear-to-send, RDMA writes with immediate (see ib_send_comm.h,
// ib_recv_comm.h). libibverbs is loaded at run time, so the plugin loads without it.
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"

namespace squeeze::transport::ib {

struct VerbsApi;
struct IbOptions;

// Returns null with *why saying why the transport cannot be used here, in one sentence:
// "libibverbs.so.1 not found: ...", "ibv_get_device_list: Function not implemented",
// "no RDMA device found", a bad SQUEEZE_IB_* variable, ...
std::unique_ptr<Transport> open_transport(std::string* why);

// The same over a given verbs table (tests: the fake provider), with options from the
// environment or as given. The table is copied.
std::unique_ptr<Transport> open_transport_with(const VerbsApi& api, std::string* why);
std::unique_ptr<Transport> open_transport_with(const VerbsApi& api, const IbOptions& opts, std::string* why);

}  // namespace squeeze::transport::ib
