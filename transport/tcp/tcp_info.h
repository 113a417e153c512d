// The kernel's own view of a TCP connection's delivery, for measuring the link.
#pragma once

#include <cstdint>

namespace squeeze::transport::tcp {

// TCP_INFO's delivery rate (bytes/s, the kernel's latest rate sample, microsecond timing) and
// whether that sample was application-limited (then it is only a lower bound on the link).
// False where the kernel does not report it.
bool tcp_delivery_rate(int fd, uint64_t* bytes_per_s, bool* app_limited);

}  // namespace squeeze::transport::tcp
