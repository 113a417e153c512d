#include "transport/tcp/tcp_transport.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "compress/byte_io.h"
#include "transport/socket/nonce.h"
#include "transport/socket/pending_set.h"
#include "transport/tcp/tcp_comm.h"
#include "transport/tcp/wire.h"

namespace squeeze::transport::tcp {

namespace {

// The handle NCCL carries from listen() on the receiver to connect() on the sender:
//   0: u32 magic "SQZL" | 8: sockaddr (28 bytes max) | 36: u32 address length | 40: u64 nonce
// The last 8 bytes belong to the connecting side, which keeps a pointer to its in-progress
// state there between connect() calls (NCCL passes the same handle buffer each time).
constexpr uint32_t kHandleMagic = 0x4c5a5153;  // "SQZL"
constexpr std::size_t kAddrOffset = 8;
constexpr std::size_t kAddrMax = sizeof(sockaddr_in6);  // 28
constexpr std::size_t kNonceOffset = kAddrOffset + kAddrMax + 4;  // 40
constexpr std::size_t kStageOffset = kHandleBytes - sizeof(void*);
static_assert(kNonceOffset + 8 <= kStageOffset, "handle layout overlaps");

// State of a connect() in progress, owned through the handle's stage slot.
struct Connecting {
  sock::Fd fd;
  sock::SockAddr peer;
  uint8_t hello[kHelloBytes];
  std::size_t hello_sent = 0;
  bool connected = false;
};

Connecting* stage_of(void* handle) {
  Connecting* c = nullptr;
  std::memcpy(&c, static_cast<uint8_t*>(handle) + kStageOffset, sizeof(c));
  return c;
}
void set_stage(void* handle, Connecting* c) {
  std::memcpy(static_cast<uint8_t*>(handle) + kStageOffset, &c, sizeof(c));
}

class TcpListener final : public Listener {
 public:
  TcpListener(sock::Fd fd, uint64_t nonce, const std::string& where, const sock::SocketOptions& socket)
      : fd_(std::move(fd)), nonce_(nonce), socket_(socket), pending_("TCP listener " + where, socket) {}
  Status accept(std::unique_ptr<RecvComm>* comm) override;

 private:
  struct Pending {
    sock::Fd fd;
    sock::SockAddr peer;
    uint8_t hello[kHelloBytes];
    std::size_t got = 0;
  };
  Status step(Pending& p, sock::Verdict* v) const;
  sock::Fd fd_;
  uint64_t nonce_;
  sock::SocketOptions socket_;
  sock::PendingSet<Pending> pending_;
};

// Reads what has arrived of one connection's hello and judges it.
Status TcpListener::step(Pending& p, sock::Verdict* v) const {
  std::size_t n = 0;
  int err = 0;
  sock::Io io = sock::read_once(p.fd.get(), p.hello + p.got, kHelloBytes - p.got, &n, &err);
  if (io == sock::Io::kWouldBlock) return Status::Ok();
  if (io != sock::Io::kProgress) {
    *v = {sock::Verdict::kDrop, io == sock::Io::kClosed ? "closed before its hello" : "socket error before its hello"};
    return Status::Ok();
  }
  p.got += n;
  if (p.got < kHelloBytes) return Status::Ok();
  switch (check_hello(p.hello, nonce_)) {
    case Hello::kStray:
      *v = {sock::Verdict::kDrop, "hello with another magic or nonce"};
      return Status::Ok();
    case Hello::kOtherVersion:
      return Status::Remote("peer " + p.peer.str() + " speaks Squeeze TCP wire version " +
                            std::to_string(hello_version(p.hello)) + "; this listener speaks version " +
                            std::to_string(kMsgWireVersion));
    case Hello::kOurs:
      break;
  }
  *v = {sock::Verdict::kReady, ""};
  return Status::Ok();
}

Status TcpListener::accept(std::unique_ptr<RecvComm>* comm) {
  *comm = nullptr;
  std::unique_ptr<Pending> ready;
  Status s = pending_.poll(
      fd_.get(), [](sock::Fd fd, const sock::SockAddr& peer) { return std::make_unique<Pending>(Pending{std::move(fd), peer, {}, 0}); },
      [this](Pending& p, sock::Verdict* v) { return step(p, v); }, &ready);
  if (!s.ok()) return s;
  if (ready) *comm = std::make_unique<TcpRecvComm>(std::move(ready->fd), ready->peer.str(), socket_.stall_timeout_ms);
  return Status::Ok();
}

}  // namespace

TcpTransport::TcpTransport(const sock::SocketOptions& socket) : ifs_(sock::find_interfaces(socket)), socket_(socket) {
  describe();
}
TcpTransport::TcpTransport(std::vector<sock::Interface> ifs, const sock::SocketOptions& socket)
    : ifs_(std::move(ifs)), socket_(socket) {
  describe();
}

void TcpTransport::describe() {
  for (std::size_t i = 0; i < ifs_.size(); ++i) {
    DeviceProps p;
    p.name = ifs_[i].name;
    p.pci_path = sock::interface_pci_path(ifs_[i].name);
    p.guid = i;
    p.speed_mbps = sock::interface_speed_mbps(ifs_[i].name);
    p.address = ifs_[i].addr.str();
    props_.push_back(std::move(p));
  }
}

Status TcpTransport::listen(int dev, void* handle, std::unique_ptr<Listener>* listener) {
  if (dev < 0 || dev >= static_cast<int>(ifs_.size()))
    return Status::Usage("listen: device " + std::to_string(dev) + " out of range [0, " + std::to_string(ifs_.size()) + ")");
  sock::Fd fd;
  sock::SockAddr addr;
  if (Status s = sock::listen_on(ifs_[dev].addr, ifs_[dev].name, &fd, &addr); !s.ok()) return s;
  uint64_t nonce = 0;
  if (Status s = sock::random_nonce(&nonce); !s.ok()) return s;
  auto* h = static_cast<uint8_t*>(handle);
  std::memset(h, 0, kHandleBytes);
  compress::store_le32(h, kHandleMagic);
  std::memcpy(h + kAddrOffset, &addr.storage, std::min<std::size_t>(addr.len, kAddrMax));
  compress::store_le32(h + kAddrOffset + kAddrMax, static_cast<uint32_t>(addr.len));
  compress::store_le64(h + kNonceOffset, nonce);
  *listener = std::make_unique<TcpListener>(std::move(fd), nonce, addr.str(), socket_);
  return Status::Ok();
}

Status TcpTransport::connect(int dev, void* handle, std::unique_ptr<SendComm>* comm) {
  *comm = nullptr;
  (void)dev;  // the route to the peer decides the local interface
  auto* h = static_cast<uint8_t*>(handle);
  if (compress::load_le32(h) != kHandleMagic) return Status::Usage("connect: handle is not a Squeeze TCP handle");
  Connecting* c = stage_of(handle);
  if (c == nullptr) {
    auto fresh = std::make_unique<Connecting>();
    uint32_t len = compress::load_le32(h + kAddrOffset + kAddrMax);
    if (len == 0 || len > kAddrMax) return Status::Usage("connect: handle has a bad address length " + std::to_string(len));
    std::memcpy(&fresh->peer.storage, h + kAddrOffset, len);
    fresh->peer.len = len;
    encode_hello(compress::load_le64(h + kNonceOffset), fresh->hello);
    fresh->fd = sock::Fd(::socket(fresh->peer.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fresh->fd.valid()) return Status::System("socket(): " + sock::errno_str(errno));
    if (Status s = sock::configure_data_socket(fresh->fd.get(), socket_); !s.ok()) return s;
    int r = ::connect(fresh->fd.get(), reinterpret_cast<const sockaddr*>(&fresh->peer.storage), fresh->peer.len);
    if (r != 0 && errno != EINPROGRESS)
      return Status::Remote("connect to " + fresh->peer.str() + ": " + sock::errno_str(errno));
    c = fresh.release();
    set_stage(handle, c);
  }
  std::unique_ptr<Connecting> owned(c);  // freed on every exit unless handed back
  auto fail = [&](Status s) {
    set_stage(handle, nullptr);
    return s;
  };
  if (!c->connected) {
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(c->fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) return fail(Status::Remote("connect to " + c->peer.str() + ": " + sock::errno_str(err)));
    sockaddr_storage peer{};
    socklen_t plen = sizeof(peer);
    if (getpeername(c->fd.get(), reinterpret_cast<sockaddr*>(&peer), &plen) != 0) {
      if (errno == ENOTCONN) {
        owned.release();  // still connecting
        return Status::Ok();
      }
      return fail(Status::Remote("connect to " + c->peer.str() + ": " + sock::errno_str(errno)));
    }
    c->connected = true;
  }
  iovec iov{c->hello + c->hello_sent, kHelloBytes - c->hello_sent};
  std::size_t n = 0;
  int err = 0;
  sock::Io io = sock::writev_once(c->fd.get(), &iov, 1, &n, &err);
  if (io == sock::Io::kClosed || io == sock::Io::kError)
    return fail(Status::Remote("connect to " + c->peer.str() + ": sending hello: " + sock::errno_str(err)));
  c->hello_sent += n;
  if (c->hello_sent < kHelloBytes) {
    owned.release();
    return Status::Ok();
  }
  *comm = std::make_unique<TcpSendComm>(std::move(c->fd), c->peer.str());
  set_stage(handle, nullptr);
  return Status::Ok();
}

}  // namespace squeeze::transport::tcp
