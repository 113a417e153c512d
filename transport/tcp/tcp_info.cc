// Kept apart: <linux/tcp.h> (which has the fields we need) clashes with <netinet/tcp.h>.
#include "transport/tcp/tcp_info.h"

#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>

namespace squeeze::transport::tcp {

bool tcp_counters(int fd, TcpCounters* out) {
  struct tcp_info info {};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
  if (len < offsetof(tcp_info, tcpi_delivered) + sizeof(info.tcpi_delivered)) return false;
  if (info.tcpi_delivery_rate == 0) return false;  // nothing delivered yet
  out->bytes_acked = info.tcpi_bytes_acked;
  return true;
}

TcpBacklog tcp_backlog(int fd) {
  TcpBacklog b;
  b.busy = true;
  struct tcp_info info {};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
      len < offsetof(tcp_info, tcpi_notsent_bytes) + sizeof(info.tcpi_notsent_bytes))
    return b;
  b.busy = info.tcpi_notsent_bytes > 0;
  int queued = 0;  // unsent and unacknowledged bytes
  if (!b.busy || len < offsetof(tcp_info, tcpi_snd_wnd) + sizeof(info.tcpi_snd_wnd) ||
      ioctl(fd, SIOCOUTQ, &queued) != 0)
    return b;  // a kernel too old to report the peer's window (tcpi_snd_wnd): never "full"
  const uint64_t in_flight =
      static_cast<uint64_t>(queued) -
      std::min<uint64_t>(info.tcpi_notsent_bytes, static_cast<uint64_t>(queued));
  b.window_full = in_flight + info.tcpi_snd_mss >= info.tcpi_snd_wnd;
  return b;
}

}  // namespace squeeze::transport::tcp
