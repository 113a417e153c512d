// Connection set-up of the ib transport: listen() opens a TCP listener for the out-of-band
// exchange and writes its address into the NCCL handle; connect() and accept() are
// non-blocking state machines that swap queue-pair information over that TCP connection (see
// ib_handshake.h), move the QPs to RTS and hand back the comms, which keep the socket.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/ib/ib_devices.h"
#include "transport/socket/socket.h"

namespace squeeze::transport::ib {

// The out-of-band TCP sockets on both sides get `socket`'s options.
Status ib_listen(std::shared_ptr<IbDevice> dev, const IbOptions& opts,
                 const sock::SocketOptions& socket, const sock::SockAddr& bind_to, void* handle,
                 std::unique_ptr<Listener>* listener);

// Called again with the same handle until *comm is set; the in-progress state lives in the
// handle's last 8 bytes.
Status ib_connect(std::shared_ptr<IbDevice> dev, const IbOptions& opts,
                  const sock::SocketOptions& socket, void* handle, std::unique_ptr<SendComm>* comm);

}  // namespace squeeze::transport::ib
