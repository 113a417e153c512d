// Kept apart: <linux/tcp.h> (which has the fields we need) clashes with <netinet/tcp.h>.
#include "transport/tcp/tcp_info.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace squeeze::transport::tcp {

bool tcp_delivery_rate(int fd, uint64_t* bytes_per_s, bool* app_limited) {
  struct tcp_info info {};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
  if (len < offsetof(tcp_info, tcpi_delivery_rate) + sizeof(info.tcpi_delivery_rate)) return false;
  if (info.tcpi_delivery_rate == 0) return false;  // no sample yet
  *bytes_per_s = info.tcpi_delivery_rate;
  *app_limited = info.tcpi_delivery_rate_app_limited != 0;
  return true;
}

}  // namespace squeeze::transport::tcp
