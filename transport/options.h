// Everything the transports are told, in one struct the plugin fills from its parameter
// table (plugin/engine/transport_options.h) and a tool or test fills directly. The defaults
// are what Squeeze uses when no variable is set. transport/ never reads the environment.
#pragma once

#include <string>

#include "transport/ib/ib_options.h"
#include "transport/socket/socket_options.h"
#include "transport/tcp/tcp_options.h"
#include "transport/ucx/ucx_options.h"

namespace squeeze::transport {

struct Options {
  // Which transport: "auto" (or empty), "tcp", "ucx" or "ib" (see registry.h).
  std::string name = "auto";
  // The TCP sockets of every transport: TCP's data sockets, the set-up and liveness sockets
  // of UCX and verbs, and the interfaces they use.
  sock::SocketOptions socket;
  // How many sockets and threads carry a TCP connection, and its pacing cap.
  tcp::TcpOptions tcp;
  ib::IbOptions ib;
  ucx::UcxOptions ucx;
};

}  // namespace squeeze::transport
