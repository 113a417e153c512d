// The fixture of the GPU staging tests: the plugin with SQUEEZE_GPU_STAGING=1 and a test
// policy, a loopback connection (send and receive comm in this process), and the plugin's
// statistics before and after each test. Skips when there is no CUDA device.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>

#include "tests/gpu/staging_harness.h"

namespace squeeze::gpu_staging_test {

// alltoall: quantize (abs 0.01); send: lossless with checksums; allgather: threshold 25 %.
// The dtype is assumed: the test passes no profiler callback, as with NCCL_PROFILER_PLUGIN=none.
inline constexpr const char* kPolicy = R"({"version": 1, "tuner": false, "rules": [
  {"name": "q", "match": {"collective": "alltoall"}, "assume_dtype": "float32",
   "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.01}},
  {"name": "ll", "match": {"collective": "send"}, "codec": "lossless", "checksum": true},
  {"name": "t", "match": {"collective": "allgather"}, "assume_dtype": "float32",
   "codec": "threshold", "keep": 0.25}],
  "default": {"codec": "raw"}})";

inline std::string temp_path(const char* what) {
  return "/tmp/squeeze-gpu-staging-" + std::to_string(getpid()) + what;
}

inline std::vector<uint8_t> bytes_pattern(std::size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>((i * 131u + seed * 7u + (i >> 12)) ^ 0x5a);
  return v;
}

// Incompressible bytes.
inline std::vector<uint8_t> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(rng() >> 24);
  return v;
}

inline std::vector<float> floats(std::size_t n, unsigned seed, double zero_fraction = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_real_distribution<double> z(0, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = z(rng) < zero_fraction ? 0.0f : u(rng);
  return v;
}

// The statistics file the plugin writes at finalize (SQUEEZE_STATS with rank 0).
inline std::string staging_stats_file() { return temp_path("-stats-0.json"); }

// The plugin reads these once, at its first init in this process (NCCL_DEBUG at load).
inline void set_staging_env() {
  const std::string policy = temp_path("-policy.json");
  FILE* f = fopen(policy.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(kPolicy, f);
  fclose(f);
  std::remove(staging_stats_file().c_str());
  setenv("SQUEEZE_GPU_STAGING", "1", 1);
  setenv("SQUEEZE_POLICY", policy.c_str(), 1);
  setenv("SQUEEZE_STATS", temp_path("-stats-%r.json").c_str(), 1);
  setenv("SQUEEZE_RANK", "0", 1);
  setenv("SQUEEZE_BYPASS", "off", 1);  // compress on loopback too, for the host sender
  setenv("SQUEEZE_SOCKET_IFNAME", "lo", 0);
  setenv("SQUEEZE_TRANSPORT", "tcp", 0);
  setenv("NCCL_DEBUG", "INFO", 0);
}

class PluginGpuStaging : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { set_staging_env(); }

  void SetUp() override {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
      GTEST_SKIP() << "no usable CUDA device: cudaGetDeviceCount: " << cudaGetErrorName(e) << " ("
                   << cudaGetErrorString(e) << ")";
    if (n == 0) GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount found 0)";
    std::string why;
    net_ = load_plugin(&why);
    ASSERT_NE(net_, nullptr) << why;
    before_ = snapshot();
    int ndev = 0;
    ASSERT_EQ(net_->devices(&ndev), 0);
    for (int d = 0; d < ndev && dev_ < 0; ++d) {
      nccl_net_props_v11 p{};
      ASSERT_EQ(net_->getProperties(d, &p), 0);
      if (p.name != nullptr && std::string(p.name) == "lo") {
        dev_ = d;
        ASSERT_TRUE(p.ptrSupport & kPtrCuda)
            << "GPU staging must declare NCCL_PTR_CUDA (ptrSupport " << p.ptrSupport << ")";
      }
    }
    ASSERT_GE(dev_, 0) << "no loopback device";
    alignas(8) unsigned char handle[128] = {};
    ASSERT_EQ(net_->listen(ctx_, dev_, handle, &listen_), 0);
    nccl_net_device_handle* dh = nullptr;
    for (int i = 0; i < 2000000 && (send_ == nullptr || recv_ == nullptr); ++i) {
      if (send_ == nullptr) {
        ASSERT_EQ(net_->connect(ctx_, dev_, handle, &send_, &dh), 0);
      }
      if (recv_ == nullptr) {
        ASSERT_EQ(net_->accept(listen_, &recv_, &dh), 0);
      }
    }
    ASSERT_TRUE(send_ != nullptr && recv_ != nullptr) << "loopback connection never completed";
  }

  void TearDown() override {
    close_comms();
    if (ctx_ != nullptr) net_->finalize(ctx_);
  }

  void close_comms() {
    if (send_ != nullptr) {
      if (smh_ != nullptr) net_->deregMr(send_, smh_);
      net_->closeSend(send_);
    }
    if (recv_ != nullptr) {
      if (rmh_ != nullptr) net_->deregMr(recv_, rmh_);
      net_->closeRecv(recv_);
    }
    if (listen_ != nullptr) net_->closeListen(listen_);
    send_ = recv_ = listen_ = smh_ = rmh_ = nullptr;
  }

  // Finalizes the context (which writes the statistics), reads them and opens a new context.
  nlohmann::json snapshot() {
    if (ctx_ != nullptr) {
      EXPECT_EQ(net_->finalize(ctx_), 0);
    }
    ctx_ = nullptr;
    nlohmann::json s = read_stats(staging_stats_file());
    nccl_net_comm_config cfg{-1};
    EXPECT_EQ(net_->init(&ctx_, 42, &cfg, test_logger, nullptr), 0);
    return s;
  }
  // Statistics after the test's transfers; closes the comms first (they use the context).
  nlohmann::json stats_after() {
    close_comms();
    return snapshot();
  }

  void set_op(uint32_t op, uint32_t algo = kUndef, uint32_t proto = kUndef) {
    nccl_net_attr_v11 a{};
    a.op = op;
    a.algo = algo;
    a.proto = proto;
    ASSERT_EQ(net_->setNetAttr(ctx_, &a), 0);
  }

  // Registers one region per side, as a point-to-point connection does (so its protocol is
  // known to be SIMPLE).
  void register_regions(void* sbuf, std::size_t sbytes, int stype, void* rbuf, std::size_t rbytes,
                        int rtype) {
    ASSERT_EQ(net_->regMr(send_, sbuf, sbytes, stype, &smh_), 0);
    ASSERT_EQ(net_->regMr(recv_, rbuf, rbytes, rtype, &rmh_), 0);
  }

  // Moves msgs with up to 8 in flight each way, polling both ends; receives are tested in
  // posting order. *sizes: what test() reported for each receive.
  ::testing::AssertionResult run(uint8_t* sbuf, uint8_t* rbuf, const std::vector<Msg>& msgs,
                                 std::vector<int>* sizes) {
    const std::size_t n = msgs.size();
    std::vector<void*> sreq(n), rreq(n);
    std::size_t ns = 0, nr = 0, ds = 0, dr = 0;
    sizes->assign(n, -1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ds < n || dr < n) {
      while (nr < n && nr - dr < 8) {
        void* data = rbuf + msgs[nr].recv_off;
        std::size_t cap = msgs[nr].cap;
        int tag = msgs[nr].tag;
        void* mh = rmh_;
        void* ph = nullptr;
        if (int rc = net_->irecv(recv_, 1, &data, &cap, &tag, &mh, &ph, &rreq[nr]); rc != 0)
          return ::testing::AssertionFailure() << "irecv " << nr << " returned " << rc;
        if (rreq[nr] == nullptr) break;
        ++nr;
      }
      while (ns < n && ns - ds < 8) {
        if (int rc = net_->isend(send_, sbuf + msgs[ns].send_off, msgs[ns].size, msgs[ns].tag, smh_,
                                 nullptr, &sreq[ns]);
            rc != 0)
          return ::testing::AssertionFailure() << "isend " << ns << " returned " << rc;
        if (sreq[ns] == nullptr) break;
        ++ns;
      }
      int done = 0;
      if (ds < ns) {
        if (int rc = net_->test(sreq[ds], &done, nullptr); rc != 0)
          return ::testing::AssertionFailure() << "test(send " << ds << ") returned " << rc;
        if (done) ++ds;
      }
      if (dr < nr) {
        done = 0;
        if (int rc = net_->test(rreq[dr], &done, &(*sizes)[dr]); rc != 0)
          return ::testing::AssertionFailure() << "test(receive " << dr << ") returned " << rc;
        if (done) ++dr;
      }
      if (std::chrono::steady_clock::now() > deadline)
        return ::testing::AssertionFailure() << "timed out: " << ds << "/" << n << " sends, " << dr
                                             << "/" << n << " receives done";
    }
    return ::testing::AssertionSuccess();
  }

  nccl_net_v11* net_ = nullptr;
  void* ctx_ = nullptr;
  int dev_ = -1;
  void *send_ = nullptr, *recv_ = nullptr, *listen_ = nullptr, *smh_ = nullptr, *rmh_ = nullptr;
  nlohmann::json before_;
};

}  // namespace squeeze::gpu_staging_test
