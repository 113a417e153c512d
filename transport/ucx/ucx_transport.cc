#include "transport/ucx/ucx_transport.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "compress/byte_io.h"
#include "transport/socket/interfaces.h"
#include "transport/socket/nonce.h"
#include "transport/ucx/ucx_setup.h"

namespace squeeze::transport::ucx {

namespace {

class UcxTransport final : public Transport {
 public:
  UcxTransport(std::shared_ptr<const Library> lib, const sock::Interface& itf,
               const UcxOptions& ucx, const sock::SocketOptions& socket)
      : sessions_(std::make_shared<SessionSource>(lib)), itf_(itf), socket_(socket) {
    // One device: the interface connections are set up over. UCX itself picks the data path
    // (UCX_TLS, UCX_NET_DEVICES), so listing every interface as a device would only tell NCCL
    // of rails that are not really separate.
    DeviceProps p;
    p.name = itf_.name;
    p.pci_path = sock::interface_pci_path(itf_.name);
    p.speed_mbps = sock::interface_speed_mbps(itf_.name);  // 10000 when /sys does not say (lo)
    p.ptr_support = kPtrHost;
    p.max_recvs = kMaxRecvs;
    p.address = itf_.addr.str() + " (UCX " + lib->version() +
                ", UCX_TLS=" + (ucx.tls.empty() ? "all" : ucx.tls) + ")";
    props_.push_back(std::move(p));
  }
  const char* name() const override { return "ucx"; }
  const std::vector<DeviceProps>& devices() const override { return props_; }
  Status listen(int dev, void* handle, std::unique_ptr<Listener>* listener) override;
  Status connect(int dev, void* handle, std::unique_ptr<SendComm>* comm) override {
    (void)dev;  // UCX routes to the peer's worker over what it selected
    return connect_step(*sessions_, socket_, handle, comm);
  }

 private:
  std::shared_ptr<SessionSource> sessions_;
  sock::Interface itf_;
  sock::SocketOptions socket_;
  std::vector<DeviceProps> props_;
};

Status UcxTransport::listen(int dev, void* handle, std::unique_ptr<Listener>* listener) {
  if (dev != 0)
    return Status::Usage("listen: device " + std::to_string(dev) + " out of range [0, 1)");
  sock::Fd fd;
  sock::SockAddr addr;
  if (Status s = sock::listen_on(itf_.addr, itf_.name, &fd, &addr); !s.ok()) return s;
  uint64_t nonce = 0;
  if (Status s = sock::random_nonce(&nonce); !s.ok()) return s;
  auto* h = static_cast<uint8_t*>(handle);
  std::memset(h, 0, kHandleBytes);
  compress::store_le32(h, kHandleMagic);
  compress::store_le32(h + 4, kWireVersion);
  std::memcpy(h + kHandleAddrOffset, &addr.storage,
              std::min<std::size_t>(addr.len, kHandleAddrMax));
  compress::store_le32(h + kHandleAddrLenOffset, static_cast<uint32_t>(addr.len));
  compress::store_le64(h + kHandleNonceOffset, nonce);
  *listener = std::make_unique<UcxListener>(sessions_, std::move(fd), nonce,
                                            "UCX set-up socket " + addr.str(), socket_);
  return Status::Ok();
}

}  // namespace

std::unique_ptr<Transport> open_transport(const UcxOptions& ucx, const sock::SocketOptions& socket,
                                          std::string* why) {
  std::shared_ptr<const Library> lib = Library::open(ucx.library, why);
  if (!lib) return nullptr;
  std::vector<sock::Interface> ifs = sock::find_interfaces(socket);
  if (ifs.empty()) {
    *why =
        "no network interface to set up UCX connections over (see SQUEEZE_SOCKET_IFNAME / "
        "NCCL_SOCKET_IFNAME)";
    return nullptr;
  }
  // Try UCX once (context and worker), then let go of it: comms create their own session,
  // and a process that forks before then leaves its child a usable UCX.
  std::shared_ptr<Session> probe;
  if (Status s = Session::create(lib, &probe); !s.ok()) {
    *why = s.message();
    return nullptr;
  }
  probe.reset();
  return std::make_unique<UcxTransport>(std::move(lib), ifs.front(), ucx, socket);
}

}  // namespace squeeze::transport::ucx
