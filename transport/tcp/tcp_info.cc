// Kept apart: <linux/tcp.h> (which has the fields we need) clashes with <netinet/tcp.h>.
#include "transport/tcp/tcp_info.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace squeeze::transport::tcp {

bool tcp_delivery_counters(int fd, uint64_t* bytes_acked, uint64_t* busy_us) {
  struct tcp_info info {};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
  if (len < offsetof(tcp_info, tcpi_busy_time) + sizeof(info.tcpi_busy_time)) return false;
  *bytes_acked = info.tcpi_bytes_acked;
  *busy_us = info.tcpi_busy_time;
  return true;
}

}  // namespace squeeze::transport::tcp
