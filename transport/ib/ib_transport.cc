#include "transport/ib/ib_transport.h"

#include <vector>

#include "transport/ib/ib_connect.h"
#include "transport/ib/ib_devices.h"
#include "transport/ib/ib_options.h"
#include "transport/ib/verbs_api.h"
#include "transport/socket/interfaces.h"

namespace squeeze::transport::ib {

namespace {

class IbTransport final : public Transport {
 public:
  IbTransport(std::vector<std::shared_ptr<IbDevice>> devs, IbOptions opts,
              const sock::SocketOptions& socket, std::vector<sock::Interface> oob)
      : devs_(std::move(devs)), opts_(std::move(opts)), socket_(socket), oob_(std::move(oob)) {
    for (const auto& d : devs_) props_.push_back(d->props);
  }
  const char* name() const override { return "ib"; }
  const std::vector<DeviceProps>& devices() const override { return props_; }

  Status listen(int dev, void* handle, std::unique_ptr<Listener>* listener) override {
    if (Status s = check_dev("listen", dev); !s.ok()) return s;
    return ib_listen(devs_[dev], opts_, socket_, oob_.front().addr, handle, listener);
  }
  Status connect(int dev, void* handle, std::unique_ptr<SendComm>* comm) override {
    if (Status s = check_dev("connect", dev); !s.ok()) return s;
    return ib_connect(devs_[dev], opts_, socket_, handle, comm);
  }

 private:
  Status check_dev(const char* what, int dev) const {
    if (dev < 0 || dev >= static_cast<int>(devs_.size()))
      return Status::Usage(std::string(what) + ": device " + std::to_string(dev) +
                           " out of range [0, " + std::to_string(devs_.size()) + ")");
    return Status::Ok();
  }
  std::vector<std::shared_ptr<IbDevice>> devs_;
  IbOptions opts_;
  sock::SocketOptions socket_;
  std::vector<sock::Interface> oob_;
  std::vector<DeviceProps> props_;
};

}  // namespace

std::unique_ptr<Transport> open_transport_with(const VerbsApi& api, const IbOptions& opts,
                                               const sock::SocketOptions& socket,
                                               std::string* why) {
  if (std::string miss = api.missing(); !miss.empty()) {
    *why = "the verbs table lacks " + miss;
    return nullptr;
  }
  auto shared = std::make_shared<const VerbsApi>(api);
  std::vector<std::shared_ptr<IbDevice>> devs = discover_devices(shared, opts, why);
  if (devs.empty()) return nullptr;
  std::vector<sock::Interface> oob =
      opts.oob_interfaces.empty() ? sock::find_interfaces(socket) : opts.oob_interfaces;
  if (oob.empty()) {
    *why =
        "no network interface for the out-of-band queue-pair exchange (see SQUEEZE_SOCKET_IFNAME)";
    return nullptr;
  }
  return std::make_unique<IbTransport>(std::move(devs), opts, socket, std::move(oob));
}

std::unique_ptr<Transport> open_transport_with(const VerbsApi& api, const IbOptions& opts,
                                               std::string* why) {
  return open_transport_with(api, opts, sock::SocketOptions{}, why);
}

std::unique_ptr<Transport> open_transport(const IbOptions& opts, const sock::SocketOptions& socket,
                                          std::string* why) {
  const VerbsApi* api = system_verbs(why);
  if (api == nullptr) return nullptr;
  return open_transport_with(*api, opts, socket, why);
}

}  // namespace squeeze::transport::ib
