// Threshold codec: which elements are kept, the tau estimate, both position encodings,
// value narrowing, sizes and special values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "compress/threshold.h"
#include "tests/compress/threshold_data.h"
#include "tests/compress/threshold_test_util.h"

namespace squeeze::compress {
namespace {

using testgen::as_dtype;
using testgen::element;
using testgen::gaussian;
using testutil::decode_guarded;
using testutil::threshold_encode;

constexpr float kInf = std::numeric_limits<float>::infinity();

ThresholdParams params(double keep, Dtype vd = Dtype::kFloat32) {
  ThresholdParams p;
  p.keep = keep;
  p.value_dtype = vd;
  return p;
}

// Checks the decoded buffer element by element against the rule: an element is kept
// (decoded as its value narrowed to the body's value dtype) iff |x| >= tau or x is NaN;
// every other element decodes as +0.
void expect_threshold_rule(const std::vector<uint8_t>& in, const std::vector<uint8_t>& out,
                           Dtype dt, const ThresholdBodyInfo& info) {
  const std::size_t n = in.size() / dtype_size(dt);
  const std::size_t w = dtype_size(dt);
  uint64_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = element(in, dt, i);
    const float y = element(out, dt, i);
    if (std::isnan(x) || std::fabs(x) >= info.tau) {
      ++kept;
      if (info.value_dtype == dt) {
        ASSERT_EQ(std::memcmp(&in[i * w], &out[i * w], w), 0)
            << "kept element " << i << " not bit-exact";
      } else {
        const std::vector<uint8_t> narrowed = as_dtype({x}, info.value_dtype);
        float want = element(narrowed, info.value_dtype, 0);
        if (info.value_dtype == Dtype::kFloat16 && std::isfinite(x) && std::isinf(want)) {
          want = std::copysign(65504.0f, x);  // saturation
        }
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(y)) << i;
        } else {
          ASSERT_EQ(y, want) << "element " << i << " x=" << x;
        }
      }
    } else {
      uint32_t bits = 0;
      std::memcpy(&bits, &out[i * w], w);
      ASSERT_EQ(bits, 0u) << "dropped element " << i << " (x=" << x << ", tau=" << info.tau
                          << ") is not +0";
    }
  }
  EXPECT_EQ(kept, info.kept);
}

void round_trip(Dtype dt, const std::vector<float>& f, const ThresholdParams& p,
                ThresholdBodyInfo* info_out = nullptr) {
  const std::vector<uint8_t> in = as_dtype(f, dt);
  const uint64_t n = f.size();
  auto e = threshold_encode(dt, in.data(), n, p);
  ASSERT_TRUE(e.status.ok()) << e.status.message();
  ThresholdBodyInfo info;
  ASSERT_TRUE(threshold_peek_body(e.body, dt, n, &info).ok());
  Status s;
  std::vector<uint8_t> out = decode_guarded(e.body, dt, n, &s);
  ASSERT_TRUE(s.ok()) << s.message();
  expect_threshold_rule(in, out, dt, info);
  if (info_out != nullptr) *info_out = info;
}

TEST(Threshold, KeepsExactlyTheElementsAtOrAboveTauForEveryDtypeAndValueWidth) {
  const std::vector<float> f = gaussian(100003, 1);
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (Dtype vd : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " values " + dtype_name(vd));
      ThresholdBodyInfo info;
      round_trip(dt, f, params(0.01, vd), &info);
      EXPECT_EQ(info.value_dtype, threshold_value_dtype(dt, vd));
    }
  }
}

TEST(Threshold, ValueDtypeIsNarrowedOnlyWhenNarrower) {
  EXPECT_EQ(threshold_value_dtype(Dtype::kFloat32, Dtype::kBfloat16), Dtype::kBfloat16);
  EXPECT_EQ(threshold_value_dtype(Dtype::kFloat32, Dtype::kFloat16), Dtype::kFloat16);
  EXPECT_EQ(threshold_value_dtype(Dtype::kFloat32, Dtype::kFloat32), Dtype::kFloat32);
  EXPECT_EQ(threshold_value_dtype(Dtype::kBfloat16, Dtype::kFloat32), Dtype::kBfloat16);
  EXPECT_EQ(threshold_value_dtype(Dtype::kBfloat16, Dtype::kFloat16), Dtype::kBfloat16);
  EXPECT_EQ(threshold_value_dtype(Dtype::kFloat16, Dtype::kBfloat16), Dtype::kFloat16);
}

TEST(Threshold, TauIsTheEstimatedQuantile) {
  const std::vector<float> f = gaussian(1 << 20, 2);
  std::vector<float> mags(f.size());
  std::transform(f.begin(), f.end(), mags.begin(), [](float x) { return std::fabs(x); });
  std::sort(mags.begin(), mags.end());
  for (double keep : {0.5, 0.1, 0.01, 0.001}) {
    const float tau =
        threshold_estimate_tau(Dtype::kFloat32, f.data(), nullptr, f.size(), keep, 65536);
    const auto above =
        static_cast<double>(mags.end() - std::lower_bound(mags.begin(), mags.end(), tau));
    const double frac = above / static_cast<double>(f.size());
    EXPECT_NEAR(frac / keep, 1.0, keep >= 0.01 ? 0.1 : 0.25) << "keep " << keep << " tau " << tau;
  }
  // With the whole message sampled the estimate is exact: ceil(keep * n) elements kept.
  const std::vector<float> small = gaussian(1000, 3);
  const float tau =
      threshold_estimate_tau(Dtype::kFloat32, small.data(), nullptr, small.size(), 0.05, 65536);
  EXPECT_EQ(std::count_if(small.begin(), small.end(), [&](float x) { return std::fabs(x) >= tau; }),
            50);
}

TEST(Threshold, TauIgnoresNonFiniteValuesAndNeverKeepsZeros) {
  std::vector<float> f(1000, 0.0f);
  for (std::size_t i = 0; i < 100; ++i) f[i * 10] = std::numeric_limits<float>::quiet_NaN();
  f[5] = kInf;
  f[6] = -kInf;
  f[7] = 2.0f;
  const float tau =
      threshold_estimate_tau(Dtype::kFloat32, f.data(), nullptr, f.size(), 0.5, 65536);
  EXPECT_TRUE(std::isfinite(tau));
  EXPECT_EQ(tau, std::numeric_limits<float>::denorm_min());  // median of the finite values is 0
  ThresholdBodyInfo info;
  round_trip(Dtype::kFloat32, f, params(0.5), &info);
  EXPECT_EQ(info.kept, 103u);  // the NaNs, the Infs and 2.0; no zero
  std::vector<float> all_nan(17, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(threshold_estimate_tau(Dtype::kFloat32, all_nan.data(), nullptr, 17, 0.1, 64), kInf);
  round_trip(Dtype::kFloat32, all_nan, params(0.1), &info);
  EXPECT_EQ(info.kept, 17u);
}

TEST(Threshold, SpecialValuesInEveryDtype) {
  const float denorm = std::numeric_limits<float>::denorm_min() * 3;
  std::vector<float> f = {std::numeric_limits<float>::quiet_NaN(),
                          kInf,
                          -kInf,
                          -0.0f,
                          0.0f,
                          denorm,
                          -denorm,
                          1e-40f,
                          6e-8f,
                          -3.0f,
                          1e30f,
                          -1e-30f};
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (double keep : {1.0, 0.5, 0.1}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " keep " + std::to_string(keep));
      round_trip(dt, f, params(keep));
    }
  }
}

TEST(Threshold, KeepOneKeepsEveryNonZero) {
  std::vector<float> f = gaussian(4097, 4);
  f[10] = 0.0f;
  f[11] = -0.0f;
  ThresholdBodyInfo info;
  round_trip(Dtype::kFloat32, f, params(1.0), &info);
  EXPECT_EQ(info.kept, 4095u);
}

TEST(Threshold, SizesAroundPowersOfTwo) {
  for (std::size_t n : {0ul, 1ul, 2ul, 7ul, 8ul, 9ul, 63ul, 64ul, 65ul, 255ul, 256ul, 257ul,
                        65535ul, 65536ul, 65537ul, (1ul << 20) + 1}) {
    const std::vector<float> f = gaussian(n, n + 10);
    for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
      for (double keep : {0.01, 0.3}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " " + dtype_name(dt) + " keep " +
                     std::to_string(keep));
        round_trip(dt, f, params(keep));
      }
    }
  }
}

TEST(Threshold, ChoosesTheSmallerPositionEncoding) {
  const std::vector<float> f = gaussian(50000, 5);
  ThresholdBodyInfo sparse, dense;
  round_trip(Dtype::kFloat32, f, params(0.001), &sparse);
  round_trip(Dtype::kFloat32, f, params(0.5), &dense);
  EXPECT_EQ(sparse.position_mode, kThresholdDeltaVarint);
  EXPECT_EQ(dense.position_mode, kThresholdBitmap);
  // Varint deltas of 2+ bytes (gaps >= 129) at keep 0.1%, one byte at keep 5%.
  ThresholdBodyInfo mid;
  round_trip(Dtype::kFloat32, f, params(0.05), &mid);
  EXPECT_EQ(mid.position_mode, kThresholdDeltaVarint);
}

TEST(Threshold, BodyIsCompactAtLowKeep) {
  const std::vector<float> f = gaussian(1 << 20, 6);
  const std::size_t in_bytes = f.size() * 4;
  auto ratio = [&](double keep, Dtype vd) {
    auto e = threshold_encode(Dtype::kFloat32, f.data(), f.size(), params(keep, vd));
    EXPECT_TRUE(e.status.ok());
    return static_cast<double>(in_bytes) / static_cast<double>(e.body.size());
  };
  EXPECT_GE(ratio(0.01, Dtype::kFloat32), 40.0);
  EXPECT_GE(ratio(0.01, Dtype::kBfloat16), 60.0);
  EXPECT_GE(ratio(0.001, Dtype::kFloat32), 250.0);
}

TEST(Threshold, Float16ValuesSaturateInsteadOfOverflowing) {
  std::vector<float> f(1000, 0.001f);
  f[3] = 1e6f;
  f[4] = -70000.0f;
  round_trip(Dtype::kFloat32, f, params(0.002, Dtype::kFloat16));
}

TEST(Threshold, EncodingIsDeterministic) {
  const std::vector<float> f = gaussian(300000, 7);
  auto a = threshold_encode(Dtype::kFloat32, f.data(), f.size(), params(0.01));
  auto b = threshold_encode(Dtype::kFloat32, f.data(), f.size(), params(0.01));
  EXPECT_EQ(a.body, b.body);
}

TEST(Threshold, RejectsBadParameters) {
  const std::vector<float> f = gaussian(100, 8);
  for (double keep : {0.0, -0.1, 1.5, std::nan("")}) {
    auto e = threshold_encode(Dtype::kFloat32, f.data(), f.size(), params(keep));
    EXPECT_EQ(e.status.code(), Status::Code::kInvalidArgument) << keep;
    EXPECT_NE(e.status.message().find("keep"), std::string::npos) << e.status.message();
  }
  ThresholdParams p = params(0.1);
  p.sample_size = 0;
  EXPECT_EQ(threshold_encode(Dtype::kFloat32, f.data(), f.size(), p).status.code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(threshold_encode(Dtype::kBytes, f.data(), f.size(), params(0.1)).status.code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(threshold_encode(Dtype::kFloat32, f.data(), f.size(), params(0.1, Dtype::kBytes))
                .status.code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(threshold_encode(Dtype::kFloat32, nullptr, 5, params(0.1)).status.code(),
            Status::Code::kInvalidArgument);
}

TEST(Threshold, BodyCodecRefusesToExpand) {
  const std::vector<float> f = gaussian(4, 9);  // 16 input bytes: no body can be smaller
  CodecParams cp;
  cp.codec = CodecId::kThreshold;
  EncodeRequest req{Dtype::kFloat32, f.data(), f.size(), &cp, nullptr};
  std::vector<uint8_t> dst(kThresholdBody.bound(req));
  std::size_t written = 1;
  EXPECT_EQ(kThresholdBody.encode(req, dst, &written).code(), Status::Code::kNoSpace);
  EXPECT_EQ(written, 0u);
  // A dst too small for the body is kNoSpace even when expansion is allowed.
  const std::vector<float> g = gaussian(10000, 9);
  req = {Dtype::kFloat32, g.data(), g.size(), &cp, nullptr};
  std::vector<uint8_t> small(40);
  EXPECT_EQ(threshold_encode_body(req, small, &written, true).code(), Status::Code::kNoSpace);
}

}  // namespace
}  // namespace squeeze::compress
