// Connection set-up for the UCX transport. listen() opens a TCP socket on the device's
// interface and writes its address and a nonce into the handle. connect() connects to that
// socket and says hello; accept() checks the nonce, gives the receive comm an id and answers
// with it and the worker's address (ucx_wire.h); connect() then creates the endpoint. Nothing
// blocks. Both sides keep the socket open as a liveness check.
//
// Why a socket rather than ucp_listener with a sockaddr: a worker address does not fit in
// NCCL's 128-byte handle, the socket doubles as the dead-peer detector for the receiving
// side (whose tag receives belong to no endpoint), and it works on any UCX transport,
// shared-memory-only included, with no sockaddr-capable connection manager needed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transport/socket/pending_set.h"
#include "transport/socket/socket.h"
#include "transport/transport.h"
#include "transport/ucx/ucx_channel.h"
#include "transport/ucx/ucx_session.h"
#include "transport/ucx/ucx_wire.h"

namespace squeeze::transport::ucx {

class UcxListener final : public Listener {
 public:
  UcxListener(std::shared_ptr<SessionSource> sessions, sock::Fd fd, uint64_t nonce,
              const std::string& where, const sock::SocketOptions& socket)
      : sessions_(std::move(sessions)),
        fd_(std::move(fd)),
        nonce_(nonce),
        stall_timeout_ms_(socket.stall_timeout_ms),
        pending_(where, socket) {}
  Status accept(std::unique_ptr<RecvComm>* comm) override;

 private:
  struct Pending {
    sock::Fd fd;
    sock::SockAddr peer;
    HelloReader hello;
    std::shared_ptr<Session> session;  // set once the hello has arrived
    uint32_t comm_id = 0;
    std::vector<uint8_t> reply;
    std::size_t sent = 0;
  };
  // Advances one pending connection: reads its hello, then writes the answer.
  Status step(Pending& p, sock::Verdict* v);
  std::shared_ptr<SessionSource> sessions_;
  sock::Fd fd_;
  uint64_t nonce_;
  int stall_timeout_ms_;  // each receive comm's (stall_watch.h)
  sock::PendingSet<Pending> pending_;
};

// One non-blocking step of connect() on a handle from UcxTransport::listen(); the set-up
// socket gets `socket`'s options.
Status connect_step(SessionSource& sessions, const sock::SocketOptions& socket, void* handle,
                    std::unique_ptr<SendComm>* comm);

// Reads what is available of a hello. *closed: the peer closed the socket before it was whole.
Status read_hello(int fd, HelloReader* hello, const std::string& peer, bool* closed);
// Writes what the socket takes of out[*sent..]. *closed: the peer is gone.
Status write_some(int fd, const std::vector<uint8_t>& out, std::size_t* sent,
                  const std::string& peer, bool* closed);

}  // namespace squeeze::transport::ucx
