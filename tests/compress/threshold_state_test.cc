// Threshold codec across messages of one stream: tau refresh and error feedback.
#include <gtest/gtest.h>

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

float body_tau(const std::vector<uint8_t>& body, Dtype dt, uint64_t n) {
  ThresholdBodyInfo info;
  EXPECT_TRUE(threshold_peek_body(body, dt, n, &info).ok());
  return info.tau;
}

std::vector<float> scaled(std::vector<float> v, float s) {
  for (float& f : v) f *= s;
  return v;
}

TEST(ThresholdState, SearchesEveryRefreshMessagesAndReusesTauBetween) {
  ThresholdParams p;
  p.keep = 0.01;
  p.refresh_every = 3;
  ThresholdState st;
  const std::size_t n = 20000;
  const float scale[] = {1, 1, 1, 4, 4, 4, 8};
  std::vector<float> taus;
  for (int m = 0; m < 7; ++m) {
    const std::vector<float> x = scaled(gaussian(n, 100 + static_cast<uint64_t>(m)), scale[m]);
    auto e = threshold_encode(Dtype::kFloat32, x.data(), n, p, &st);
    ASSERT_TRUE(e.status.ok()) << e.status.message();
    taus.push_back(body_tau(e.body, Dtype::kFloat32, n));
  }
  EXPECT_EQ(st.messages(), 7u);
  EXPECT_EQ(st.searches(), 3u);  // messages 0, 3, 6
  EXPECT_EQ(taus[1], taus[0]);
  EXPECT_EQ(taus[2], taus[0]);
  EXPECT_GT(taus[3], taus[0] * 3);  // data 4x larger: a fresh search
  EXPECT_EQ(taus[4], taus[3]);
  EXPECT_EQ(taus[5], taus[3]);
  EXPECT_GT(taus[6], taus[3] * 1.5f);
  EXPECT_TRUE(st.has_tau());
  EXPECT_EQ(st.tau(), taus[6]);
}

TEST(ThresholdState, DriftOfTheKeptCountTriggersASearch) {
  ThresholdParams p;
  p.keep = 0.01;
  p.refresh_every = 1000;
  ThresholdState st;
  const std::size_t n = 20000;
  const std::vector<float> a = gaussian(n, 1);
  const std::vector<float> big = scaled(gaussian(n, 2), 3.0f);  // ~10x the target above the old tau
  const std::vector<float> small = scaled(gaussian(n, 3), 0.3f);
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, a.data(), n, p, &st).status.ok());
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, a.data(), n, p, &st).status.ok());
  EXPECT_EQ(st.searches(), 1u);  // within the band: reused
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, big.data(), n, p, &st).status.ok());
  EXPECT_EQ(st.searches(), 1u);  // reused, but too many kept ...
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, big.data(), n, p, &st).status.ok());
  EXPECT_EQ(st.searches(), 2u);  // ... so this one searched
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, small.data(), n, p, &st).status.ok());
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, small.data(), n, p, &st).status.ok());
  EXPECT_EQ(st.searches(), 3u);  // too few kept also searches again
}

TEST(ThresholdState, NullStateSearchesEveryMessage) {
  ThresholdParams p;
  p.keep = 0.01;
  const std::vector<float> a = gaussian(20000, 1);
  const std::vector<float> b = scaled(a, 4.0f);
  auto ea = threshold_encode(Dtype::kFloat32, a.data(), a.size(), p);
  auto eb = threshold_encode(Dtype::kFloat32, b.data(), b.size(), p);
  EXPECT_EQ(body_tau(eb.body, Dtype::kFloat32, b.size()),
            4.0f * body_tau(ea.body, Dtype::kFloat32, a.size()));
}

TEST(ThresholdState, ChangedShapeOrParametersSearchAgain) {
  ThresholdParams p;
  p.keep = 0.01;
  ThresholdState st;
  const std::vector<float> x = gaussian(30000, 2);
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, x.data(), 20000, p, &st).status.ok());
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, x.data(), 20000, p, &st).status.ok());
  EXPECT_EQ(st.searches(), 1u);
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, x.data(), 30000, p, &st).status.ok());  // count
  EXPECT_EQ(st.searches(), 2u);
  p.keep = 0.02;
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, x.data(), 30000, p, &st).status.ok());  // keep
  EXPECT_EQ(st.searches(), 3u);
  const auto half = as_dtype(x, Dtype::kBfloat16);
  ASSERT_TRUE(threshold_encode(Dtype::kBfloat16, half.data(), 30000, p, &st).status.ok());  // dtype
  EXPECT_EQ(st.searches(), 4u);
  st.reset();
  EXPECT_FALSE(st.has_tau());
  EXPECT_EQ(st.messages(), 0u);
}

TEST(ThresholdState, StaleTauThatWouldExpandFallsBackLeavingTheResidualAlone) {
  ThresholdParams p;
  p.keep = 0.01;
  p.error_feedback = true;
  ThresholdState st;
  const std::size_t n = 20000;
  const std::vector<float> x = gaussian(n, 3);
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, x.data(), n, p, &st, false).status.ok());
  const std::vector<float> r(st.residual().begin(), st.residual().end());
  ASSERT_EQ(r.size(), n);
  const std::vector<float> big = scaled(gaussian(n, 4), 1000.0f);  // nearly all above the old tau
  auto e = threshold_encode(Dtype::kFloat32, big.data(), n, p, &st, false);
  EXPECT_EQ(e.status.code(), Status::Code::kNoSpace);
  EXPECT_EQ(std::vector<float>(st.residual().begin(), st.residual().end()), r);
  EXPECT_EQ(st.messages(), 1u);
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, big.data(), n, p, &st, false).status.ok());
  EXPECT_EQ(st.searches(), 2u);  // the failure forced a fresh search
}

// x + r_old == decoded + r_new, element by element and exactly, over several messages.
void expect_residual_conservation(Dtype dt, Dtype vd) {
  SCOPED_TRACE(std::string(dtype_name(dt)) + " values " + dtype_name(vd));
  ThresholdParams p;
  p.keep = 0.02;
  p.refresh_every = 4;
  p.value_dtype = vd;
  p.error_feedback = true;
  ThresholdState st;
  const std::size_t n = 10007;
  for (int m = 0; m < 8; ++m) {
    const std::vector<uint8_t> x = as_dtype(gaussian(n, 50 + static_cast<uint64_t>(m)), dt);
    std::vector<float> r_old(st.residual().begin(), st.residual().end());
    if (r_old.empty()) r_old.assign(n, 0.0f);
    auto e = threshold_encode(dt, x.data(), n, p, &st);
    ASSERT_TRUE(e.status.ok()) << e.status.message();
    Status s;
    const std::vector<uint8_t> out = decode_guarded(e.body, dt, n, &s);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(st.residual().size(), n);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float lhs = element(x, dt, i) + r_old[i];
      const float dec = element(out, dt, i);
      kept += dec != 0.0f;
      ASSERT_EQ(lhs, dec + st.residual()[i]) << "message " << m << " element " << i;
    }
    EXPECT_GT(kept, 0u);
  }
  EXPECT_GE(st.searches(), 2u);  // every 4 messages, more when the residual drifts the count
}

TEST(ThresholdState, ErrorFeedbackConservesEveryElement) {
  expect_residual_conservation(Dtype::kFloat32, Dtype::kFloat32);
  expect_residual_conservation(Dtype::kFloat32, Dtype::kBfloat16);
  expect_residual_conservation(Dtype::kFloat32, Dtype::kFloat16);
  expect_residual_conservation(Dtype::kBfloat16, Dtype::kBfloat16);
  expect_residual_conservation(Dtype::kFloat16, Dtype::kFloat16);
}

TEST(ThresholdState, ResidualMakesSmallPersistentValuesEventuallySent) {
  // A small constant bias on one element, fresh unit noise elsewhere: the bias is dropped
  // at first, but its residual grows linearly (the noise's only like a random walk), so it
  // is eventually sent.
  ThresholdParams p;
  p.keep = 0.01;
  p.error_feedback = true;
  p.refresh_every = 1000;
  ThresholdState st;
  const std::size_t n = 5000;
  int sent_at = -1;
  for (int m = 0; m < 40 && sent_at < 0; ++m) {
    std::vector<float> x = gaussian(n, 600 + static_cast<uint64_t>(m));
    x[17] = 1.0f;  // well below the 1% tau of a unit gaussian (about 2.58)
    auto e = threshold_encode(Dtype::kFloat32, x.data(), n, p, &st);
    ASSERT_TRUE(e.status.ok());
    Status s;
    const auto out = decode_guarded(e.body, Dtype::kFloat32, n, &s);
    if (element(out, Dtype::kFloat32, 17) != 0.0f) sent_at = m;
  }
  EXPECT_GE(sent_at, 2);
}

TEST(ThresholdState, NonFiniteElementsLeaveNoResidual) {
  ThresholdParams p;
  p.keep = 0.1;
  p.error_feedback = true;
  ThresholdState st;
  std::vector<float> x = gaussian(1000, 7);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[4] = -std::numeric_limits<float>::infinity();
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, x.data(), x.size(), p, &st).status.ok());
  EXPECT_EQ(st.residual()[3], 0.0f);
  EXPECT_EQ(st.residual()[4], 0.0f);
  for (float r : st.residual()) ASSERT_TRUE(std::isfinite(r));
}

TEST(ThresholdState, FeedbackOffClearsTheResidualAndNullStateIgnoresIt) {
  ThresholdParams p;
  p.keep = 0.05;
  p.error_feedback = true;
  ThresholdState st;
  const std::vector<float> x = gaussian(4000, 8);
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, x.data(), x.size(), p, &st).status.ok());
  EXPECT_EQ(st.residual().size(), x.size());
  p.error_feedback = false;
  ASSERT_TRUE(threshold_encode(Dtype::kFloat32, x.data(), x.size(), p, &st).status.ok());
  EXPECT_TRUE(st.residual().empty());
  p.error_feedback = true;  // without a state there is nowhere to keep a residual
  auto with = threshold_encode(Dtype::kFloat32, x.data(), x.size(), p, nullptr);
  p.error_feedback = false;
  auto without = threshold_encode(Dtype::kFloat32, x.data(), x.size(), p, nullptr);
  EXPECT_EQ(with.body, without.body);
}

}  // namespace
}  // namespace squeeze::compress

namespace squeeze::compress {
namespace {

// The frame layer dispatches to the threshold body, passes the stream state through, and
// falls back to a stored frame (leaving the state alone) when thresholding would not pay.
TEST(ThresholdFrame, EncodesThroughTheFrameApiWithState) {
  CodecParams cp;
  cp.codec = CodecId::kThreshold;
  cp.threshold.keep = 0.01;
  cp.threshold.error_feedback = true;
  ThresholdState st;
  const std::vector<float> x = gaussian(100000, 30);
  EncodeRequest req{Dtype::kFloat32, x.data(), x.size(), &cp, &st};
  std::vector<uint8_t> frame(max_frame_bytes(req));
  std::size_t n = 0;
  ASSERT_TRUE(encode_frame(req, frame, &n).ok());
  FrameInfo info;
  ASSERT_TRUE(peek_frame(std::span<const uint8_t>(frame.data(), n), &info).ok());
  EXPECT_EQ(info.codec, CodecId::kThreshold);
  EXPECT_GT(x.size() * 4 / n, 40u);
  EXPECT_EQ(st.messages(), 1u);
  EXPECT_EQ(st.residual().size(), x.size());
  std::vector<float> out(x.size());
  std::size_t written = 0;
  ASSERT_TRUE(
      decode_frame(std::span<const uint8_t>(frame.data(), n),
                   std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size() * 4),
                   &written)
          .ok());
  EXPECT_EQ(written, x.size() * 4);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(out[i] == 0.0f || out[i] == x[i]) << i;

  // Tiny messages cannot shrink: stored frame, state untouched.
  const std::vector<float> r(st.residual().begin(), st.residual().end());
  EncodeRequest tiny{Dtype::kFloat32, x.data(), 3, &cp, &st};
  ASSERT_TRUE(encode_frame(tiny, frame, &n).ok());
  ASSERT_TRUE(peek_frame(std::span<const uint8_t>(frame.data(), n), &info).ok());
  EXPECT_EQ(info.codec, CodecId::kStored);
  EXPECT_EQ(st.messages(), 1u);
  EXPECT_EQ(std::vector<float>(st.residual().begin(), st.residual().end()), r);
}

}  // namespace
}  // namespace squeeze::compress
