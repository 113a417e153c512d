#include "transport/ib/ib_connect.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "compress/byte_io.h"
#include "transport/ib/ib_handshake.h"
#include "transport/ib/ib_recv_comm.h"
#include "transport/ib/ib_send_comm.h"
#include "transport/socket/nonce.h"
#include "transport/socket/pending_set.h"

namespace squeeze::transport::ib {

namespace {

enum class Move { kDone, kPending, kClosed };

// Moves the rest of a fixed-size message over a non-blocking socket.
Status oob_move(bool write, int fd, uint8_t* buf, std::size_t len, std::size_t* done,
                const std::string& what, Move* result) {
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

class IbListener final : public Listener {
 public:
  IbListener(std::shared_ptr<IbDevice> dev, const IbOptions& opts,
             const sock::SocketOptions& socket, sock::Fd fd, uint64_t nonce,
             const std::string& where)
      : dev_(std::move(dev)),
        opts_(opts),
        fd_(std::move(fd)),
        nonce_(nonce),
        where_(where),
        stall_timeout_ms_(socket.stall_timeout_ms),
        pending_("ib control listener " + where, socket) {}
  Status accept(std::unique_ptr<RecvComm>* comm) override;

 private:
  enum class Step { kRecvInfo, kSendInfo, kRecvReady };
  struct Pending {
    sock::Fd fd;
    sock::SockAddr peer;
    Step step = Step::kRecvInfo;
    uint8_t buf[kConnInfoBytes];
    std::size_t done = 0;
    bool genuine = false;  // its magic and nonce are this listener's
    std::unique_ptr<IbRecvComm> comm;
  };
  // Advances one pending connection.
  Status step(Pending& p, sock::Verdict* v);
  std::shared_ptr<IbDevice> dev_;
  IbOptions opts_;
  sock::Fd fd_;
  uint64_t nonce_;
  std::string where_;
  int stall_timeout_ms_;  // each receive comm's (stall_watch.h)
  sock::PendingSet<Pending> pending_;
};

// The bytes of queue-pair info that say whom it is for: magic (0..3), version (4..5), nonce
// (8..15). The listener judges a connection by them as soon as they are in, before the rest.
constexpr std::size_t kInfoGateBytes = 16;

Status IbListener::step(Pending& p, sock::Verdict* v) {
  const std::string peer = p.peer.str();
  Move m = Move::kDone;
  if (p.step == Step::kRecvInfo) {
    Status s =
        oob_move(false, p.fd.get(), p.buf, kConnInfoBytes, &p.done, "queue-pair exchange", &m);
    if (!p.genuine && p.done >= kInfoGateBytes) {
      if (!conn_info_is_for(p.buf, nonce_)) {
        *v = {sock::Verdict::kDrop, "queue-pair info with another magic or nonce"};
        return Status::Ok();
      }
      p.genuine = true;
      if (compress::load_le16(p.buf + 4) != kIbWireVersion)
        return Status::Remote("peer " + peer + " speaks Squeeze ib wire version " +
                              std::to_string(compress::load_le16(p.buf + 4)) + "; this listener (" +
                              where_ + ") speaks version " + std::to_string(kIbWireVersion));
    }
    if (m == Move::kClosed || (!s.ok() && !p.genuine)) {  // gone, or a stray gone before its nonce
      *v = {sock::Verdict::kDrop, p.genuine ? "closed during the queue-pair exchange"
                                            : "closed or failed before its nonce"};
      return Status::Ok();
    }
    if (!s.ok()) return s;
    if (m == Move::kPending) {
      *v = {p.genuine ? sock::Verdict::kGenuine : sock::Verdict::kWait, ""};
      return Status::Ok();
    }
    ConnInfo remote;
    if (std::string bad = parse_conn_info(p.buf, kConnInfoBytes, &remote); !bad.empty())
      return Status::Remote("peer " + peer + " sent bad " + bad + " (listener " + where_ + ")");
    if (remote.role != Role::kSender)
      return Status::Remote("peer " + peer + " sent queue-pair info of a receiver");
    p.comm = std::make_unique<IbRecvComm>(dev_, opts_, stall_timeout_ms_);
    if (Status e = p.comm->create(remote); !e.ok()) return e;
    ConnInfo mine;
    p.comm->local_info(nonce_, &mine);
    encode_conn_info(mine, p.buf);
    p.done = 0;
    p.step = Step::kSendInfo;
  }
  *v = {sock::Verdict::kGenuine, ""};
  if (p.step == Step::kSendInfo) {
    Status s = oob_move(true, p.fd.get(), p.buf, kConnInfoBytes, &p.done,
                        "queue-pair exchange with " + peer, &m);
    if (m == Move::kClosed) *v = {sock::Verdict::kDrop, "closed during the queue-pair exchange"};
    if (m == Move::kClosed || m == Move::kPending) return Status::Ok();
    if (!s.ok()) return s;
    p.done = 0;
    p.step = Step::kRecvReady;
  }
  Status s = oob_move(false, p.fd.get(), p.buf, kReadyBytes, &p.done,
                      "queue-pair exchange with " + peer, &m);
  if (m == Move::kClosed) *v = {sock::Verdict::kDrop, "closed during the queue-pair exchange"};
  if (m == Move::kClosed || m == Move::kPending) return Status::Ok();
  if (!s.ok()) return s;
  if (std::string bad = parse_ready(p.buf, nonce_); !bad.empty())
    return Status::Remote("peer " + peer + " sent a bad " + bad);
  *v = {sock::Verdict::kReady, ""};
  return Status::Ok();
}

Status IbListener::accept(std::unique_ptr<RecvComm>* comm) {
  *comm = nullptr;
  std::unique_ptr<Pending> ready;
  Status s = pending_.poll(
      fd_.get(),
      [](sock::Fd fd, const sock::SockAddr& peer) {
        auto p = std::make_unique<Pending>();
        p->fd = std::move(fd);
        p->peer = peer;
        return p;
      },
      [this](Pending& p, sock::Verdict* v) { return step(p, v); }, &ready);
  if (!s.ok()) return s;
  if (ready) {
    ready->comm->attach_oob(std::move(ready->fd), ready->peer.str());
    *comm = std::move(ready->comm);
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
void set_stage(void* handle, Connecting* c) {
  std::memcpy(static_cast<uint8_t*>(handle) + kHandleStageOffset, &c, sizeof(c));
}

}  // namespace

Status ib_listen(std::shared_ptr<IbDevice> dev, const IbOptions& opts,
                 const sock::SocketOptions& socket, const sock::SockAddr& bind_to, void* handle,
                 std::unique_ptr<Listener>* listener) {
  sock::Fd fd;
  sock::SockAddr addr;
  if (Status s = sock::listen_on(bind_to, "the ib control listener", &fd, &addr); !s.ok()) return s;
  IbHandle h{addr, 0};
  if (Status s = sock::random_nonce(&h.nonce); !s.ok()) return s;
  write_handle(h, handle);
  *listener = std::make_unique<IbListener>(std::move(dev), opts, socket, std::move(fd), h.nonce,
                                           addr.str());
  return Status::Ok();
}

Status ib_connect(std::shared_ptr<IbDevice> dev, const IbOptions& opts,
                  const sock::SocketOptions& socket, void* handle,
                  std::unique_ptr<SendComm>* comm) {
  *comm = nullptr;
  Connecting* c = stage_of(handle);
  if (c == nullptr) {
    IbHandle h;
    if (std::string bad = read_handle(handle, &h); !bad.empty())
      return Status::Usage("connect: " + bad);
    auto fresh = std::make_unique<Connecting>();
    fresh->peer = h.addr;
    fresh->nonce = h.nonce;
    fresh->fd = sock::Fd(::socket(h.addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fresh->fd.valid()) return Status::System("socket(): " + sock::errno_str(errno));
    if (Status s = sock::configure_data_socket(fresh->fd.get(), socket); !s.ok()) return s;
    int r =
        ::connect(fresh->fd.get(), reinterpret_cast<const sockaddr*>(&h.addr.storage), h.addr.len);
    if (r != 0 && errno != EINPROGRESS)
      return Status::Remote("connect to " + h.addr.str() + ": " + sock::errno_str(errno));
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
    Status s = oob_move(true, c->fd.get(), c->buf, kConnInfoBytes, &c->done,
                        "queue-pair exchange with " + peer, &m);
    if (!s.ok()) return fail(s);
    if (m == Move::kPending) return later();
    c->done = 0;
    c->step = Connecting::Step::kRecvInfo;
  }
  if (c->step == Connecting::Step::kRecvInfo) {
    Status s = oob_move(false, c->fd.get(), c->buf, kConnInfoBytes, &c->done,
                        "queue-pair exchange with " + peer, &m);
    if (!s.ok()) return fail(s);
    if (m == Move::kPending) return later();
    ConnInfo remote;
    if (std::string bad = parse_conn_info(c->buf, kConnInfoBytes, &remote); !bad.empty())
      return fail(Status::Remote("peer " + peer + " sent bad " + bad));
    if (remote.role != Role::kReceiver || remote.nonce != c->nonce)
      return fail(
          Status::Remote("peer " + peer + " answered with queue-pair info for another connection"));
    if (Status e = c->comm->connect(remote); !e.ok()) return fail(e);
    encode_ready(c->nonce, c->buf);
    c->done = 0;
    c->step = Connecting::Step::kSendReady;
  }
  Status s = oob_move(true, c->fd.get(), c->buf, kReadyBytes, &c->done,
                      "queue-pair exchange with " + peer, &m);
  if (!s.ok()) return fail(s);
  if (m == Move::kPending) return later();
  c->comm->attach_oob(std::move(c->fd), peer);
  *comm = std::move(c->comm);
  set_stage(handle, nullptr);
  return Status::Ok();
}

}  // namespace squeeze::transport::ib
