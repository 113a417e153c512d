// The ib transport under a steady stream on the fake provider: a sender thread and a
// receiver thread, each driving only its own comm (as two processes would), raw messages and
// frames of assorted sizes, up to 8 in flight on each side, several QPs per connection.
#include <cstring>
#include <deque>
#include <thread>

#include "tests/transport/fake_verbs_pair.h"

namespace squeeze::transport::ib::fake {
namespace {

struct Msg {
  std::vector<uint8_t> bytes;
  bool frame = false;
};

std::vector<Msg> make_stream(int n) {
  std::vector<Msg> out;
  uint32_t x = 12345;
  for (int i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    std::size_t size = i % 7 == 0 ? 0 : (x >> 8) % (i % 11 == 0 ? 600000 : 70000);
    Msg m;
    m.bytes.resize(size);
    for (auto& b : m.bytes) b = static_cast<uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
    m.frame = i % 3 == 1;
    out.push_back(std::move(m));
  }
  return out;
}

TEST(IbStream, TwoThreadsManyMessagesInFlight) {
  IbPair p;
  p.open(3);
  p.connect();
  const std::vector<Msg> msgs = make_stream(240);
  constexpr int kDepth = 8;
  constexpr std::size_t kCap = 600000 + 16;
  std::string send_err, recv_err;
  std::thread sender([&] {
    std::deque<int> inflight;
    std::size_t next = 0;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while ((next < msgs.size() || !inflight.empty()) && std::chrono::steady_clock::now() < end) {
      if (next < msgs.size() && inflight.size() < kDepth) {
        const Msg& m = msgs[next];
        const uint64_t n = m.bytes.size();
        SendItem si{{static_cast<int32_t>(next % 4),
                     m.frame ? PayloadKind::kFrame : PayloadKind::kRaw, n, m.frame ? n + 10 : n},
                    m.bytes.data(),
                    nullptr};
        int slot = -1;
        if (Status s = p.send->post(si, &slot); !s.ok()) {
          send_err = s.message();
          return;
        }
        if (slot >= 0) {
          inflight.push_back(slot);
          ++next;
        }
      }
      if (!inflight.empty()) {
        bool done = false;
        if (Status s = p.send->test(inflight.front(), &done); !s.ok()) {
          send_err = s.message();
          return;
        }
        if (done) {
          p.send->release(inflight.front());
          inflight.pop_front();
        }
      }
    }
    if (next < msgs.size() || !inflight.empty()) send_err = "timed out";
  });
  std::vector<std::vector<uint8_t>> bufs(kDepth, std::vector<uint8_t>(kCap));
  std::deque<std::pair<int, int>> posted;  // slot, buffer
  std::vector<int> free_bufs;
  for (int i = kDepth - 1; i >= 0; --i) free_bufs.push_back(i);
  std::size_t next_post = 0, next_check = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (next_check < msgs.size() && recv_err.empty() && std::chrono::steady_clock::now() < end) {
    if (next_post < msgs.size() && !free_bufs.empty()) {
      int b = free_bufs.back();
      RecvItem ri{static_cast<int32_t>(next_post % 4), bufs[b].data(), kCap};
      int slot = -1;
      if (Status s = p.recv->post({&ri, 1}, &slot); !s.ok()) recv_err = s.message();
      if (slot >= 0) {
        free_bufs.pop_back();
        posted.emplace_back(slot, b);
        ++next_post;
      }
    }
    if (posted.empty()) continue;
    bool done = false;
    Received got[1];
    if (Status s = p.recv->test(posted.front().first, &done, got); !s.ok()) recv_err = s.message();
    if (!done) continue;
    const Msg& m = msgs[next_check];
    const uint8_t* data = m.frame ? got[0].staged.data() : bufs[posted.front().second].data();
    const std::size_t n = m.frame ? got[0].staged.size() : got[0].header.original_bytes;
    if (got[0].header.payload_bytes != m.bytes.size() || n != m.bytes.size() ||
        (n > 0 && std::memcmp(data, m.bytes.data(), n) != 0) ||
        got[0].header.kind != (m.frame ? PayloadKind::kFrame : PayloadKind::kRaw))
      recv_err = "message " + std::to_string(next_check) + " arrived wrong";
    p.recv->release(posted.front().first);
    free_bufs.push_back(posted.front().second);
    posted.pop_front();
    ++next_check;
  }
  sender.join();
  EXPECT_EQ(send_err, "");
  EXPECT_EQ(recv_err, "");
  EXPECT_EQ(next_check, msgs.size());
  p.close_and_check();
}

}  // namespace
}  // namespace squeeze::transport::ib::fake
