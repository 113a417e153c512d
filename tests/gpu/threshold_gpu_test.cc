// The CUDA threshold body against the CPU reference: the same tau and the same bytes for
// the same input and parameters (without error feedback). Skips without a GPU.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "compress/threshold.h"
#include "tests/compress/test_data.h"
#include "tests/gpu/gpu_body_test_util.h"

namespace squeeze::compress {
namespace {

using gpu_test::DeviceBytes;
namespace td = ::squeeze::testdata;

class ThresholdGpu : public gpu_test::GpuBodies {
 protected:
  void check(Dtype dt, const std::vector<uint8_t>& in, const ThresholdParams& p,
             const std::string& what) {
    SCOPED_TRACE(what + " " + dtype_name(dt) + " n=" + std::to_string(in.size() / dtype_size(dt)) +
                 " keep " + std::to_string(p.keep) + " values " + dtype_name(p.value_dtype));
    const uint64_t n = in.size() / dtype_size(dt);
    CodecParams cp;
    cp.codec = CodecId::kThreshold;
    cp.threshold = p;
    cp.threshold.error_feedback = false;
    EncodeRequest req{dt, in.data(), n, &cp, nullptr};
    std::vector<uint8_t> cpu(threshold_body_bound(req));
    std::size_t cpu_n = 0;
    Status cs = threshold_encode_body(req, cpu, &cpu_n, /*allow_expansion=*/true);
    ASSERT_TRUE(cs.ok()) << cs.message();
    cpu.resize(cpu_n);
    DeviceBytes src(in), dst(threshold_body_bound(req));
    Status gs = gpu::enqueue_threshold_body_encode(dt, src.get(), n, p, nullptr, true, dst.get(),
                                                   dst.size(), result_, stream_);
    ASSERT_TRUE(gs.ok()) << gs.message();
    const gpu::BodyResult r = wait_result();
    ASSERT_EQ(r.code, 0u);
    EXPECT_EQ(dst.download(r.bytes), cpu) << "GPU body differs from the CPU body";
    // The GPU decodes the CPU's body to the CPU's output.
    std::vector<uint8_t> want(in.size());
    ASSERT_TRUE(threshold_decode_body(cpu, dt, n, want).ok());
    gpu::BodyResult dr;
    EXPECT_EQ(gpu_decode(cpu, dt, n, &dr), want);
    EXPECT_EQ(dr.code, 0u);
  }
  // GPU decode into a buffer pre-filled with 0xA5; returns the count * width bytes.
  std::vector<uint8_t> gpu_decode(const std::vector<uint8_t>& body, Dtype dt, uint64_t n,
                                  gpu::BodyResult* r, bool expect_untouched_on_failure = true) {
    const std::size_t bytes = n * dtype_size(dt);
    DeviceBytes b(body), dst(bytes + 64, 0xA5);
    const Status s = gpu::enqueue_threshold_body_decode(b.get(), body.size(), dt, n, dst.get(),
                                                        bytes, result_, stream_);
    EXPECT_TRUE(s.ok()) << s.message();
    *r = wait_result();
    std::vector<uint8_t> out = dst.download(dst.size());
    for (std::size_t i = bytes; i < out.size(); ++i) EXPECT_EQ(out[i], 0xA5) << "wrote past dst";
    if (r->code != 0 && expect_untouched_on_failure) {
      for (std::size_t i = 0; i < bytes; ++i)
        EXPECT_EQ(out[i], 0xA5) << "a rejected body wrote dst";
    }
    out.resize(bytes);
    return out;
  }
};

TEST_F(ThresholdGpu, MalformedBodiesAgreeWithTheCpuAndWriteNothing) {
  const std::size_t n = 30011;
  const std::vector<uint8_t> in =
      td::to_dtype(td::make_floats(td::Dist::kGaussian, n, 10), Dtype::kFloat32);
  for (double keep : {0.01, 0.5}) {
    CodecParams cp;
    cp.codec = CodecId::kThreshold;
    cp.threshold.keep = keep;
    EncodeRequest req{Dtype::kFloat32, in.data(), n, &cp, nullptr};
    std::vector<uint8_t> good(threshold_body_bound(req));
    std::size_t len = 0;
    ASSERT_TRUE(threshold_encode_body(req, good, &len, true).ok());
    good.resize(len);
    std::vector<std::vector<uint8_t>> bad;
    for (std::size_t cut : {0ul, 5ul, 16ul, len / 2, len - 1}) {
      bad.emplace_back(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    }
    bad.push_back(good);
    bad.back().push_back(0);
    for (std::size_t at = 0; at < len; at += 13) {
      bad.push_back(good);
      bad.back()[at] ^= static_cast<uint8_t>(1u << (at % 8));
    }
    for (const auto& b : bad) {
      std::vector<uint8_t> cpu_out(in.size());
      const bool cpu_ok = threshold_decode_body(b, Dtype::kFloat32, n, cpu_out).ok();
      gpu::BodyResult r;
      const std::vector<uint8_t> out = gpu_decode(b, Dtype::kFloat32, n, &r);
      ASSERT_EQ(r.code == 0, cpu_ok) << "keep " << keep << " body of " << b.size() << " bytes";
      if (cpu_ok) {
        ASSERT_EQ(out, cpu_out);
      }
    }
  }
}

TEST_F(ThresholdGpu, SameBytesAsTheCpu) {
  for (std::size_t n : {0ul, 1ul, 9ul, 1000ul, 65535ul, 65537ul, 1000003ul}) {
    for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
      for (td::Dist d : {td::Dist::kGaussian, td::Dist::kHeavyTailed, td::Dist::kSparse,
                         td::Dist::kSpecial, td::Dist::kZero, td::Dist::kDenormal}) {
        for (double keep : {0.001, 0.01, 0.3, 1.0}) {
          for (Dtype vd : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
            ThresholdParams p;
            p.keep = keep;
            p.value_dtype = vd;
            p.sample_size = n > 100000 ? 65536 : 1000;
            check(dt, td::to_dtype(td::make_floats(d, n, 7), dt), p, td::dist_name(d));
          }
        }
      }
    }
  }
}

TEST_F(ThresholdGpu, UsesTheGivenTau) {
  const std::vector<uint8_t> in =
      td::to_dtype(td::make_floats(td::Dist::kGaussian, 50000, 8), Dtype::kFloat32);
  ThresholdParams p;
  p.keep = 0.01;
  const float tau = 1.5f;
  DeviceBytes src(in), dst(in.size() + 1024);
  ASSERT_TRUE(gpu::enqueue_threshold_body_encode(Dtype::kFloat32, src.get(), 50000, p, &tau, true,
                                                 dst.get(), dst.size(), result_, stream_)
                  .ok());
  const gpu::BodyResult r = wait_result();
  ASSERT_EQ(r.code, 0u);
  EXPECT_EQ(r.tau, tau);
  ThresholdBodyInfo info;
  const std::vector<uint8_t> body = dst.download(r.bytes);
  ASSERT_TRUE(threshold_peek_body(body, Dtype::kFloat32, 50000, &info).ok());
  EXPECT_EQ(info.tau, tau);
  std::vector<uint8_t> out(in.size());
  ASSERT_TRUE(threshold_decode_body(body, Dtype::kFloat32, 50000, out).ok());
}

TEST_F(ThresholdGpu, RefusesToExpandLikeTheCpu) {
  const std::vector<uint8_t> in =
      td::to_dtype(td::make_floats(td::Dist::kGaussian, 4, 9), Dtype::kFloat32);
  ThresholdParams p;
  DeviceBytes src(in), dst(1024);
  ASSERT_TRUE(gpu::enqueue_threshold_body_encode(Dtype::kFloat32, src.get(), 4, p, nullptr, false,
                                                 dst.get(), dst.size(), result_, stream_)
                  .ok());
  EXPECT_EQ(wait_result().code, static_cast<uint32_t>(Status::Code::kNoSpace));
  EXPECT_EQ(gpu::enqueue_threshold_body_encode(Dtype::kBytes, src.get(), 4, p, nullptr, false,
                                               dst.get(), dst.size(), result_, stream_)
                .code(),
            Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace squeeze::compress
