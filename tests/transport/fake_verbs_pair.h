// Test helpers: two ib transports on the fake provider, one per fake device ("fake_0" sends,
// "fake_1" receives, as two hosts would), connected over loopback TCP, and loops that drive
// both comms from one thread until requests complete or a deadline passes.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/transport/fake_verbs.h"
#include "transport/ib/ib_options.h"
#include "transport/ib/ib_transport.h"

namespace squeeze::transport::ib::fake {

inline std::vector<FakeDevice> two_devices() {
  FakeDevice a, b;
  a.name = "fake_0";
  b.name = "fake_1";
  b.guid = 0x99aabbccddeeff00ull;
  return {a, b};
}

inline IbOptions test_options(const std::string& hca, int qps = 1) {
  IbOptions o;
  o.hca = "=" + hca;
  o.qps_per_conn = qps;
  o.gdr = 0;
  o.oob_interfaces = sock::find_interfaces("lo", AF_INET);
  return o;
}

// Calls step() until done() or `seconds` pass; false on timeout.
inline bool spin(const std::function<bool()>& done, const std::function<void()>& step,
                 double seconds = 10) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    step();
  }
  return true;
}

struct IbPair {
  explicit IbPair(std::vector<FakeDevice> devs = two_devices()) : fake(std::move(devs)) {}
  FakeVerbs fake;
  std::unique_ptr<Transport> a, b;  // a: sender side (fake_0), b: receiver side (fake_1)
  std::unique_ptr<Listener> listener;
  std::unique_ptr<SendComm> send;
  std::unique_ptr<RecvComm> recv;

  // Tears everything down, then checks nothing leaked and no rule was broken.
  void close_and_check() {
    recv.reset();
    send.reset();
    listener.reset();
    b.reset();
    a.reset();
    FakeCounters c = fake.counters();
    EXPECT_EQ(c.contexts + c.pds + c.mrs + c.cqs + c.qps + c.device_lists, 0)
        << "leaked: contexts " << c.contexts << " pds " << c.pds << " mrs " << c.mrs << " cqs "
        << c.cqs << " qps " << c.qps;
    for (const auto& v : fake.violations()) ADD_FAILURE() << v;
  }

  // `so`: both sides' socket options (the stall deadline).
  void open(IbOptions oa, IbOptions ob, const sock::SocketOptions& so = {}) {
    std::string why;
    a = open_transport_with(fake.api(), oa, so, &why);
    ASSERT_NE(a, nullptr) << why;
    b = open_transport_with(fake.api(), ob, so, &why);
    ASSERT_NE(b, nullptr) << why;
  }
  void open(int qps = 1, const sock::SocketOptions& so = {}) {
    open(test_options("fake_0", qps), test_options("fake_1", qps), so);
  }

  void connect() {
    uint8_t handle[kHandleBytes] = {};
    ASSERT_TRUE(b->listen(0, handle, &listener).ok());
    Status sa, sb;
    bool ok = spin([&] { return (send && recv) || !sa.ok() || !sb.ok(); },
                   [&] {
                     if (!send) sa = a->connect(0, handle, &send);
                     if (!recv) sb = listener->accept(&recv);
                   });
    ASSERT_TRUE(sa.ok()) << sa.message();
    ASSERT_TRUE(sb.ok()) << sb.message();
    ASSERT_TRUE(ok) << "connection set-up timed out";
  }

  // Drives both comms until send slot `ss` and receive slot `rs` are done, or an error.
  Status complete(int ss, int rs, std::span<Received> out, double seconds = 10) {
    bool sd = ss < 0, rd = rs < 0;
    Status st;
    bool ok = spin([&] { return (sd && rd) || !st.ok(); },
                   [&] {
                     if (!sd) st = send->test(ss, &sd);
                     if (st.ok() && !rd) st = recv->test(rs, &rd, out);
                   },
                   seconds);
    if (st.ok() && !ok) return Status::Internal("timed out");
    return st;
  }

  // One raw message of src (tag 3) from a to b; checks it arrived intact.
  void transfer_raw(const std::vector<uint8_t>& src) {
    std::vector<uint8_t> dst(src.size());
    RecvItem ri{3, dst.data(), dst.size()};
    int rs = -1, ss = -1;
    ASSERT_TRUE(recv->post({&ri, 1}, &rs).ok());
    ASSERT_TRUE(
        send->post({{3, PayloadKind::kRaw, src.size(), src.size()}, src.data(), nullptr}, &ss)
            .ok());
    ASSERT_TRUE(complete(ss, rs, {}).ok());
    EXPECT_TRUE(src == dst);
  }
};

}  // namespace squeeze::transport::ib::fake
