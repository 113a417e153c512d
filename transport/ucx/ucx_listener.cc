#include <sys/socket.h>

#include <cerrno>

#include "transport/ucx/ucx_comm.h"
#include "transport/ucx/ucx_setup.h"

namespace squeeze::transport::ucx {

using sock::Io;

Status read_hello(int fd, HelloReader* hello, const std::string& peer, bool* closed) {
  *closed = false;
  uint8_t buf[4096];
  while (!hello->done()) {
    std::size_t n = 0;
    int err = 0;
    Io io = sock::read_once(fd, buf, std::min(sizeof(buf), hello->want()), &n, &err);
    if (io == Io::kWouldBlock) return Status::Ok();
    if (io != Io::kProgress) {
      *closed = true;
      return Status::Remote("UCX set-up socket with " + peer + " closed before the worker address arrived" +
                            (io == Io::kError ? ": " + sock::errno_str(err) : std::string()));
    }
    if (std::string bad = hello->feed(buf, n); !bad.empty())
      return Status::Remote("UCX set-up message from " + peer + ": " + bad);
  }
  return Status::Ok();
}

Status write_some(int fd, const std::vector<uint8_t>& out, std::size_t* sent, const std::string& peer, bool* closed) {
  *closed = false;
  while (*sent < out.size()) {
    iovec iov{const_cast<uint8_t*>(out.data()) + *sent, out.size() - *sent};
    std::size_t n = 0;
    int err = 0;
    Io io = sock::writev_once(fd, &iov, 1, &n, &err);
    if (io == Io::kWouldBlock) return Status::Ok();
    if (io != Io::kProgress) {
      *closed = true;
      return Status::Remote("UCX set-up socket with " + peer + ": sending the worker address: " + sock::errno_str(err));
    }
    *sent += n;
  }
  return Status::Ok();
}

Status UcxListener::step(Pending& p, bool* drop, std::unique_ptr<RecvComm>* comm) {
  *drop = false;
  const std::string peer = p.peer.str();
  bool closed = false;
  if (!p.session) {
    Status s = read_hello(p.fd.get(), &p.hello, peer, &closed);
    if (!s.ok()) {  // a stray or stale connection: drop it, keep listening
      *drop = true;
      return Status::Ok();
    }
    if (!p.hello.done()) return Status::Ok();
    if (s = sessions_->acquire(&p.session); !s.ok()) return s;
    p.comm_id = p.session->next_comm_id();
    p.reply = encode_hello(kAcceptMagic, nonce_, p.comm_id, p.session->address());
  }
  if (Status s = write_some(p.fd.get(), p.reply, &p.sent, peer, &closed); !s.ok()) {
    *drop = true;  // the connecting side went away; it reports that itself
    return Status::Ok();
  }
  if (p.sent == p.reply.size())
    *comm = std::make_unique<UcxRecvComm>(
        std::make_unique<Channel>(std::move(p.session), std::move(p.fd), peer, p.comm_id));
  return Status::Ok();
}

Status UcxListener::accept(std::unique_ptr<RecvComm>* comm) {
  *comm = nullptr;
  for (;;) {  // take every connection the kernel has queued
    sock::SockAddr peer;
    peer.len = sizeof(peer.storage);
    int fd = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&peer.storage), &peer.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return Status::System("accept on " + where_ + ": " + sock::errno_str(errno));
    }
    pending_.push_back(Pending{sock::Fd(fd), peer, HelloReader(kConnectMagic, nonce_, false), nullptr, 0, {}, 0});
    if (Status s = sock::configure_data_socket(fd, socket_); !s.ok()) {
      pending_.pop_back();
      return s;
    }
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    bool drop = false;
    Status s = step(pending_[i], &drop, comm);
    if (!s.ok() || drop || *comm) {
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      return s;
    }
  }
  return Status::Ok();
}

}  // namespace squeeze::transport::ucx
