// The kernel's own view of a TCP connection's delivery, for measuring the link.
#pragma once

#include <cstdint>

namespace squeeze::transport::tcp {

// Cumulative bytes the peer acknowledged and microseconds the connection was busy sending
// (data in flight), from TCP_INFO. False where the kernel does not report them.
bool tcp_delivery_counters(int fd, uint64_t* bytes_acked, uint64_t* busy_us);

}  // namespace squeeze::transport::tcp
