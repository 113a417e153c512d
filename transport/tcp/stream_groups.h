// The listener's side of a multi-stream connection: accepted sockets whose hello checked out
// wait here, by connection id, until the connection's every stream has arrived; then they
// become one TcpRecvComm. A single-socket hello (count 1) becomes one at once.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "transport/socket/socket.h"
#include "transport/tcp/wire.h"
#include "transport/transport.h"

namespace squeeze::transport::tcp {

class StreamGroups {
 public:
  // stall_timeout_ms: passed to every TcpRecvComm made (see StallWatch; 0 waits forever).
  explicit StreamGroups(int stall_timeout_ms = 0) : stall_timeout_ms_(stall_timeout_ms) {}
  // Connections waiting for the rest of their streams, at most; a new one beyond that drops the
  // oldest (a sender that died halfway through connecting).
  static constexpr std::size_t kMaxWaiting = 64;
  // Takes an accepted socket with its whole hello. *comm gets the receive comm when this socket
  // completes a connection, and *made (if given) the line to log for it (stream_log.h); a
  // socket whose stream fields make no sense is closed and dropped.
  void add(sock::Fd fd, const sock::SockAddr& peer, const uint8_t* hello,
           std::unique_ptr<RecvComm>* comm, std::string* made = nullptr);

 private:
  struct Group {
    uint64_t conn_id = 0;
    int count = 0, nthreads = 0, arrived = 0;
    sock::SockAddr peer;        // of the control socket, once it arrived
    std::vector<sock::Fd> fds;  // by stream index
  };
  std::deque<Group> waiting_;
  int stall_timeout_ms_ = 0;
};

}  // namespace squeeze::transport::tcp
