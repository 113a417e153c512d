#include "transport/ib/ib_connect.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "transport/ib/ib_handshake.h"
#include "transport/ib/ib_recv_comm.h"
#include "transport/ib/ib_send_comm.h"

namespace squeeze::transport::ib {

namespace {

enum class Move { kDone, kPending, kClosed };

// Moves the rest of a fixed-size message over a non-blocking socket.
Status oob_move(bool write, int fd, uint8_t* buf, std::size_t len, std::size_t* done, const std::string& what,
                Move* result) {
  while (*done < len) {
    std::size_t n = 0;
    int err = 0;
    sock::Io io;
    if (write) {
      iovec iov{buf + *done, len - *done};
      io = sock::writev_once(fd, &iov, 1, &n, &err);
    } else {
      io = sock::read_once(fd, buf + *done, len - *done, &n, &err);
    }
    if (io == sock::Io::kWouldBlock) {
      *result = Move::kPending;
      return Status::Ok();
    }
    if (io == sock::Io::kClosed) {
      *result = Move::kClosed;
      return Status::Remote("peer closed the connection during " + what);
    }
    if (io == sock::Io::kError) return Status::Remote(what + ": " + sock::errno_str(err));
    *done += n;
  }
  *result = Move::kDone;
  return Status::Ok();
}

uint64_t random_nonce() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

class IbListener final : public Listener {
 public:
  IbListener(std::shared_ptr<IbDevice> dev, const IbOptions& opts, const sock::SocketOptions& socket, sock::Fd fd,
             uint64_t nonce, std::string where)
      : dev_(std::move(dev)), opts_(opts), socket_(socket), fd_(std::move(fd)), nonce_(nonce), where_(std::move(where)) {}
  Status accept(std::unique_ptr<RecvComm>* comm) override;

 private:
  enum class Step { kRecvInfo, kSendInfo, kRecvReady };
  struct Pending {
    sock::Fd fd;
    sock::SockAddr peer;
    Step step = Step::kRecvInfo;
    uint8_t buf[kConnInfoBytes];
    std::size_t done = 0;
    std::unique_ptr<IbRecvComm> comm;
  };
  // Advances one pending connection. *drop: a stray or dead connection, forget it.
  Status advance(Pending& p, std::unique_ptr<RecvComm>* comm, bool* drop);
  std::shared_ptr<IbDevice> dev_;
  IbOptions opts_;
  sock::SocketOptions socket_;
  sock::Fd fd_;
  uint64_t nonce_;
  std::string where_;
  std::vector<std::unique_ptr<Pending>> pending_;
};

Status IbListener::advance(Pending& p, std::unique_ptr<RecvComm>* comm, bool* drop) {
  const std::string peer = p.peer.str();
  Move m = Move::kDone;
  if (p.step == Step::kRecvInfo) {
    Status s = oob_move(false, p.fd.get(), p.buf, kConnInfoBytes, &p.done, "queue-pair exchange", &m);
    if (m == Move::kClosed || (!s.ok() && p.done < 16)) *drop = true;  // gone before saying anything
    if (*drop || m == Move::kPending) return Status::Ok();
    if (!s.ok()) return s;
    if (!conn_info_is_for(p.buf, nonce_)) {
      *drop = true;  // a stray or stale connection
      return Status::Ok();
    }
    ConnInfo remote;
    if (std::string bad = parse_conn_info(p.buf, kConnInfoBytes, &remote); !bad.empty())
      return Status::Remote("peer " + peer + " sent bad " + bad + " (listener " + where_ + ")");
    if (remote.role != Role::kSender) return Status::Remote("peer " + peer + " sent queue-pair info of a receiver");
    p.comm = std::make_unique<IbRecvComm>(dev_, opts_);
    if (Status e = p.comm->create(remote); !e.ok()) return e;
    ConnInfo mine;
    p.comm->local_info(nonce_, &mine);
    encode_conn_info(mine, p.buf);
    p.done = 0;
    p.step = Step::kSendInfo;
  }
  if (p.step == Step::kSendInfo) {
    Status s = oob_move(true, p.fd.get(), p.buf, kConnInfoBytes, &p.done, "queue-pair exchange with " + peer, &m);
    if (m == Move::kClosed) *drop = true;
    if (*drop || m == Move::kPending) return Status::Ok();
    if (!s.ok()) return s;
    p.done = 0;
    p.step = Step::kRecvReady;
  }
  Status s = oob_move(false, p.fd.get(), p.buf, kReadyBytes, &p.done, "queue-pair exchange with " + peer, &m);
  if (m == Move::kClosed) *drop = true;
  if (*drop || m == Move::kPending) return Status::Ok();
  if (!s.ok()) return s;
  if (std::string bad = parse_ready(p.buf, nonce_); !bad.empty()) return Status::Remote("peer " + peer + " sent a bad " + bad);
  p.comm->attach_oob(std::move(p.fd), peer);
  *comm = std::move(p.comm);
  return Status::Ok();
}

Status IbListener::accept(std::unique_ptr<RecvComm>* comm) {
  *comm = nullptr;
  for (;;) {
    auto p = std::make_unique<Pending>();
    p->peer.len = sizeof(p->peer.storage);
    int fd = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&p->peer.storage), &p->peer.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return Status::System("accept on " + where_ + ": " + sock::errno_str(errno));
    }
    p->fd = sock::Fd(fd);
    if (Status s = sock::configure_data_socket(fd, socket_); !s.ok()) return s;
    pending_.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < pending_.size();) {
    bool drop = false;
    Status s = advance(*pending_[i], comm, &drop);
    if (!s.ok() || drop || *comm) {
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      if (!s.ok() || *comm) return s;
      continue;
    }
    ++i;
  }
  return Status::Ok();
}

// The connecting side's state, owned through the handle's stage slot between calls.
struct Connecting {
  enum class Step { kTcp, kSendInfo, kRecvInfo, kSendReady } step = Step::kTcp;
  sock::Fd fd;
  sock::SockAddr peer;
  uint64_t nonce = 0;
  std::unique_ptr<IbSendComm> comm;
  uint8_t buf[kConnInfoBytes];
  std::size_t done = 0;
};

Connecting* stage_of(void* handle) {
  Connecting* c = nullptr;
  std::memcpy(&c, static_cast<uint8_t*>(handle) + kHandleStageOffset, sizeof(c));
  return c;
}
void set_stage(void* handle, Connecting* c) { std::memcpy(static_cast<uint8_t*>(handle) + kHandleStageOffset, &c, sizeof(c)); }

}  // namespace

Status ib_listen(std::shared_ptr<IbDevice> dev, const IbOptions& opts, const sock::SocketOptions& socket,
                 const sock::SockAddr& bind_to, void* handle, std::unique_ptr<Listener>* listener) {
  sock::Fd fd;
  sock::SockAddr addr;
  if (Status s = sock::listen_on(bind_to, "the ib control listener", &fd, &addr); !s.ok()) return s;
  IbHandle h{addr, random_nonce()};
  write_handle(h, handle);
  *listener = std::make_unique<IbListener>(std::move(dev), opts, socket, std::move(fd), h.nonce, addr.str());
  return Status::Ok();
}

Status ib_connect(std::shared_ptr<IbDevice> dev, const IbOptions& opts, const sock::SocketOptions& socket, void* handle,
                  std::unique_ptr<SendComm>* comm) {
  *comm = nullptr;
  Connecting* c = stage_of(handle);
  if (c == nullptr) {
    IbHandle h;
    if (std::string bad = read_handle(handle, &h); !bad.empty()) return Status::Usage("connect: " + bad);
    auto fresh = std::make_unique<Connecting>();
    fresh->peer = h.addr;
    fresh->nonce = h.nonce;
    fresh->fd = sock::Fd(::socket(h.addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fresh->fd.valid()) return Status::System("socket(): " + sock::errno_str(errno));
    if (Status s = sock::configure_data_socket(fresh->fd.get(), socket); !s.ok()) return s;
    int r = ::connect(fresh->fd.get(), reinterpret_cast<const sockaddr*>(&h.addr.storage), h.addr.len);
    if (r != 0 && errno != EINPROGRESS) return Status::Remote("connect to " + h.addr.str() + ": " + sock::errno_str(errno));
    c = fresh.release();
    set_stage(handle, c);
  }
  std::unique_ptr<Connecting> owned(c);  // freed on every exit unless handed back
  const std::string peer = c->peer.str();
  auto fail = [&](Status s) {
    set_stage(handle, nullptr);
    return s;
  };
  auto later = [&]() {
    owned.release();
    return Status::Ok();
  };
  Move m = Move::kDone;
  if (c->step == Connecting::Step::kTcp) {
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(c->fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) return fail(Status::Remote("connect to " + peer + ": " + sock::errno_str(err)));
    sockaddr_storage ss{};
    socklen_t sl = sizeof(ss);
    if (getpeername(c->fd.get(), reinterpret_cast<sockaddr*>(&ss), &sl) != 0) {
      if (errno == ENOTCONN) return later();
      return fail(Status::Remote("connect to " + peer + ": " + sock::errno_str(errno)));
    }
    c->comm = std::make_unique<IbSendComm>(dev, opts);
    if (Status s = c->comm->create(); !s.ok()) return fail(s);
    ConnInfo mine;
    c->comm->local_info(c->nonce, &mine);
    encode_conn_info(mine, c->buf);
    c->done = 0;
    c->step = Connecting::Step::kSendInfo;
  }
  if (c->step == Connecting::Step::kSendInfo) {
    Status s = oob_move(true, c->fd.get(), c->buf, kConnInfoBytes, &c->done, "queue-pair exchange with " + peer, &m);
    if (!s.ok()) return fail(s);
    if (m == Move::kPending) return later();
    c->done = 0;
    c->step = Connecting::Step::kRecvInfo;
  }
  if (c->step == Connecting::Step::kRecvInfo) {
    Status s = oob_move(false, c->fd.get(), c->buf, kConnInfoBytes, &c->done, "queue-pair exchange with " + peer, &m);
    if (!s.ok()) return fail(s);
    if (m == Move::kPending) return later();
    ConnInfo remote;
    if (std::string bad = parse_conn_info(c->buf, kConnInfoBytes, &remote); !bad.empty())
      return fail(Status::Remote("peer " + peer + " sent bad " + bad));
    if (remote.role != Role::kReceiver || remote.nonce != c->nonce)
      return fail(Status::Remote("peer " + peer + " answered with queue-pair info for another connection"));
    if (Status e = c->comm->connect(remote); !e.ok()) return fail(e);
    encode_ready(c->nonce, c->buf);
    c->done = 0;
    c->step = Connecting::Step::kSendReady;
  }
  Status s = oob_move(true, c->fd.get(), c->buf, kReadyBytes, &c->done, "queue-pair exchange with " + peer, &m);
  if (!s.ok()) return fail(s);
  if (m == Move::kPending) return later();
  c->comm->attach_oob(std::move(c->fd), peer);
  *comm = std::move(c->comm);
  set_stage(handle, nullptr);
  return Status::Ok();
}

}  // namespace squeeze::transport::ib
