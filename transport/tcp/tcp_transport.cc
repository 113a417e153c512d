#include "transport/tcp/tcp_transport.h"

#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "compress/byte_io.h"
#include "transport/socket/nonce.h"
#include "transport/socket/pending_set.h"
#include "transport/tcp/stream_groups.h"
#include "transport/tcp/stream_layout.h"
#include "transport/tcp/stream_log.h"
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
constexpr std::size_t kAddrMax = sizeof(sockaddr_in6);            // 28
constexpr std::size_t kNonceOffset = kAddrOffset + kAddrMax + 4;  // 40
constexpr std::size_t kStageOffset = kHandleBytes - sizeof(void*);
static_assert(kNonceOffset + 8 <= kStageOffset, "handle layout overlaps");

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
  std::string log_line;  // logged once every socket is up (stream_log.h)
};

// Tells the listener which sockets make one connection; not a secret (the nonce is the gate).
uint64_t random_conn_id() {
  uint64_t id = 0;
  if (sock::random_nonce(&id).ok()) return id;
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1) ^ (static_cast<uint64_t>(getpid()) << 32);
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
  TcpListener(sock::Fd fd, uint64_t nonce, const std::string& where,
              const sock::SocketOptions& socket)
      : fd_(std::move(fd)),
        nonce_(nonce),
        socket_(socket),
        pending_("TCP listener " + where, socket),
        groups_(socket.stall_timeout_ms) {}
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
  StreamGroups groups_;  // sockets of multi-stream connections, until all have arrived
};

// Reads what has arrived of one connection's hello and judges it.
Status TcpListener::step(Pending& p, sock::Verdict* v) const {
  std::size_t n = 0;
  int err = 0;
  sock::Io io = sock::read_once(p.fd.get(), p.hello + p.got, kHelloBytes - p.got, &n, &err);
  if (io == sock::Io::kWouldBlock) return Status::Ok();
  if (io != sock::Io::kProgress) {
    *v = {sock::Verdict::kDrop,
          io == sock::Io::kClosed ? "closed before its hello" : "socket error before its hello"};
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
                            std::to_string(hello_version(p.hello)) +
                            "; this listener speaks version " + std::to_string(kMsgWireVersion));
    case Hello::kOurs: break;
  }
  *v = {sock::Verdict::kReady, ""};
  return Status::Ok();
}

Status TcpListener::accept(std::unique_ptr<RecvComm>* comm) {
  *comm = nullptr;
  // Every socket whose hello checked out joins its connection's group (StreamGroups); the
  // connection goes to NCCL once all its streams are in, so one call can complete it.
  auto make = [](sock::Fd fd, const sock::SockAddr& peer) {
    return std::make_unique<Pending>(Pending{std::move(fd), peer, {}, 0});
  };
  auto step_one = [this](Pending& p, sock::Verdict* v) { return step(p, v); };
  for (int i = 0; i <= kMaxDataStreams; ++i) {
    std::unique_ptr<Pending> ready;
    if (Status s = pending_.poll(fd_.get(), make, step_one, &ready); !s.ok()) return s;
    if (!ready) break;
    std::string made;
    groups_.add(std::move(ready->fd), ready->peer, ready->hello, comm, &made);
    if (*comm) {
      sock::log_to(socket_, false, made);
      break;
    }
  }
  return Status::Ok();
}

}  // namespace

TcpTransport::TcpTransport(const sock::SocketOptions& socket, const TcpOptions& tcp)
    : ifs_(sock::find_interfaces(socket)), socket_(socket), tcp_(tcp) {
  describe();
}
TcpTransport::TcpTransport(std::vector<sock::Interface> ifs, const sock::SocketOptions& socket,
                           const TcpOptions& tcp)
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
    return Status::Usage("listen: device " + std::to_string(dev) + " out of range [0, " +
                         std::to_string(ifs_.size()) + ")");
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
  auto* h = static_cast<uint8_t*>(handle);
  if (compress::load_le32(h) != kHandleMagic)
    return Status::Usage("connect: handle is not a Squeeze TCP handle");
  Connecting* c = stage_of(handle);
  if (c == nullptr) {
    auto fresh = std::make_unique<Connecting>();
    uint32_t len = compress::load_le32(h + kAddrOffset + kAddrMax);
    if (len == 0 || len > kAddrMax)
      return Status::Usage("connect: handle has a bad address length " + std::to_string(len));
    std::memcpy(&fresh->peer.storage, h + kAddrOffset, len);
    fresh->peer.len = len;
    // The route to the peer decides the local interface; `dev` is the one NCCL matched to it,
    // whose speed sizes the connection.
    const bool known = dev >= 0 && dev < static_cast<int>(props_.size());
    const int speed_mbps = known ? props_[dev].speed_mbps : 0;
    const int cores = usable_cores();
    const StreamLayout layout = choose_streams(tcp_, speed_mbps, cores);
    fresh->nthreads = layout.nthreads;
    fresh->log_line = connect_log_line(fresh->peer.str(), layout, tcp_, speed_mbps, cores);
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
      d.fd =
          sock::Fd(::socket(fresh->peer.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (!d.fd.valid()) return Status::System("socket(): " + sock::errno_str(errno));
      if (Status s = sock::configure_data_socket(d.fd.get(), socket_); !s.ok()) return s;
      if (Status s = sock::set_max_pacing_rate(d.fd.get(), i == 0 ? rate : rate / layout.nsocks);
          !s.ok())
        return s;
      int r = ::connect(d.fd.get(), reinterpret_cast<const sockaddr*>(&fresh->peer.storage),
                        fresh->peer.len);
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
      if (err != 0)
        return fail(Status::Remote("connect to " + c->peer.str() + ": " + sock::errno_str(err)));
      sockaddr_storage peer{};
      socklen_t plen = sizeof(peer);
      if (getpeername(d.fd.get(), reinterpret_cast<sockaddr*>(&peer), &plen) != 0) {
        if (errno != ENOTCONN)
          return fail(
              Status::Remote("connect to " + c->peer.str() + ": " + sock::errno_str(errno)));
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
      return fail(Status::Remote("connect to " + c->peer.str() +
                                 ": sending hello: " + sock::errno_str(err)));
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
    streams = std::make_unique<StreamSet>(StreamSet::Dir::kSend, std::move(data), c->nthreads,
                                          c->peer.str());
  }
  *comm =
      std::make_unique<TcpSendComm>(std::move(c->dials[0].fd), c->peer.str(), std::move(streams));
  sock::log_to(socket_, false, c->log_line);
  set_stage(handle, nullptr);
  return Status::Ok();
}

}  // namespace squeeze::transport::tcp
