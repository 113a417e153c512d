// The UCX transport: ucp tag messages on one worker per process shared by all comms
// (ucx_session.h), reached through dlopen so the plugin loads and works without UCX
// (ucx_library.h). Set-up swaps worker addresses over
// a TCP socket on the device's interface (ucx_setup.h); data goes over whatever UCX selects
// (UCX_TLS, UCX_NET_DEVICES: tcp and shm here, IB/RoCE elsewhere). Host memory only.
#pragma once

#include <memory>
#include <string>

#include "transport/socket/socket_options.h"
#include "transport/transport.h"
#include "transport/ucx/ucx_options.h"

namespace squeeze::transport::ucx {

// Loads libucp (ucx.library) and tries a UCX context and worker; connections are set up over
// the first interface `socket` picks, with its socket options. Returns null with *why (one
// sentence) when UCX cannot be used here.
std::unique_ptr<Transport> open_transport(const UcxOptions& ucx, const sock::SocketOptions& socket,
                                          std::string* why);

}  // namespace squeeze::transport::ucx
