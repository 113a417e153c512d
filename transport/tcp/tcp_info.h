// The kernel's own counters of a TCP connection's delivery, for measuring the link.
#pragma once

#include <cstdint>

namespace squeeze::transport::tcp {

struct TcpCounters {
  uint64_t bytes_acked = 0;  // cumulative
  // Cumulative microseconds: with data in flight, and of those, limited by the receiver's
  // window or by the send buffer (the kernel's chrono counters, Linux 4.10+).
  uint64_t busy_us = 0, rwnd_limited_us = 0, sndbuf_limited_us = 0;
};

// TCP_INFO's counters. False where the kernel's TCP_INFO is older than Linux 4.18, or before
// the connection has delivered anything (no delivery-rate sample yet).
bool tcp_counters(int fd, TcpCounters* out);

}  // namespace squeeze::transport::tcp
