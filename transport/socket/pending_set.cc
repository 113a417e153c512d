#include "transport/socket/pending_set.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdio>

namespace squeeze::transport::sock {

AcceptResult accept_one(int listen_fd, Fd* fd, SockAddr* peer, int* err) {
  for (;;) {
    peer->len = sizeof(peer->storage);
    const int got = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer->storage), &peer->len,
                              SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (got >= 0) {
      *fd = Fd(got);
      return AcceptResult::kConnection;
    }
    *err = errno;
    switch (*err) {
      case EAGAIN:
#if EWOULDBLOCK != EAGAIN
      case EWOULDBLOCK:
#endif
        return AcceptResult::kEmpty;
      case EMFILE:
      case ENFILE:
      case ENOBUFS:
      case ENOMEM: return AcceptResult::kShort;
      // A connection that failed between SYN and accept, or that a firewall refused: Linux
      // reports the pending connection's own network error here. Take the next one.
      case EINTR:
      case ECONNABORTED:
      case EPROTO:
      case EPERM:
      case ENETDOWN:
      case ENOPROTOOPT:
      case EHOSTDOWN:
      case ENONET:
      case EHOSTUNREACH:
      case EOPNOTSUPP:
      case ENETUNREACH:
      case ETIMEDOUT: continue;
      default: return AcceptResult::kFatal;
    }
  }
}

void log_to(const SocketOptions& options, bool warn, const std::string& message) {
  if (options.log != nullptr) {
    options.log(warn, message.c_str());
  } else if (warn) {
    std::fprintf(stderr, "NET/Squeeze: %s\n", message.c_str());
  }
}

}  // namespace squeeze::transport::sock
