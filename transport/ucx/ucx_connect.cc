#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "compress/byte_io.h"
#include "transport/ucx/ucx_comm.h"
#include "transport/ucx/ucx_setup.h"

namespace squeeze::transport::ucx {

namespace {

// State of a connect() in progress, owned through the handle's stage slot (NCCL passes the
// same handle buffer on every call until the comm exists).
struct Connecting {
  sock::Fd fd;
  sock::SockAddr peer;
  std::vector<uint8_t> hello;
  std::size_t sent = 0;
  HelloReader reply{kAcceptMagic, 0, true};
  bool connected = false;
};

Connecting* stage_of(void* handle) {
  Connecting* c = nullptr;
  std::memcpy(&c, static_cast<uint8_t*>(handle) + kHandleStageOffset, sizeof(c));
  return c;
}
void set_stage(void* handle, Connecting* c) {
  std::memcpy(static_cast<uint8_t*>(handle) + kHandleStageOffset, &c, sizeof(c));
}

Status start(const uint8_t* h, const sock::SocketOptions& socket,
             std::unique_ptr<Connecting>* out) {
  auto c = std::make_unique<Connecting>();
  uint32_t len = compress::load_le32(h + kHandleAddrLenOffset);
  if (len == 0 || len > kHandleAddrMax)
    return Status::Usage("connect: UCX handle has a bad address length " + std::to_string(len));
  std::memcpy(&c->peer.storage, h + kHandleAddrOffset, len);
  c->peer.len = len;
  const uint64_t nonce = compress::load_le64(h + kHandleNonceOffset);
  c->reply = HelloReader(kAcceptMagic, nonce, true);
  c->fd = sock::Fd(::socket(c->peer.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!c->fd.valid()) return Status::System("socket(): " + sock::errno_str(errno));
  if (Status s = sock::configure_data_socket(c->fd.get(), socket); !s.ok()) return s;
  int r = ::connect(c->fd.get(), reinterpret_cast<const sockaddr*>(&c->peer.storage), c->peer.len);
  if (r != 0 && errno != EINPROGRESS)
    return Status::Remote("connect to " + c->peer.str() + ": " + sock::errno_str(errno));
  c->hello = encode_hello(kConnectMagic, nonce, 0, {});
  *out = std::move(c);
  return Status::Ok();
}

// Whether the non-blocking TCP connect has finished; an error if it failed.
Status finished_connecting(Connecting& c, bool* yes) {
  *yes = false;
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(c.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) return Status::Remote("connect to " + c.peer.str() + ": " + sock::errno_str(err));
  sockaddr_storage peer{};
  socklen_t plen = sizeof(peer);
  if (getpeername(c.fd.get(), reinterpret_cast<sockaddr*>(&peer), &plen) != 0) {
    if (errno == ENOTCONN) return Status::Ok();
    return Status::Remote("connect to " + c.peer.str() + ": " + sock::errno_str(errno));
  }
  *yes = true;
  return Status::Ok();
}

}  // namespace

Status connect_step(SessionSource& sessions, const sock::SocketOptions& socket, void* handle,
                    std::unique_ptr<SendComm>* comm) {
  *comm = nullptr;
  const auto* h = static_cast<const uint8_t*>(handle);
  if (compress::load_le32(h) != kHandleMagic)
    return Status::Usage("connect: handle is not a Squeeze UCX handle");
  if (compress::load_le32(h + 4) != kWireVersion)
    return Status::Usage("connect: UCX handle has version " +
                         std::to_string(compress::load_le32(h + 4)) + ", expected " +
                         std::to_string(kWireVersion));
  std::unique_ptr<Connecting> owned(stage_of(handle));  // freed on every exit unless handed back
  if (!owned) {
    if (Status s = start(h, socket, &owned); !s.ok()) return s;
  }
  set_stage(handle, nullptr);
  Connecting& c = *owned;
  if (!c.connected) {
    if (Status s = finished_connecting(c, &c.connected); !s.ok()) return s;
  }
  bool closed = false;
  if (c.connected) {
    if (Status s = write_some(c.fd.get(), c.hello, &c.sent, c.peer.str(), &closed); !s.ok())
      return s;
    if (c.sent == c.hello.size()) {
      if (Status s = read_hello(c.fd.get(), &c.reply, c.peer.str(), &closed); !s.ok()) return s;
    }
  }
  if (!c.reply.done()) {
    set_stage(handle, owned.release());  // not yet: called again with the same handle
    return Status::Ok();
  }
  std::shared_ptr<Session> session;
  if (Status s = sessions.acquire(&session); !s.ok()) return s;
  auto ch = std::make_unique<Channel>(std::move(session), std::move(c.fd), c.peer.str(),
                                      c.reply.comm_id());
  // An endpoint UCX cannot create (the peer died since it answered, or shares no transport
  // with us) is a comm whose first send fails, as a TCP connection whose peer is gone.
  Status ep = ch->connect(c.reply.address());
  *comm = std::make_unique<UcxSendComm>(std::move(ch), std::move(ep));
  return Status::Ok();
}

}  // namespace squeeze::transport::ucx
