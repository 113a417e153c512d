#include "transport/socket/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace squeeze::transport::sock {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

uint16_t SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
}

void SockAddr::set_port(uint16_t p) {
  if (family() == AF_INET)
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(p);
  else
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(p);
}

std::string SockAddr::str() const {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, buf, sizeof(buf));
    return std::string(buf) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, buf,
              sizeof(buf));
    std::string s = "[";
    s += buf;
    s += "]:";
    s += std::to_string(port());
    return s;
  }
  return "<unknown address family " + std::to_string(family()) + ">";
}

std::string errno_str(int err) {
  return std::string(strerror(err)) + " (errno " + std::to_string(err) + ")";
}

Status set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return Status::System("fcntl(O_NONBLOCK) on fd " + std::to_string(fd) + ": " +
                          errno_str(errno));
  return Status::Ok();
}

Status configure_data_socket(int fd, const SocketOptions& options) {
  if (Status s = set_nonblocking(fd); !s.ok()) return s;
  int one = 1;
  // Peer-death detection: unacknowledged data times out after user_timeout_ms, an idle
  // peer that vanished is found by keepalive probes after a few seconds.
  int user_timeout = options.user_timeout_ms, idle = options.keepidle_s, intvl = 1, cnt = 5;
  struct Opt {
    int level, name;
    const void* val;
    const char* what;
  } opts[] = {
      {IPPROTO_TCP, TCP_NODELAY, &one, "TCP_NODELAY"},
      {SOL_SOCKET, SO_KEEPALIVE, &one, "SO_KEEPALIVE"},
      {IPPROTO_TCP, TCP_KEEPIDLE, &idle, "TCP_KEEPIDLE"},
      {IPPROTO_TCP, TCP_KEEPINTVL, &intvl, "TCP_KEEPINTVL"},
      {IPPROTO_TCP, TCP_KEEPCNT, &cnt, "TCP_KEEPCNT"},
      {IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, "TCP_USER_TIMEOUT"},
  };
  for (const Opt& o : opts) {
    if (setsockopt(fd, o.level, o.name, o.val, sizeof(int)) != 0)
      return Status::System(std::string("setsockopt(") + o.what + ") on fd " + std::to_string(fd) +
                            ": " + errno_str(errno));
  }
  return Status::Ok();
}

Status set_max_pacing_rate(int fd, uint64_t bytes_per_s) {
  if (bytes_per_s == 0) return Status::Ok();
  const uint64_t rate = bytes_per_s;
  if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate) == 0) return Status::Ok();
  const int err64 = errno;
  if (rate <= UINT32_MAX) {  // kernels before the 64-bit option take a 32-bit rate
    const auto rate32 = static_cast<uint32_t>(rate);
    if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate32, sizeof rate32) == 0)
      return Status::Ok();
  }
  return Status::System("setsockopt(SO_MAX_PACING_RATE, " + std::to_string(rate) + " B/s) on fd " +
                        std::to_string(fd) + ": " + errno_str(err64));
}

Status max_pacing_rate(int fd, uint64_t* bytes_per_s) {
  uint64_t rate = 0;
  socklen_t len = sizeof rate;
  if (getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, &len) != 0)
    return Status::System("getsockopt(SO_MAX_PACING_RATE) on fd " + std::to_string(fd) + ": " +
                          errno_str(errno));
  if (len == sizeof(uint32_t)) {
    uint32_t r32 = 0;
    std::memcpy(&r32, &rate, sizeof r32);
    rate = r32 == UINT32_MAX ? ~uint64_t{0} : r32;
  }
  *bytes_per_s = rate;
  return Status::Ok();
}

Io writev_once(int fd, const iovec* iov, int iovcnt, std::size_t* n, int* err) {
  *n = 0;
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = static_cast<std::size_t>(iovcnt);
  for (;;) {
    ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r >= 0) {
      *n = static_cast<std::size_t>(r);
      return Io::kProgress;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::kWouldBlock;
    *err = errno;
    return (errno == EPIPE || errno == ECONNRESET) ? Io::kClosed : Io::kError;
  }
}

Io read_once(int fd, void* buf, std::size_t len, std::size_t* n, int* err) {
  *n = 0;
  for (;;) {
    ssize_t r = ::recv(fd, buf, len, MSG_DONTWAIT);
    if (r > 0) {
      *n = static_cast<std::size_t>(r);
      return Io::kProgress;
    }
    if (r == 0) return len == 0 ? Io::kProgress : Io::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::kWouldBlock;
    *err = errno;
    return errno == ECONNRESET ? Io::kClosed : Io::kError;
  }
}

Status listen_on(const SockAddr& bind_to, const std::string& what, Fd* fd, SockAddr* bound) {
  SockAddr addr = bind_to;
  Fd f(::socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!f.valid()) return Status::System("socket() for " + what + ": " + errno_str(errno));
  int one = 1;
  setsockopt(f.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(f.get(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.len) != 0)
    return Status::System("bind to " + addr.str() + ": " + errno_str(errno));
  if (::listen(f.get(), 16384) != 0)
    return Status::System("listen on " + addr.str() + ": " + errno_str(errno));
  addr.len = sizeof(addr.storage);
  if (getsockname(f.get(), reinterpret_cast<sockaddr*>(&addr.storage), &addr.len) != 0)
    return Status::System("getsockname: " + errno_str(errno));
  *fd = std::move(f);
  *bound = addr;
  return Status::Ok();
}

}  // namespace squeeze::transport::sock
