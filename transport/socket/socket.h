// Small RAII and non-blocking helpers over BSD sockets, shared by the transports: TCP's data
// sockets, and the set-up and liveness sockets of UCX and verbs. (The namespace is `sock`, not
// `socket`, so that it never hides ::socket() from code inside squeeze::transport.)
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/socket/socket_options.h"
#include "transport/status.h"

namespace squeeze::transport::sock {

// Owns a file descriptor; closes it once.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
};

// An IPv4 or IPv6 socket address.
struct SockAddr {
  sockaddr_storage storage{};
  socklen_t len = 0;
  int family() const { return storage.ss_family; }
  uint16_t port() const;
  void set_port(uint16_t port);
  std::string str() const;  // "1.2.3.4:5678" or "[::1]:5678"
};

// Options every data socket gets: non-blocking, close-on-exec, TCP_NODELAY, keepalive and
// a user timeout (from `options`) so that a vanished peer turns into an error within seconds.
Status configure_data_socket(int fd, const SocketOptions& options);
Status set_nonblocking(int fd);
// The kernel's pacing cap for a TCP socket (SO_MAX_PACING_RATE, bytes per second; Linux paces
// TCP itself since 4.13, no fq qdisc needed). 0 leaves the socket unpaced. Rates above 2^32-1
// B/s need the 64-bit option of Linux 5.x; an older kernel gets an error that says so.
Status set_max_pacing_rate(int fd, uint64_t bytes_per_s);
// What SO_MAX_PACING_RATE holds now (~0 = unpaced).
Status max_pacing_rate(int fd, uint64_t* bytes_per_s);

// Outcome of one non-blocking transfer attempt.
enum class Io { kProgress, kWouldBlock, kClosed, kError };
// writev/readv once; *n = bytes moved. kClosed = orderly EOF from peer.
Io writev_once(int fd, const iovec* iov, int iovcnt, std::size_t* n, int* err);
Io read_once(int fd, void* buf, std::size_t len, std::size_t* n, int* err);

std::string errno_str(int err);

// A non-blocking listening socket bound to `bind_to` (port 0: any); *bound gets the address
// it is listening on. `what` names it in the socket() error ("socket() for <what>: ...").
Status listen_on(const SockAddr& bind_to, const std::string& what, Fd* fd, SockAddr* bound);

}  // namespace squeeze::transport::sock
