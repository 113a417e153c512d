// The line a TCP connection logs once it is made, on each end: how many data sockets and
// helper threads carry it and where those numbers came from, so a user who set
// NCCL_SOCKET_NTHREADS (or nothing) can see what Squeeze made of it.
#pragma once

#include <string>

#include "transport/tcp/stream_layout.h"
#include "transport/tcp/tcp_options.h"

namespace squeeze::transport::tcp {

// The connecting end, which chose `layout` from `o` for a link of `speed_mbps` (<= 0: unknown)
// and `cores` usable cores.
std::string connect_log_line(const std::string& peer, const StreamLayout& layout,
                             const TcpOptions& o, int speed_mbps, int cores);
// The accepting end, which uses what the connecting end announced in its hello.
std::string accept_log_line(const std::string& peer, int nsocks, int nthreads);

}  // namespace squeeze::transport::tcp
