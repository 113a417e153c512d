// The InfiniBand verbs transport (SQUEEZE_TRANSPORT=ib): RC queue pairs set up over a TCP
// side channel, receiver-posted clear-to-send, RDMA writes with immediate (see ib_send_comm.h,
// ib_recv_comm.h). libibverbs is loaded at run time, so the plugin loads without it.
#pragma once

#include <memory>
#include <string>

#include "transport/ib/ib_options.h"
#include "transport/socket/socket_options.h"
#include "transport/transport.h"

namespace squeeze::transport::ib {

struct VerbsApi;

// Opens the devices `opts` selects; the out-of-band exchange runs over the first interface
// `socket` picks (unless opts.oob_interfaces names some), with its socket options. Returns
// null with *why saying why the transport cannot be used here, in one sentence:
// "libibverbs.so.1 not found: ...", "ibv_get_device_list: Function not implemented",
// "no RDMA device found", ...
std::unique_ptr<Transport> open_transport(const IbOptions& opts, const sock::SocketOptions& socket,
                                          std::string* why);

// The same over a given verbs table (tests: the fake provider; without `socket`, the default
// socket options). The table is copied.
std::unique_ptr<Transport> open_transport_with(const VerbsApi& api, const IbOptions& opts,
                                               const sock::SocketOptions& socket, std::string* why);
std::unique_ptr<Transport> open_transport_with(const VerbsApi& api, const IbOptions& opts,
                                               std::string* why);

}  // namespace squeeze::transport::ib
