// The kernel's own view of a TCP connection's delivery, for measuring the link.
#pragma once

#include <cstdint>

namespace squeeze::transport::tcp {

struct TcpRate {
  uint64_t bytes_per_s = 0;  // the kernel's latest rate sample, microsecond timing
  bool app_limited = false;  // that sample was application-limited: only a lower bound on the link
  uint64_t delivered = 0;    // packets delivered so far (a new value means a new sample)
  uint64_t bytes_acked = 0;  // cumulative
  // Cumulative microseconds: with data in flight, and of those, limited by the receiver's
  // window or by the send buffer (the kernel's chrono counters, Linux 4.10+).
  uint64_t busy_us = 0, rwnd_limited_us = 0, sndbuf_limited_us = 0;
};

// TCP_INFO's delivery rate. False where the kernel does not report it (before Linux 4.18) or
// has no sample yet.
bool tcp_delivery_rate(int fd, TcpRate* out);

}  // namespace squeeze::transport::tcp
