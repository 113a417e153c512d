// Compressed GPU memory through the dlopened plugin with SQUEEZE_GPU_STAGING=1: frames
// encoded on the GPU and decoded on the GPU (quantize within its bound, lossless bit-exact,
// threshold keeping exact values), CPU frames decoded on the GPU and GPU frames on the CPU
// (host sender or host receiver), and a stored frame too large for the receive's staging.
// The plugin's statistics show each message was encoded and decoded. Skips without a GPU.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/gpu/staging_fixture.h"

namespace squeeze::gpu_staging_test {
namespace {

constexpr double kBound = 0.01;  // the policy's "q" rule

std::vector<uint8_t> as_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Host or device memory for one end of a transfer.
class Buffer {
 public:
  Buffer(bool gpu, std::size_t n, uint8_t fill) : gpu_(gpu) {
    if (gpu)
      dev_ = std::make_unique<DeviceBuffer>(n, fill);
    else
      host_.assign(n, fill);
  }
  uint8_t* get() { return gpu_ ? dev_->get() : host_.data(); }
  int type() const { return gpu_ ? kPtrCuda : kPtrHost; }
  void upload(const std::vector<uint8_t>& b, std::size_t off) {
    if (gpu_)
      dev_->upload(b.data(), b.size(), off);
    else
      std::memcpy(host_.data() + off, b.data(), b.size());
  }
  std::vector<uint8_t> download() const { return gpu_ ? dev_->download() : host_; }

 private:
  bool gpu_;
  std::unique_ptr<DeviceBuffer> dev_;
  std::vector<uint8_t> host_;
};

class PluginGpuStagingCodecs : public PluginGpuStaging {
 protected:
  // Sends `data` (one message each) from a GPU or host buffer to a GPU or host buffer under
  // collective op `op`; returns what arrived, message by message.
  std::vector<std::vector<uint8_t>> transfer(bool gpu_send, bool gpu_recv, uint32_t op,
                                             const std::vector<std::vector<uint8_t>>& data,
                                             std::size_t extra = 4096) {
    std::vector<std::size_t> sizes;
    for (const auto& d : data) sizes.push_back(d.size());
    std::size_t sbytes = 0, rbytes = 0;
    const std::vector<Msg> msgs = layout(sizes, extra, &sbytes, &rbytes);
    Buffer sbuf(gpu_send, sbytes, 0), rbuf(gpu_recv, rbytes, 0xee);
    for (std::size_t m = 0; m < msgs.size(); ++m) sbuf.upload(data[m], msgs[m].send_off);
    register_regions(sbuf.get(), sbytes, sbuf.type(), rbuf.get(), rbytes, rbuf.type());
    if (op == kOpAllGather)
      set_op(op, kAlgoRing, kProtoSimple);
    else
      set_op(op);
    std::vector<int> got;
    EXPECT_TRUE(run(sbuf.get(), rbuf.get(), msgs, &got));
    const std::vector<uint8_t> all = rbuf.download();
    std::vector<std::vector<uint8_t>> out;
    for (std::size_t m = 0; m < msgs.size(); ++m) {
      EXPECT_EQ(static_cast<std::size_t>(got[m]), sizes[m])
          << "message " << m << ": test() must report the size sent";
      out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(msgs[m].recv_off),
                       all.begin() + static_cast<std::ptrdiff_t>(msgs[m].recv_off + sizes[m]));
      for (std::size_t i = sizes[m]; i < msgs[m].cap; ++i)
        if (all[msgs[m].recv_off + i] != 0xee)
          ADD_FAILURE() << "message " << m << " wrote past its size at " << i;
    }
    return out;
  }

  // Largest |x - x'| over the messages, and whether any element changed.
  static double max_error(const std::vector<std::vector<float>>& sent,
                          const std::vector<std::vector<uint8_t>>& got, bool* changed) {
    double worst = 0;
    *changed = false;
    for (std::size_t m = 0; m < sent.size(); ++m) {
      std::vector<float> y(sent[m].size());
      EXPECT_EQ(got[m].size(), y.size() * sizeof(float));
      std::memcpy(y.data(), got[m].data(), std::min(got[m].size(), y.size() * sizeof(float)));
      for (std::size_t i = 0; i < y.size(); ++i) {
        worst = std::max(worst, std::fabs(static_cast<double>(y[i]) - sent[m][i]));
        *changed |= y[i] != sent[m][i];
      }
    }
    return worst;
  }

  // Encoded messages of a rule and decoded messages of a codec during this test.
  void expect_coded(const char* rule, const char* coll, const char* codec, uint64_t messages) {
    const nlohmann::json after = stats_after();
    SCOPED_TRACE(after.dump());
    EXPECT_EQ(
        rule_count(after, rule, coll, "messages") - rule_count(before_, rule, coll, "messages"),
        messages);
    EXPECT_EQ(rule_count(after, rule, coll, "", "failed"),
              rule_count(before_, rule, coll, "", "failed"));
    EXPECT_EQ(rule_count(after, rule, coll, "", "not_worth_it"),
              rule_count(before_, rule, coll, "", "not_worth_it"));
    EXPECT_EQ(decode_count(after, codec, coll) - decode_count(before_, codec, coll), messages);
    EXPECT_LT(
        rule_count(after, rule, coll, "bytes_out") - rule_count(before_, rule, coll, "bytes_out"),
        rule_count(after, rule, coll, "bytes_in") - rule_count(before_, rule, coll, "bytes_in"));
  }

  void quantized(bool gpu_send, bool gpu_recv) {
    const std::vector<std::vector<float>> sent = {floats(262144, 1), floats(262144, 2),
                                                  floats(1000, 3), floats(65537, 4)};
    std::vector<std::vector<uint8_t>> data;
    for (const auto& s : sent) data.push_back(as_bytes(s));
    const auto got = transfer(gpu_send, gpu_recv, kOpAllToAll, data);
    bool changed = false;
    EXPECT_LE(max_error(sent, got, &changed), kBound * (1 + 1e-6));
    EXPECT_TRUE(changed) << "quantized data came back exact: it was not coded";
    expect_coded("q", "alltoall", "quantize", sent.size());
  }

  void lossless(bool gpu_send, bool gpu_recv) {
    // Mostly zero floats, bytes whose size is no multiple of 4, and incompressible bytes.
    const std::vector<std::vector<uint8_t>> data = {
        as_bytes(floats(262144, 5, 0.9)), as_bytes(floats(16385, 6, 0.95)),
        std::vector<uint8_t>(12345, 0), random_bytes(5000, 7)};
    const auto got = transfer(gpu_send, gpu_recv, kOpSend, data);
    for (std::size_t m = 0; m < data.size(); ++m)
      EXPECT_TRUE(got[m] == data[m]) << "message " << m << " not bit-exact";
  }
};

TEST_F(PluginGpuStagingCodecs, QuantizeGpuToGpuStaysWithinItsBound) { quantized(true, true); }
TEST_F(PluginGpuStagingCodecs, QuantizeHostSenderToGpuReceiver) { quantized(false, true); }
TEST_F(PluginGpuStagingCodecs, QuantizeGpuSenderToHostReceiver) { quantized(true, false); }

TEST_F(PluginGpuStagingCodecs, LosslessGpuToGpuIsBitExact) {
  lossless(true, true);
  const nlohmann::json after = stats_after();
  // The random bytes do not shrink and go raw (not worth it); the other three are frames.
  EXPECT_EQ(
      rule_count(after, "ll", "send", "messages") - rule_count(before_, "ll", "send", "messages"),
      3u);
  EXPECT_EQ(rule_count(after, "ll", "send", "", "not_worth_it") -
                rule_count(before_, "ll", "send", "", "not_worth_it"),
            1u);
  EXPECT_EQ(rule_count(after, "ll", "send", "", "failed"),
            rule_count(before_, "ll", "send", "", "failed"));
  EXPECT_EQ(decode_count(after, "lossless", "send") - decode_count(before_, "lossless", "send"),
            3u);
}
TEST_F(PluginGpuStagingCodecs, LosslessHostSenderToGpuReceiver) { lossless(false, true); }
TEST_F(PluginGpuStagingCodecs, LosslessGpuSenderToHostReceiver) { lossless(true, false); }

TEST_F(PluginGpuStagingCodecs, ThresholdGpuToGpuKeepsExactValuesOrZero) {
  const std::vector<float> sent = floats(262144, 8);
  const auto got = transfer(true, true, kOpAllGather, {as_bytes(sent)});
  std::vector<float> y(sent.size());
  ASSERT_EQ(got[0].size(), y.size() * sizeof(float));
  std::memcpy(y.data(), got[0].data(), got[0].size());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_TRUE(y[i] == sent[i] || y[i] == 0.0f)
        << "element " << i << ": " << y[i] << " for " << sent[i];
    kept += y[i] != 0.0f;
  }
  EXPECT_GT(kept, sent.size() / 8) << "the policy keeps 25 %";
  EXPECT_LT(kept, sent.size() / 2) << "the policy keeps 25 %";
  expect_coded("t", "allgather", "threshold", 1);
}

TEST_F(PluginGpuStagingCodecs, StoredFrameLargerThanTheReceiveIsDecodedOnTheHost) {
  // A host sender's lossless frame of incompressible bytes is a stored frame, 40 bytes more
  // than the message; posted with no spare room it cannot be staged whole on the receiver,
  // which decodes it on the CPU into the mirror and copies the bytes to the GPU.
  const std::vector<std::vector<uint8_t>> data = {random_bytes(100003, 9), random_bytes(70001, 10)};
  const auto got = transfer(false, true, kOpSend, data, 0);
  for (std::size_t m = 0; m < data.size(); ++m)
    EXPECT_TRUE(got[m] == data[m]) << "message " << m << " not bit-exact";
}

TEST_F(PluginGpuStagingCodecs, HostMemoryRegisteredAsCudaIsRefused) {
  std::vector<uint8_t> host(4096);
  void* mh = nullptr;
  EXPECT_NE(net_->regMr(send_, host.data(), host.size(), kPtrCuda, &mh), 0);
  EXPECT_EQ(mh, nullptr);
}

}  // namespace
}  // namespace squeeze::gpu_staging_test
