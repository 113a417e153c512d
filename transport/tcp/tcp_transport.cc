#include "transport/tcp/tcp_transport.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "compress/byte_io.h"
#include "transport/tcp/stream_groups.h"
#include "transport/tcp/stream_layout.h"
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

uint64_t random_nonce() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

// One socket of a connect() in progress.
struct Dialing {
  sock::Fd fd;
  uint8_t hello[kHelloBytes];
  std::size_t hello_sent = 0;
  bool connected = false;
};

// State of a connect() in progress, owned through the handle's stage slot: the control
// socket (dials[0]) and the data sockets, all dialled at once.
struct Connecting {
  sock::SockAddr peer;
  std::vector<Dialing> dials;
  int nthreads = 0;
};

uint64_t random_conn_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, 0) == static_cast<ssize_t>(sizeof id)) return id;
  return random_nonce() ^ (random_nonce() << 1);
}

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
  TcpListener(sock::Fd fd, uint64_t nonce, std::string where, const sock::SocketOptions& socket)
      : fd_(std::move(fd)), nonce_(nonce), where_(std::move(where)), socket_(socket) {}
  Status accept(std::unique_ptr<RecvComm>* comm) override;

 private:
  struct Pending {
    sock::Fd fd;
    sock::SockAddr peer;
    uint8_t hello[kHelloBytes];
    std::size_t got = 0;
  };
  sock::Fd fd_;
  uint64_t nonce_;
  std::string where_;
  sock::SocketOptions socket_;
  std::vector<Pending> pending_;
  StreamGroups groups_;  // sockets of multi-stream connections, until all have arrived
};

Status TcpListener::accept(std::unique_ptr<RecvComm>* comm) {
  *comm = nullptr;
  for (;;) {  // take every connection the kernel has queued
    Pending p;
    p.peer.len = sizeof(p.peer.storage);
    int fd = ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&p.peer.storage), &p.peer.len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return Status::System("accept on " + where_ + ": " + sock::errno_str(errno));
    }
    p.fd = sock::Fd(fd);
    if (Status s = sock::configure_data_socket(fd, socket_); !s.ok()) return s;
    pending_.push_back(std::move(p));
  }
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    std::size_t n = 0;
    int err = 0;
    sock::Io io = sock::read_once(it->fd.get(), it->hello + it->got, kHelloBytes - it->got, &n, &err);
    if (io == sock::Io::kWouldBlock) continue;
    bool bad = io != sock::Io::kProgress;
    it->got += n;
    if (!bad && it->got < kHelloBytes) continue;
    if (!bad && !hello_is_for(it->hello, nonce_)) bad = true;
    if (bad) {  // a stray or stale connection: drop it, keep listening
      pending_.erase(it);
      return Status::Ok();
    }
    groups_.add(std::move(it->fd), it->peer, it->hello, comm);
    pending_.erase(it);
    return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

TcpTransport::TcpTransport(const sock::SocketOptions& socket, const TcpOptions& tcp)
    : ifs_(sock::find_interfaces(socket)), socket_(socket), tcp_(tcp) {
  describe();
}
TcpTransport::TcpTransport(std::vector<sock::Interface> ifs, const sock::SocketOptions& socket, const TcpOptions& tcp)
    : ifs_(std::move(ifs)), socket_(socket), tcp_(tcp) {
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
  uint64_t nonce = random_nonce();
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
  auto* h = static_cast<uint8_t*>(handle);
  if (compress::load_le32(h) != kHandleMagic) return Status::Usage("connect: handle is not a Squeeze TCP handle");
  Connecting* c = stage_of(handle);
  if (c == nullptr) {
    auto fresh = std::make_unique<Connecting>();
    uint32_t len = compress::load_le32(h + kAddrOffset + kAddrMax);
    if (len == 0 || len > kAddrMax) return Status::Usage("connect: handle has a bad address length " + std::to_string(len));
    std::memcpy(&fresh->peer.storage, h + kAddrOffset, len);
    fresh->peer.len = len;
    // The route to the peer decides the local interface; `dev` is the one NCCL matched to it,
    // whose speed sizes the connection.
    const bool known = dev >= 0 && dev < static_cast<int>(props_.size());
    const StreamLayout layout = choose_streams(tcp_, known ? props_[dev].speed_mbps : 0, usable_cores());
    fresh->nthreads = layout.nthreads;
    StreamHello sh;
    sh.conn_id = random_conn_id();
    sh.count = static_cast<uint16_t>(1 + layout.nsocks);
    sh.nthreads = static_cast<uint16_t>(layout.nthreads);
    const uint64_t nonce = compress::load_le64(h + kNonceOffset);
    // The pacing cap: the control socket carries small messages and may use all of it; each
    // data socket carries its share of the large ones.
    const auto rate = static_cast<uint64_t>(tcp_.max_rate_bps / 8);
    fresh->dials.resize(sh.count);
    for (uint16_t i = 0; i < sh.count; ++i) {
      Dialing& d = fresh->dials[i];
      sh.index = i;
      encode_hello(nonce, sh, d.hello);
      d.fd = sock::Fd(::socket(fresh->peer.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (!d.fd.valid()) return Status::System("socket(): " + sock::errno_str(errno));
      if (Status s = sock::configure_data_socket(d.fd.get(), socket_); !s.ok()) return s;
      if (Status s = sock::set_max_pacing_rate(d.fd.get(), i == 0 ? rate : rate / layout.nsocks); !s.ok()) return s;
      int r = ::connect(d.fd.get(), reinterpret_cast<const sockaddr*>(&fresh->peer.storage), fresh->peer.len);
      if (r != 0 && errno != EINPROGRESS)
        return Status::Remote("connect to " + fresh->peer.str() + ": " + sock::errno_str(errno));
    }
    c = fresh.release();
    set_stage(handle, c);
  }
  std::unique_ptr<Connecting> owned(c);  // freed on every exit unless handed back
  auto fail = [&](Status s) {
    set_stage(handle, nullptr);
    return s;
  };
  bool all_sent = true;
  for (Dialing& d : c->dials) {
    if (!d.connected) {
      int err = 0;
      socklen_t len = sizeof(err);
      if (getsockopt(d.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) return fail(Status::Remote("connect to " + c->peer.str() + ": " + sock::errno_str(err)));
      sockaddr_storage peer{};
      socklen_t plen = sizeof(peer);
      if (getpeername(d.fd.get(), reinterpret_cast<sockaddr*>(&peer), &plen) != 0) {
        if (errno != ENOTCONN) return fail(Status::Remote("connect to " + c->peer.str() + ": " + sock::errno_str(errno)));
        all_sent = false;  // still connecting
        continue;
      }
      d.connected = true;
    }
    if (d.hello_sent == kHelloBytes) continue;
    iovec iov{d.hello + d.hello_sent, kHelloBytes - d.hello_sent};
    std::size_t n = 0;
    int err = 0;
    sock::Io io = sock::writev_once(d.fd.get(), &iov, 1, &n, &err);
    if (io == sock::Io::kClosed || io == sock::Io::kError)
      return fail(Status::Remote("connect to " + c->peer.str() + ": sending hello: " + sock::errno_str(err)));
    d.hello_sent += n;
    if (d.hello_sent < kHelloBytes) all_sent = false;
  }
  if (!all_sent) {
    owned.release();
    return Status::Ok();
  }
  std::unique_ptr<StreamSet> streams;
  if (c->dials.size() > 1) {
    std::vector<sock::Fd> data;
    for (std::size_t i = 1; i < c->dials.size(); ++i) data.push_back(std::move(c->dials[i].fd));
    streams = std::make_unique<StreamSet>(StreamSet::Dir::kSend, std::move(data), c->nthreads, c->peer.str());
  }
  *comm = std::make_unique<TcpSendComm>(std::move(c->dials[0].fd), c->peer.str(), std::move(streams));
  set_stage(handle, nullptr);
  return Status::Ok();
}

}  // namespace squeeze::transport::tcp
