// The kernel's own counters of a TCP connection's delivery, for measuring the link.
#pragma once

#include <cstdint>

namespace squeeze::transport::tcp {

struct TcpCounters {
  uint64_t bytes_acked = 0;  // cumulative
};

// TCP_INFO's counters. False where the kernel's TCP_INFO is older than Linux 4.18, or before
// the connection has delivered anything (no delivery-rate sample yet).
bool tcp_counters(int fd, TcpCounters* out);

// What the socket holds of the bytes written to it. The link is busy while some are unsent:
// the network (or the receiver) cannot take them yet. Not while the last bytes wait for a
// delayed ACK, which on loopback is most of the time; counting bytes in flight beyond a few
// segments as busy too was tried and read loopback as slow again. The receiver's window is
// full when the bytes in flight fill what it advertised: then a slow reader holds them.
struct TcpBacklog {
  bool busy = false;
  bool window_full = false;
};
// Unknown (an old kernel, a closed socket): busy, so that a busy spell is never cut short.
TcpBacklog tcp_backlog(int fd);

}  // namespace squeeze::transport::tcp
