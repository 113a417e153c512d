// Raw GPU memory through the dlopened plugin with SQUEEZE_GPU_STAGING=1, over loopback (TCP
// unless SQUEEZE_TRANSPORT says otherwise): GPU-to-GPU transfers bit-exact at many sizes (0
// and odd ones included) with posted sizes larger than sent, and grouped receives matched by
// tag. The codecs are in plugin_gpu_staging_codecs_test.cc. Skips without a GPU.
#include <cstring>
#include <vector>

#include "tests/gpu/staging_fixture.h"

namespace squeeze::gpu_staging_test {
namespace {

TEST_F(PluginGpuStaging, RawGpuToGpuIsBitExactAtManySizes) {
  const std::vector<std::size_t> sizes = {
      0, 1, 3, 7, 4095, 4097, 65536 + 13, 1 << 20, (1 << 20) + 7, 4 << 20};
  std::size_t sbytes = 0, rbytes = 0;
  const std::vector<Msg> msgs = layout(sizes, 4096, &sbytes, &rbytes);
  DeviceBuffer sbuf(sbytes), rbuf(rbytes, 0xee);
  for (std::size_t m = 0; m < msgs.size(); ++m)
    sbuf.upload(bytes_pattern(sizes[m], static_cast<unsigned>(m)).data(), sizes[m],
                msgs[m].send_off);
  register_regions(sbuf.get(), sbytes, kPtrCuda, rbuf.get(), rbytes, kPtrCuda);
  std::vector<int> got;
  ASSERT_TRUE(run(sbuf.get(), rbuf.get(), msgs, &got));
  const std::vector<uint8_t> out = rbuf.download();
  for (std::size_t m = 0; m < msgs.size(); ++m) {
    ASSERT_EQ(static_cast<std::size_t>(got[m]), sizes[m]) << "test() must report the size sent";
    const auto want = bytes_pattern(sizes[m], static_cast<unsigned>(m));
    ASSERT_EQ(0, std::memcmp(out.data() + msgs[m].recv_off, want.data(), sizes[m]))
        << "message " << m;
    for (std::size_t i = sizes[m]; i < msgs[m].cap; ++i)
      ASSERT_EQ(out[msgs[m].recv_off + i], 0xee)
          << "message " << m << " wrote past its size at " << i;
  }
  // Every message went through the policy (raw by rule), none the GPUDirect way.
  const nlohmann::json after = stats_after();
  EXPECT_EQ(rule_count(after, "default", "unknown", "", "policy") -
                rule_count(before_, "default", "unknown", "", "policy"),
            sizes.size());
  EXPECT_EQ(rule_count(after, "default", "unknown", "", "device_memory"),
            rule_count(before_, "default", "unknown", "", "device_memory"));
}

TEST_F(PluginGpuStaging, GroupedReceivesIntoGpuMemoryMatchTags) {
  constexpr int kN = 8, kRounds = 4;
  constexpr std::size_t kCap = 64 * 1024;
  auto size_of = [](int round, int i) {
    return static_cast<std::size_t>(1000 * (i + 1) + 77 * round + (i == 3 ? 0 : 1));
  };
  std::vector<std::size_t> send_off(kRounds * kN);
  std::size_t sbytes = 1;
  for (int k = 0; k < kRounds * kN; ++k)
    send_off[static_cast<std::size_t>(k)] = sbytes, sbytes += size_of(k / kN, k % kN);
  DeviceBuffer sbuf(sbytes), rbuf(kRounds * kN * kCap, 0xee);
  for (int k = 0; k < kRounds * kN; ++k)
    sbuf.upload(bytes_pattern(size_of(k / kN, k % kN), static_cast<unsigned>(k)).data(),
                size_of(k / kN, k % kN), send_off[static_cast<std::size_t>(k)]);
  register_regions(sbuf.get(), sbytes, kPtrCuda, rbuf.get(), rbuf.size(), kPtrCuda);
  std::vector<void*> rreq(kRounds), sreq;
  for (int round = 0; round < kRounds; ++round) {
    void* data[kN];
    std::size_t caps[kN];
    int tags[kN];
    void* mhs[kN];
    void* phs[kN] = {};
    for (int i = 0; i < kN; ++i) {
      data[i] = rbuf.get() + static_cast<std::size_t>(round * kN + i) * kCap;
      caps[i] = kCap;
      tags[i] = 100 + i;
      mhs[i] = rmh_;
    }
    ASSERT_EQ(
        net_->irecv(recv_, kN, data, caps, tags, mhs, phs, &rreq[static_cast<std::size_t>(round)]),
        0);
    ASSERT_NE(rreq[static_cast<std::size_t>(round)], nullptr);
    for (int i = kN - 1; i >= 0; --i) {  // reverse tag order: matching is by tag
      const int k = round * kN + i;
      void* req = nullptr;
      ASSERT_EQ(net_->isend(send_, sbuf.get() + send_off[static_cast<std::size_t>(k)],
                            size_of(round, i), 100 + i, smh_, nullptr, &req),
                0);
      ASSERT_NE(req, nullptr);
      sreq.push_back(req);
    }
  }
  std::size_t ds = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int round = 0; round < kRounds; ++round) {
    int done = 0, got[kN];
    while (!done) {
      ASSERT_EQ(net_->test(rreq[static_cast<std::size_t>(round)], &done, got), 0);
      int sdone = 0;
      if (ds < sreq.size()) {
        ASSERT_EQ(net_->test(sreq[ds], &sdone, nullptr), 0);
      }
      if (sdone) ++ds;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "round " << round << " never completed";
    }
    for (int i = 0; i < kN; ++i)
      ASSERT_EQ(static_cast<std::size_t>(got[i]), size_of(round, i)) << "round " << round;
  }
  for (int sdone = 0; ds < sreq.size(); ds += static_cast<std::size_t>(sdone), sdone = 0)
    ASSERT_EQ(net_->test(sreq[ds], &sdone, nullptr), 0);
  const std::vector<uint8_t> out = rbuf.download();
  for (int k = 0; k < kRounds * kN; ++k) {
    const auto want = bytes_pattern(size_of(k / kN, k % kN), static_cast<unsigned>(k));
    ASSERT_EQ(
        0, std::memcmp(out.data() + static_cast<std::size_t>(k) * kCap, want.data(), want.size()))
        << "item " << k;
  }
}

// Where CUDA has no device (or no driver), SQUEEZE_GPU_STAGING=1 must leave the plugin as it
// was: host memory only, GPU registrations refused, and the reason said at INFO.
TEST(PluginGpuStagingOff, WithoutACudaDeviceStagingStaysOffAndSaysWhy) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0)
    GTEST_SKIP() << "a CUDA device is present: the PluginGpuStaging tests cover it";
  set_staging_env();
  std::string why;
  nccl_net_v11* net = load_plugin(&why);
  ASSERT_NE(net, nullptr) << why;
  void* ctx = nullptr;
  nccl_net_comm_config cfg{-1};
  ASSERT_EQ(net->init(&ctx, 42, &cfg, test_logger, nullptr), 0);
  bool said = false;
  for (const std::string& line : plugin_log())
    said |= line.find("GPU staging off: no CUDA device (") != std::string::npos;
  EXPECT_TRUE(said) << "the INFO line saying why GPU staging is off is missing";
  int ndev = 0;
  ASSERT_EQ(net->devices(&ndev), 0);
  int dev = -1;
  for (int d = 0; d < ndev; ++d) {
    nccl_net_props_v11 p{};
    ASSERT_EQ(net->getProperties(d, &p), 0);
    EXPECT_EQ(p.ptrSupport & kPtrCuda, 0)
        << "device " << d << " declares NCCL_PTR_CUDA without a GPU";
    if (p.name != nullptr && std::string(p.name) == "lo") dev = d;
  }
  ASSERT_GE(dev, 0);
  alignas(8) unsigned char handle[128] = {};
  void *l = nullptr, *s = nullptr, *r = nullptr;
  nccl_net_device_handle* dh = nullptr;
  ASSERT_EQ(net->listen(ctx, dev, handle, &l), 0);
  for (int i = 0; i < 2000000 && (s == nullptr || r == nullptr); ++i) {
    if (s == nullptr) {
      ASSERT_EQ(net->connect(ctx, dev, handle, &s, &dh), 0);
    }
    if (r == nullptr) {
      ASSERT_EQ(net->accept(l, &r, &dh), 0);
    }
  }
  ASSERT_TRUE(s != nullptr && r != nullptr);
  std::vector<uint8_t> buf(4096);
  void* mh = nullptr;
  EXPECT_NE(net->regMr(s, buf.data(), buf.size(), kPtrCuda, &mh), 0)
      << "NCCL_PTR_CUDA was not declared";
  EXPECT_EQ(mh, nullptr);
  EXPECT_EQ(net->regMr(s, buf.data(), buf.size(), kPtrHost, &mh), 0);
  EXPECT_EQ(net->deregMr(s, mh), 0);
  net->closeSend(s);
  net->closeRecv(r);
  net->closeListen(l);
  net->finalize(ctx);
}

}  // namespace
}  // namespace squeeze::gpu_staging_test
