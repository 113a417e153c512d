// TCP transport: one device per usable network interface, non-blocking connection set-up
// whose in-progress state lives in the NCCL handle, and TcpSendComm/TcpRecvComm for data, over
// one socket or, for fast links, a control socket and several data sockets (stream_set.h).
#pragma once

#include <memory>
#include <vector>

#include "transport/socket/interfaces.h"
#include "transport/tcp/tcp_options.h"
#include "transport/transport.h"

namespace squeeze::transport::tcp {

class TcpTransport final : public Transport {
 public:
  // One device per interface that `socket` picks (see sock::find_interfaces).
  explicit TcpTransport(const sock::SocketOptions& socket, const TcpOptions& tcp = {});
  // For tests: use exactly these interfaces.
  explicit TcpTransport(std::vector<sock::Interface> ifs, const sock::SocketOptions& socket = {},
                        const TcpOptions& tcp = {});
  const char* name() const override { return "tcp"; }
  const std::vector<DeviceProps>& devices() const override { return props_; }
  Status listen(int dev, void* handle, std::unique_ptr<Listener>* listener) override;
  Status connect(int dev, void* handle, std::unique_ptr<SendComm>* comm) override;

 private:
  void describe();
  std::vector<sock::Interface> ifs_;
  sock::SocketOptions socket_;
  TcpOptions tcp_;
  std::vector<DeviceProps> props_;
};

}  // namespace squeeze::transport::tcp
