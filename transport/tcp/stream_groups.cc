#include "transport/tcp/stream_groups.h"

#include <algorithm>

#include "transport/tcp/stream_layout.h"
#include "transport/tcp/stream_log.h"
#include "transport/tcp/tcp_comm.h"

namespace squeeze::transport::tcp {

void StreamGroups::add(sock::Fd fd, const sock::SockAddr& peer, const uint8_t* hello,
                       std::unique_ptr<RecvComm>* comm, std::string* made) {
  const StreamHello h = decode_stream_hello(hello);
  if (h.count == 1 && h.index == 0) {
    *comm = std::make_unique<TcpRecvComm>(std::move(fd), peer.str(), nullptr, stall_timeout_ms_);
    if (made != nullptr) *made = accept_log_line(peer.str(), 0, 0);
    return;
  }
  // A multi-stream connection has a control socket and at least two data sockets.
  if (h.count < 3 || h.count > kMaxDataStreams + 1 || h.index >= h.count || h.nthreads < 1 ||
      h.nthreads > std::min<int>(kMaxStreamThreads, h.count - 1))
    return;  // not a hello this transport sends: drop it, as a stray
  auto it = std::find_if(waiting_.begin(), waiting_.end(),
                         [&](const Group& g) { return g.conn_id == h.conn_id; });
  if (it == waiting_.end()) {
    if (waiting_.size() >= kMaxWaiting) waiting_.pop_front();
    Group g;
    g.conn_id = h.conn_id;
    g.count = h.count;
    g.nthreads = h.nthreads;
    g.fds.resize(h.count);
    waiting_.push_back(std::move(g));
    it = waiting_.end() - 1;
  }
  Group& g = *it;
  if (g.count != h.count || g.nthreads != h.nthreads || g.fds[h.index].valid())
    return;  // disagrees: drop
  if (h.index == 0) g.peer = peer;
  g.fds[h.index] = std::move(fd);
  if (++g.arrived < g.count) return;
  std::vector<sock::Fd> data(std::make_move_iterator(g.fds.begin() + 1),
                             std::make_move_iterator(g.fds.end()));
  auto streams = std::make_unique<StreamSet>(StreamSet::Dir::kRecv, std::move(data), g.nthreads,
                                             g.peer.str(), stall_timeout_ms_);
  if (made != nullptr) *made = accept_log_line(g.peer.str(), g.count - 1, g.nthreads);
  *comm = std::make_unique<TcpRecvComm>(std::move(g.fds[0]), g.peer.str(), std::move(streams),
                                        stall_timeout_ms_);
  waiting_.erase(it);
}

}  // namespace squeeze::transport::tcp
