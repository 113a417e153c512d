// The data sockets of a multi-stream TCP connection and the helper threads that drive them.
// The control socket (TcpSendComm/TcpRecvComm) carries every header and every small payload,
// in FIFO order, as on a single-socket connection; a payload of kStripeMinBytes or more is cut
// into parts (stream_layout.h) that go out on the data sockets, socket after socket, each
// socket carrying its parts in the order the messages were posted. Both ends cut the same way
// and start where the last payload left off, so the receiver knows which socket brings which
// part from the header alone. Each helper thread owns some sockets and moves their parts with
// non-blocking calls, sleeping in poll() while none can move. The first error on any socket
// fails the whole connection: every later test() returns it. A receiving set keeps a stall
// deadline per socket (stall_watch.h): a part that is awaited (its header arrived on the
// control socket) and gets less than min(64 KiB, the rest of the part) within the deadline
// fails the connection, naming the peer, the stream and the bytes missing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "transport/socket/socket.h"
#include "transport/status.h"
#include "transport/tcp/tcp_info.h"

namespace squeeze::transport::tcp {

// The connection's first error, shared by its helper threads and the thread that tests it.
class FailBox {
 public:
  void set(Status s);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  Status get() const;

 private:
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  Status status_;
};

class StreamThread;

class StreamSet {
 public:
  enum class Dir { kSend, kRecv };
  // `fds`: the data sockets in stream order (index 1.. in the hello); `nthreads` in [1, fds].
  // `stall_timeout_ms`: the receiving side's stall deadline per part (0: none; a sending set
  // has none).
  StreamSet(Dir dir, std::vector<sock::Fd> fds, int nthreads, std::string peer,
            int stall_timeout_ms = 0);
  ~StreamSet();  // stops and joins the threads before the sockets close
  StreamSet(const StreamSet&) = delete;
  StreamSet& operator=(const StreamSet&) = delete;

  int nsocks() const { return static_cast<int>(fds_.size()); }
  int nthreads() const { return static_cast<int>(threads_.size()); }
  // Hands the parts of a `bytes`-long payload at `base` to the helper threads; `*left` is
  // raised by their count first and lowered (release order) as each part completes.
  void submit(uint8_t* base, uint64_t bytes, std::atomic<int>* left);
  bool failed() const { return fail_.failed(); }
  Status error() const { return fail_.get(); }
  // Parts handed out and not yet complete, over all sockets.
  int outstanding() const { return outstanding_.load(std::memory_order_acquire); }
  // Sums and ORs over the data sockets, for the link measurement.
  uint64_t bytes_acked() const;
  TcpBacklog backlog() const;
  // When a helper thread began its first write since the last call (sending sets), or nullopt
  // when none wrote since. The link measurement's start of a busy spell: parts handed out and
  // not yet written are time the helpers were not running, not time the network was busy.
  std::optional<std::chrono::steady_clock::time_point> take_first_write();
  const std::vector<sock::Fd>& fds() const { return fds_; }

 private:
  Dir dir_;
  std::vector<sock::Fd> fds_;
  std::string peer_;
  FailBox fail_;
  std::atomic<int> outstanding_{0};
  // steady_clock's count at the first write since take_first_write(); 0: none.
  std::atomic<int64_t> first_write_{0};
  int next_ = 0;  // the socket the next payload's first part goes on
  std::vector<std::unique_ptr<StreamThread>> threads_;
};

}  // namespace squeeze::transport::tcp
