// The UCX transport over UCX's tcp and shm transports on loopback: the same semantics as the
// TCP transport (ordered tagged messages, raw payloads in place, frames in staging, grouped
// receives matched by tag, capacity checks, slot limits), dead peers as errors within
// seconds, connect/close cycles without leaks, and a clear reason when UCX is missing.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/transport/ucx_test_util.h"

// UCX's own libraries keep a few bytes of global state (100 B in libuct 1.13) that they never
// free; LeakSanitizer would blame this binary for them. Only UCX's allocations are exempt.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libuct.so\nleak:libucs.so\nleak:libucp.so\n";
}

namespace squeeze::transport::ucx {
namespace {

using testutil::Pair;
using testutil::ScopedEnv;

uint8_t pattern(std::size_t msg, std::size_t i) {
  return static_cast<uint8_t>((i * 131u + msg * 7u + (i >> 12)) ^ 0x5a);
}

// A transport over UCX_TLS=<param>, without comms (so forking leaves the child a usable UCX).
class UcxLoopback : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    tls_ = std::make_unique<ScopedEnv>("UCX_TLS", GetParam());
    std::string why;
    t_ = testutil::open_on_loopback(&why);
    if (!t_) GTEST_SKIP() << "UCX cannot start here with UCX_TLS=" << GetParam() << ": " << why;
  }
  std::unique_ptr<ScopedEnv> tls_;
  std::unique_ptr<Transport> t_;
};

// The same, with a connected pair of comms.
class UcxTransfer : public UcxLoopback {
 protected:
  void SetUp() override {
    UcxLoopback::SetUp();
    if (t_) {
      ASSERT_TRUE(testutil::connect_pair(*t_, &p_));
    }
  }
  Pair p_;
};

TEST_P(UcxTransfer, DeviceIsTruthful) {
  EXPECT_STREQ(t_->name(), "ucx");
  ASSERT_EQ(t_->devices().size(), 1u);
  const DeviceProps& d = t_->devices()[0];
  EXPECT_EQ(d.name, "lo");
  EXPECT_EQ(d.ptr_support, kPtrHost) << "host memory only: no CUDA in this transport";
  EXPECT_EQ(d.max_recvs, 8);
  EXPECT_EQ(d.speed_mbps, 10000) << "lo has no /sys speed: the documented default";
  EXPECT_NE(d.address.find("UCX"), std::string::npos) << d.address;
  LinkSample sample;
  EXPECT_FALSE(p_.s->link_rate(&sample)) << "UCX gives no truthful delivery rate";
}

// Sizes 0..4 MiB and odd ones, 8 in flight, posted capacities larger than what arrives.
TEST_P(UcxTransfer, ManySizesEightInFlight) {
  std::vector<std::size_t> sizes = {0,
                                    1,
                                    3,
                                    7,
                                    31,
                                    255,
                                    1000,
                                    4095,
                                    4097,
                                    8191,
                                    65537,
                                    1u << 20,
                                    (1u << 20) + 17,
                                    (4u << 20) - 1,
                                    4u << 20};
  for (std::size_t k = 13; k <= 21; k += 2) sizes.push_back(std::size_t{1} << k);
  std::vector<std::vector<uint8_t>> out(sizes.size()), in(sizes.size());
  for (std::size_t m = 0; m < sizes.size(); ++m) {
    out[m].resize(sizes[m]);
    for (std::size_t i = 0; i < sizes[m]; ++i) out[m][i] = pattern(m, i);
    in[m].assign(sizes[m] + 4096, 0);
  }
  std::vector<int> sslot(sizes.size(), -1), rslot(sizes.size(), -1);
  std::size_t next = 0, done = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (done < sizes.size()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "transfer stalled at message " << done;
    while (next < sizes.size() && next - done < 8) {
      RecvItem ri{1, in[next].data(), in[next].size(), nullptr};
      ASSERT_TRUE(p_.r->post({&ri, 1}, &rslot[next]).ok());
      ASSERT_GE(rslot[next], 0);
      SendItem si{{1, PayloadKind::kRaw, sizes[next], sizes[next]}, out[next].data(), nullptr};
      Status st = p_.s->post(si, &sslot[next]);
      ASSERT_TRUE(st.ok()) << st.message();
      ASSERT_GE(sslot[next], 0);
      ++next;
    }
    bool sdone = false, rdone = false;
    Received got[1];
    Status st = p_.s->test(sslot[done], &sdone);
    ASSERT_TRUE(st.ok()) << st.message();
    st = p_.r->test(rslot[done], &rdone, got);
    ASSERT_TRUE(st.ok()) << st.message();
    if (!sdone || !rdone) continue;
    EXPECT_EQ(got[0].header.original_bytes, sizes[done]);
    EXPECT_EQ(got[0].header.kind, PayloadKind::kRaw);
    EXPECT_TRUE(got[0].staged.empty());
    EXPECT_TRUE(std::equal(out[done].begin(), out[done].end(), in[done].begin()))
        << "size " << sizes[done];
    EXPECT_EQ(in[done][sizes[done]], 0) << "bytes written past the message";
    p_.s->release(sslot[done]);
    p_.r->release(rslot[done]);
    ++done;
  }
}

// One grouped receive of 8 items posted in reversed tag order; messages arrive in tag order
// and each lands in the item whose tag it carries.
TEST_P(UcxTransfer, GroupedReceivesMatchByTag) {
  std::vector<std::vector<uint8_t>> in(kMaxRecvs, std::vector<uint8_t>(70000, 0)), out(kMaxRecvs);
  RecvItem items[kMaxRecvs];
  for (int i = 0; i < kMaxRecvs; ++i)
    items[i] = {kMaxRecvs - 1 - i, in[i].data(), in[i].size(), nullptr};
  int rs = -1;
  ASSERT_TRUE(p_.r->post(items, &rs).ok());
  std::vector<int> ss(kMaxRecvs);
  for (int tag = 0; tag < kMaxRecvs; ++tag) {
    out[tag].assign(1000u * static_cast<std::size_t>(tag + 1) * 7, static_cast<uint8_t>(tag + 1));
    SendItem si{
        {tag, PayloadKind::kRaw, out[tag].size(), out[tag].size()}, out[tag].data(), nullptr};
    ASSERT_TRUE(p_.s->post(si, &ss[tag]).ok());
  }
  Received got[kMaxRecvs];
  Status st = testutil::exchange(p_, ss, rs, got);
  ASSERT_TRUE(st.ok()) << st.message();
  for (int i = 0; i < kMaxRecvs; ++i) {
    const int tag = kMaxRecvs - 1 - i;
    EXPECT_EQ(got[i].header.tag, tag);
    ASSERT_EQ(got[i].header.original_bytes, out[tag].size());
    EXPECT_TRUE(std::equal(out[tag].begin(), out[tag].end(), in[i].begin())) << "item " << i;
  }
}

// Frames land in transport-owned staging and leave the posted buffer alone; raw messages
// land in the posted buffer.
TEST_P(UcxTransfer, FramesGoToStagingRawInPlace) {
  std::vector<uint8_t> frame(5000, 0xab), raw(3000, 0xcd), in0(8192, 0), in1(8192, 0);
  RecvItem items[2] = {{4, in0.data(), in0.size(), nullptr}, {4, in1.data(), in1.size(), nullptr}};
  int rs = -1;
  ASSERT_TRUE(p_.r->post(items, &rs).ok());
  int s0 = -1, s1 = -1;
  ASSERT_TRUE(
      p_.s->post({{4, PayloadKind::kFrame, frame.size(), 8000}, frame.data(), nullptr}, &s0).ok());
  ASSERT_TRUE(
      p_.s->post({{4, PayloadKind::kRaw, raw.size(), raw.size()}, raw.data(), nullptr}, &s1).ok());
  Received got[kMaxRecvs];
  Status st = testutil::exchange(p_, {s0, s1}, rs, got);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(got[0].header.kind, PayloadKind::kFrame);
  EXPECT_EQ(got[0].header.original_bytes, 8000u);
  ASSERT_EQ(got[0].staged.size(), frame.size());
  EXPECT_TRUE(std::equal(frame.begin(), frame.end(), got[0].staged.begin()));
  EXPECT_EQ(in0[0], 0) << "a frame must not be written into the posted buffer";
  EXPECT_EQ(got[1].header.kind, PayloadKind::kRaw);
  EXPECT_TRUE(got[1].staged.empty());
  EXPECT_TRUE(std::equal(raw.begin(), raw.end(), in1.begin()));
}

TEST_P(UcxTransfer, OversizeMessageIsAClearError) {
  std::vector<uint8_t> out(101, 1), in(100, 0);
  RecvItem ri{2, in.data(), in.size(), nullptr};
  int rs = -1, ss = -1;
  ASSERT_TRUE(p_.r->post({&ri, 1}, &rs).ok());
  ASSERT_TRUE(
      p_.s->post({{2, PayloadKind::kRaw, out.size(), out.size()}, out.data(), nullptr}, &ss).ok());
  Status st = testutil::exchange(p_, {ss}, rs);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("101 bytes exceeds the posted receive of 100 bytes"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(in[0], 0) << "nothing written";
}

TEST_P(UcxTransfer, WrongTagIsAClearError) {
  uint64_t v = 5, w = 0;
  RecvItem ri{7, &w, sizeof(w), nullptr};
  int rs = -1, ss = -1;
  ASSERT_TRUE(p_.r->post({&ri, 1}, &rs).ok());
  ASSERT_TRUE(p_.s->post({{9, PayloadKind::kRaw, sizeof(v), sizeof(v)}, &v, nullptr}, &ss).ok());
  Status st = testutil::exchange(p_, {ss}, rs);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("has tag 9 but the posted receive expects tags {7}"),
            std::string::npos)
      << st.message();
}

// 32 posted receives and 256 sends in flight; one more gets slot -1, as NCCL expects.
TEST_P(UcxTransfer, FullCommsSaySlotMinusOne) {
  std::vector<uint64_t> in(kMaxRequests);
  std::vector<int> rs;
  for (int i = 0; i < kMaxRequests; ++i) {
    RecvItem ri{0, &in[i], sizeof(uint64_t), nullptr};
    int s = -1;
    ASSERT_TRUE(p_.r->post({&ri, 1}, &s).ok());
    ASSERT_GE(s, 0);
    rs.push_back(s);
  }
  RecvItem extra{0, &in[0], sizeof(uint64_t), nullptr};
  int s = 0;
  ASSERT_TRUE(p_.r->post({&extra, 1}, &s).ok());
  EXPECT_EQ(s, -1);
  uint64_t v = 1;
  std::vector<int> ss;
  for (int i = 0; i < kMaxRequests * kMaxRecvs; ++i) {
    ASSERT_TRUE(p_.s->post({{0, PayloadKind::kRaw, sizeof(v), sizeof(v)}, &v, nullptr}, &s).ok());
    ASSERT_GE(s, 0);
    ss.push_back(s);
  }
  ASSERT_TRUE(p_.s->post({{0, PayloadKind::kRaw, sizeof(v), sizeof(v)}, &v, nullptr}, &s).ok());
  EXPECT_EQ(s, -1);
  // The first 32 messages arrive (the sends meanwhile only progress: over shm they wait for
  // the receiver to drain its FIFO), then released receive slots take the other 224.
  for (int r : rs) {
    Status st = testutil::exchange(p_, ss, r, nullptr, /*wait_sends=*/false);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  for (int i = kMaxRequests; i < kMaxRequests * kMaxRecvs; ++i) {
    ASSERT_TRUE(p_.r->post({&extra, 1}, &s).ok());
    ASSERT_GE(s, 0) << "released receive slots are reused";
    Status st = testutil::exchange(p_, ss, s, nullptr, /*wait_sends=*/false);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  Status st = testutil::exchange(p_, ss, -1);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(ss.empty()) << "all 256 sends complete once received";
}

TEST_P(UcxTransfer, ConnectCloseCyclesLeakNoFds) {
  auto cycle = [&] {
    Pair p;
    ASSERT_TRUE(testutil::connect_pair(*t_, &p));
    uint64_t out = 0x1234, in = 0;
    RecvItem ri{3, &in, sizeof(in), nullptr};
    int rs = -1, ss = -1;
    ASSERT_TRUE(p.r->post({&ri, 1}, &rs).ok());
    ASSERT_TRUE(
        p.s->post({{3, PayloadKind::kRaw, sizeof(out), sizeof(out)}, &out, nullptr}, &ss).ok());
    Status st = testutil::exchange(p, {ss}, rs);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(in, out);
  };
  for (int i = 0; i < 5; ++i) cycle();
  const int fds = testutil::count_fds();
  for (int i = 0; i < 100 && !HasFatalFailure(); ++i) cycle();
  EXPECT_EQ(testutil::count_fds(), fds) << "file descriptors leaked";
}

TEST_P(UcxLoopback, ConnectToClosedListenerFails) {
  alignas(8) unsigned char handle[kHandleBytes] = {};
  std::unique_ptr<Listener> l;
  ASSERT_TRUE(t_->listen(0, handle, &l).ok());
  l.reset();
  std::unique_ptr<SendComm> s;
  Status st;
  auto t0 = std::chrono::steady_clock::now();
  while (st.ok() && !s && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
    st = t_->connect(0, handle, &s);
  EXPECT_FALSE(st.ok()) << "connect to a closed listener must fail, not spin";
  EXPECT_EQ(s, nullptr);
}

// The peer process is SIGKILLed mid-transfer: the survivor's test() reports an error within
// seconds, in both directions.
TEST_P(UcxLoopback, KilledSenderIsAnErrorWithinSeconds) {
  double waited = testutil::killed_peer_seconds(*t_, /*peer_sends=*/true);
  EXPECT_GE(waited, 0) << "test() never reported the dead sender";
  EXPECT_LT(waited, 10.0);
}

TEST_P(UcxLoopback, KilledReceiverIsAnErrorWithinSeconds) {
  double waited = testutil::killed_peer_seconds(*t_, /*peer_sends=*/false);
  EXPECT_GE(waited, 0) << "test() never reported the dead receiver";
  EXPECT_LT(waited, 10.0);
}

auto tls_name = [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); };
INSTANTIATE_TEST_SUITE_P(Tls, UcxTransfer, ::testing::Values("tcp", "shm"), tls_name);
INSTANTIATE_TEST_SUITE_P(Tls, UcxLoopback, ::testing::Values("tcp", "shm"), tls_name);

TEST(UcxOpen, MissingLibraryIsNullWithReason) {
  UcxOptions o;
  o.library = "/nonexistent/libucp.so.0";
  std::string why;
  EXPECT_EQ(open_transport(o, {}, &why), nullptr);
  EXPECT_NE(why.find("cannot load /nonexistent/libucp.so.0"), std::string::npos) << why;
}

TEST(UcxOpen, LibraryWithoutUcpIsNullWithReason) {
  UcxOptions o;
  o.library = "libm.so.6";
  std::string why;
  EXPECT_EQ(open_transport(o, {}, &why), nullptr);
  EXPECT_NE(why.find("does not export ucp_"), std::string::npos) << why;
}

TEST(UcxOpen, UnusableTransportListIsNullWithReason) {
  ScopedEnv tls("UCX_TLS", "no_such_transport");  // UCX's own variable: UCX reads it
  std::string why;
  EXPECT_EQ(open_transport(UcxOptions{}, {}, &why), nullptr);
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace squeeze::transport::ucx
