// Kept apart: <linux/tcp.h> (which has the fields we need) clashes with <netinet/tcp.h>.
#include "transport/tcp/tcp_info.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace squeeze::transport::tcp {

bool tcp_counters(int fd, TcpCounters* out) {
  struct tcp_info info {};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
  if (len < offsetof(tcp_info, tcpi_delivered) + sizeof(info.tcpi_delivered)) return false;
  if (info.tcpi_delivery_rate == 0) return false;  // nothing delivered yet
  out->bytes_acked = info.tcpi_bytes_acked;
  out->busy_us = info.tcpi_busy_time;
  out->rwnd_limited_us = info.tcpi_rwnd_limited;
  out->sndbuf_limited_us = info.tcpi_sndbuf_limited;
  return true;
}

}  // namespace squeeze::transport::tcp
