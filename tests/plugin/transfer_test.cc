// Two processes move data through the dlopened plugin, through every exported version:
// many sizes, 8 requests in flight, posted sizes larger than what arrives, grouped
// receives and one message over 2 GiB.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/plugin/fork_peer.h"
#include "tests/plugin/plugin_api.h"

namespace squeeze::testing {
namespace {

uint8_t pattern(std::size_t msg, std::size_t i) {
  return static_cast<uint8_t>((i * 131u + msg * 7u + (i >> 12)) ^ 0x5a);
}

std::vector<std::size_t> test_sizes() {
  std::vector<std::size_t> s = {0,   1,   2,   3,    7,    8,    15,   16,   31,
                                100, 255, 256, 1000, 1023, 1024, 4095, 4096, 4097};
  for (std::size_t k = 13; k <= 22; ++k) {
    s.push_back((std::size_t{1} << k) - 1);
    s.push_back(std::size_t{1} << k);
    s.push_back((std::size_t{1} << k) + 17);
  }
  s.push_back(std::size_t{4} << 20);
  return s;
}

class Transfer : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ASSERT_EQ(api.init(), 0);
    dev = loopback_device(api);
    ASSERT_GE(dev, 0) << "no loopback device";
  }
  PluginApi api{GetParam()};
  int dev = -1;
};

// Sender side, run in the child: sends every size with up to `inflight` isends outstanding.
int send_all(PluginApi& api, int dev, unsigned char* handle, const std::vector<std::size_t>& sizes,
             int inflight) {
  void* s = nullptr;
  while (s == nullptr)
    if (api.connect(dev, handle, &s) != 0) return 10;
  std::size_t total = 0;
  for (std::size_t z : sizes) total += z;
  std::vector<uint8_t> buf(total + 1);
  void* mh = nullptr;
  if (api.reg_mr(s, buf.data(), buf.size(), &mh) != 0) return 11;
  std::vector<void*> reqs;
  std::size_t off = 0, head = 0;
  for (std::size_t m = 0; m < sizes.size(); ++m) {
    for (std::size_t i = 0; i < sizes[m]; ++i) buf[off + i] = pattern(m, i);
    void* req = nullptr;
    while (req == nullptr)
      if (api.isend(s, buf.data() + off, sizes[m], 1, mh, &req) != 0) return 12;
    reqs.push_back(req);
    off += sizes[m];
    while (reqs.size() - head >= static_cast<std::size_t>(inflight))
      if (wait_request(api, reqs[head++], nullptr, 60) != 0) return 13;
  }
  while (head < reqs.size())
    if (wait_request(api, reqs[head++], nullptr, 60) != 0) return 14;
  api.dereg_mr(s, mh);
  api.close_send(s);
  return 0;
}

TEST_P(Transfer, ManySizesEightInFlightLargerPostedSizes) {
  std::vector<std::size_t> sizes = test_sizes();
  ASSERT_GE(sizes.size(), 40u);
  alignas(8) unsigned char handle[128] = {};
  void* l = nullptr;
  ASSERT_EQ(api.listen(dev, handle, &l), 0);
  ForkPeer peer([&] { return send_all(api, dev, handle, sizes, 8); });
  ASSERT_TRUE(peer.started());
  void* r = nullptr;
  while (r == nullptr) ASSERT_EQ(api.accept(l, &r), 0);
  const std::size_t extra = 4096;  // NCCL posts the slot capacity, more than what arrives
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<void*> reqs(sizes.size());
  std::size_t posted = 0, checked = 0;
  for (std::size_t m = 0; m < sizes.size(); ++m) bufs.emplace_back(sizes[m] + extra, 0xee);
  auto check = [&](std::size_t m) {
    int got = -1;
    ASSERT_EQ(wait_request(api, reqs[m], &got, 60), 0) << "message " << m;
    ASSERT_EQ(static_cast<std::size_t>(got), sizes[m]) << "test() must report the real size";
    for (std::size_t i = 0; i < sizes[m]; ++i)
      if (bufs[m][i] != pattern(m, i)) FAIL() << "message " << m << " byte " << i << " corrupted";
    for (std::size_t i = sizes[m]; i < sizes[m] + extra; ++i)
      if (bufs[m][i] != 0xee) FAIL() << "message " << m << " wrote past its size at " << i;
  };
  while (checked < sizes.size()) {
    while (posted < sizes.size() && posted - checked < 8) {
      void* data = bufs[posted].data();
      std::size_t cap = bufs[posted].size();
      int tag = 1;
      void* mh = nullptr;
      ASSERT_EQ(api.reg_mr(r, data, cap, &mh), 0);
      void* req = nullptr;
      ASSERT_EQ(api.irecv(r, 1, &data, &cap, &tag, &mh, &req), 0);
      ASSERT_NE(req, nullptr) << "8 receives in flight must be accepted";
      reqs[posted++] = req;
    }
    check(checked++);
    if (HasFatalFailure() || HasFailure()) break;
  }
  EXPECT_EQ(peer.wait(), 0);
  api.close_recv(r);
  api.close_listen(l);
}

TEST_P(Transfer, GroupedReceivesMatchTags) {
  constexpr int kN = 8, kRounds = 6;
  alignas(8) unsigned char handle[128] = {};
  void* l = nullptr;
  ASSERT_EQ(api.listen(dev, handle, &l), 0);
  auto size_of = [](int round, int i) {
    return static_cast<std::size_t>(1000 * (i + 1) + 77 * round + (i == 3 ? 0 : 1));
  };
  ForkPeer peer([&]() -> int {
    void* s = nullptr;
    while (s == nullptr)
      if (api.connect(dev, handle, &s) != 0) return 10;
    std::vector<std::vector<uint8_t>> bufs;
    std::vector<void*> reqs;
    for (int round = 0; round < kRounds; ++round) {
      for (int k = kN - 1; k >= 0; --k) {  // reverse tag order: matching is by tag
        std::size_t z = size_of(round, k);
        bufs.emplace_back(z);
        for (std::size_t i = 0; i < z; ++i)
          bufs.back()[i] = pattern(static_cast<std::size_t>(round * kN + k), i);
        void* req = nullptr;
        while (req == nullptr)
          if (api.isend(s, bufs.back().data(), z, 100 + k, nullptr, &req) != 0) return 11;
        reqs.push_back(req);
      }
    }
    for (void* q : reqs)
      if (wait_request(api, q, nullptr, 60) != 0) return 12;
    api.close_send(s);
    return 0;
  });
  void* r = nullptr;
  while (r == nullptr) ASSERT_EQ(api.accept(l, &r), 0);
  std::vector<std::vector<uint8_t>> bufs(kRounds * kN, std::vector<uint8_t>(64 * 1024, 0));
  std::vector<void*> reqs;
  for (int round = 0; round < kRounds; ++round) {
    void* data[kN];
    std::size_t sizes[kN];
    int tags[kN];
    void* mhs[kN] = {};
    for (int i = 0; i < kN; ++i) {
      data[i] = bufs[round * kN + i].data();
      sizes[i] = bufs[round * kN + i].size();
      tags[i] = 100 + i;
    }
    void* req = nullptr;
    ASSERT_EQ(api.irecv(r, kN, data, sizes, tags, mhs, &req), 0);
    ASSERT_NE(req, nullptr);
    reqs.push_back(req);
  }
  for (int round = 0; round < kRounds; ++round) {
    int got[kN];
    std::fill(got, got + kN, -1);
    ASSERT_EQ(wait_request(api, reqs[round], got, 60), 0);
    for (int i = 0; i < kN; ++i) {
      ASSERT_EQ(static_cast<std::size_t>(got[i]), size_of(round, i))
          << "round " << round << " item " << i;
      const auto& b = bufs[round * kN + i];
      for (std::size_t j = 0; j < size_of(round, i); ++j)
        ASSERT_EQ(b[j], pattern(static_cast<std::size_t>(round * kN + i), j))
            << "round " << round << " item " << i;
    }
  }
  EXPECT_EQ(peer.wait(), 0);
  api.close_recv(r);
  api.close_listen(l);
}

TEST_P(Transfer, MessageOverTwoGiB) {
  if (GetParam() == 8)
    GTEST_SKIP() << "v8 sizes are int: NCCL never gives v8 more than 1 GiB per request";
  if (getenv("SQUEEZE_UNDER_SANITIZER") != nullptr)
    GTEST_SKIP() << "2 GiB buffers are too slow under ASan";
  const std::size_t z = (std::size_t{2} << 30) + 4097;
  alignas(8) unsigned char handle[128] = {};
  void* l = nullptr;
  ASSERT_EQ(api.listen(dev, handle, &l), 0);
  ForkPeer peer([&]() -> int {
    void* s = nullptr;
    while (s == nullptr)
      if (api.connect(dev, handle, &s) != 0) return 10;
    std::vector<uint8_t> buf(z);
    for (std::size_t i = 0; i < z; i += 4093) buf[i] = pattern(0, i);
    buf[z - 1] = 0x77;
    void* req = nullptr;
    while (req == nullptr)
      if (api.isend(s, buf.data(), z, 5, nullptr, &req) != 0) return 11;
    if (wait_request(api, req, nullptr, 120) != 0) return 12;
    api.close_send(s);
    return 0;
  });
  void* r = nullptr;
  while (r == nullptr) ASSERT_EQ(api.accept(l, &r), 0);
  std::vector<uint8_t> buf(z);
  void* data = buf.data();
  std::size_t cap = z;
  int tag = 5;
  void* mh = nullptr;
  void* req = nullptr;
  ASSERT_EQ(api.irecv(r, 1, &data, &cap, &tag, &mh, &req), 0);
  ASSERT_EQ(wait_request(api, req, nullptr, 120), 0);
  for (std::size_t i = 0; i + 1 < z; i += 4093) ASSERT_EQ(buf[i], pattern(0, i)) << "byte " << i;
  EXPECT_EQ(buf[z - 1], 0x77);
  EXPECT_EQ(peer.wait(), 0);
  api.close_recv(r);
  api.close_listen(l);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, Transfer, ::testing::Values(8, 9, 10, 11, 12),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string("v").append(std::to_string(p.param));
                         });

}  // namespace
}  // namespace squeeze::testing
