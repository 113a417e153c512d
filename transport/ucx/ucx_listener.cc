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
      return Status::Remote("UCX set-up socket with " + peer +
                            " closed before the worker address arrived" +
                            (io == Io::kError ? ": " + sock::errno_str(err) : std::string()));
    }
    if (std::string bad = hello->feed(buf, n); !bad.empty())
      return Status::Remote("UCX set-up message from " + peer + ": " + bad);
  }
  return Status::Ok();
}

Status write_some(int fd, const std::vector<uint8_t>& out, std::size_t* sent,
                  const std::string& peer, bool* closed) {
  *closed = false;
  while (*sent < out.size()) {
    iovec iov{const_cast<uint8_t*>(out.data()) + *sent, out.size() - *sent};
    std::size_t n = 0;
    int err = 0;
    Io io = sock::writev_once(fd, &iov, 1, &n, &err);
    if (io == Io::kWouldBlock) return Status::Ok();
    if (io != Io::kProgress) {
      *closed = true;
      return Status::Remote("UCX set-up socket with " + peer +
                            ": sending the worker address: " + sock::errno_str(err));
    }
    *sent += n;
  }
  return Status::Ok();
}

Status UcxListener::step(Pending& p, sock::Verdict* v) {
  const std::string peer = p.peer.str();
  bool closed = false;
  if (!p.session) {
    Status s = read_hello(p.fd.get(), &p.hello, peer, &closed);
    if (!s.ok()) {
      // Another version from a peer that holds the nonce is this job's own peer: say so.
      if (p.hello.genuine() && !closed) return s;
      *v = {sock::Verdict::kDrop,
            closed ? "closed before its hello was whole" : "not a hello for this listener"};
      return Status::Ok();
    }
    if (!p.hello.done()) {
      if (p.hello.genuine()) *v = {sock::Verdict::kGenuine, ""};
      return Status::Ok();
    }
    if (s = sessions_->acquire(&p.session); !s.ok()) return s;
    p.comm_id = p.session->next_comm_id();
    p.reply = encode_hello(kAcceptMagic, nonce_, p.comm_id, p.session->address());
  }
  if (Status s = write_some(p.fd.get(), p.reply, &p.sent, peer, &closed); !s.ok()) {
    *v = {sock::Verdict::kDrop, "went away before the answer was sent"};  // it reports that itself
    return Status::Ok();
  }
  *v = {p.sent == p.reply.size() ? sock::Verdict::kReady : sock::Verdict::kGenuine, ""};
  return Status::Ok();
}

Status UcxListener::accept(std::unique_ptr<RecvComm>* comm) {
  *comm = nullptr;
  std::unique_ptr<Pending> ready;
  Status s = pending_.poll(
      fd_.get(),
      [this](sock::Fd fd, const sock::SockAddr& peer) {
        return std::make_unique<Pending>(Pending{
            std::move(fd), peer, HelloReader(kConnectMagic, nonce_, false), nullptr, 0, {}, 0});
      },
      [this](Pending& p, sock::Verdict* v) { return step(p, v); }, &ready);
  if (!s.ok()) return s;
  if (ready) {
    const std::string peer = ready->peer.str();
    *comm = std::make_unique<UcxRecvComm>(
        std::make_unique<Channel>(std::move(ready->session), std::move(ready->fd), peer,
                                  ready->comm_id),
        stall_timeout_ms_);
  }
  return Status::Ok();
}

}  // namespace squeeze::transport::ucx
