// Threshold bodies that are truncated, corrupted or inconsistent are rejected with a clear
// error, and a failed decode writes nothing (decoded into a buffer with guard bytes).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "compress/threshold.h"
#include "tests/compress/threshold_data.h"
#include "tests/compress/threshold_test_util.h"

namespace squeeze::compress {
namespace {

using testgen::gaussian;
using testutil::decode_guarded;
using testutil::threshold_encode;

constexpr std::size_t kN = 3001;

std::vector<uint8_t> valid_body(double keep) {
  ThresholdParams p;
  p.keep = keep;
  static const std::vector<float> x = gaussian(kN, 11);
  auto e = threshold_encode(Dtype::kFloat32, x.data(), kN, p);
  EXPECT_TRUE(e.status.ok());
  return e.body;
}

Status decode(const std::vector<uint8_t>& body, Dtype dt = Dtype::kFloat32, uint64_t n = kN) {
  Status s;
  decode_guarded(body, dt, n, &s);
  return s;
}

void expect_error(const std::vector<uint8_t>& body, Status::Code code, const std::string& words) {
  const Status s = decode(body);
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_NE(s.message().find("threshold body"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(words), std::string::npos)
      << "wanted '" << words << "' in: " << s.message();
}

TEST(ThresholdMalformed, ValidBodiesOfBothModesDecode) {
  ThresholdBodyInfo info;
  ASSERT_TRUE(threshold_peek_body(valid_body(0.01), Dtype::kFloat32, kN, &info).ok());
  EXPECT_EQ(info.position_mode, kThresholdDeltaVarint);
  ASSERT_TRUE(threshold_peek_body(valid_body(0.5), Dtype::kFloat32, kN, &info).ok());
  EXPECT_EQ(info.position_mode, kThresholdBitmap);
  EXPECT_TRUE(decode(valid_body(0.01)).ok());
  EXPECT_TRUE(decode(valid_body(0.5)).ok());
}

TEST(ThresholdMalformed, EveryTruncationIsRejected) {
  for (double keep : {0.01, 0.5}) {
    const std::vector<uint8_t> body = valid_body(keep);
    for (std::size_t len = 0; len < body.size(); ++len) {
      const std::vector<uint8_t> cut(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(len));
      ASSERT_FALSE(decode(cut).ok())
          << "keep " << keep << " length " << len << " of " << body.size();
    }
  }
  expect_error({1, 2, 3}, Status::Code::kTruncated, "header");
}

TEST(ThresholdMalformed, TrailingBytesAreRejected) {
  for (double keep : {0.01, 0.5}) {
    std::vector<uint8_t> body = valid_body(keep);
    body.push_back(0);
    EXPECT_FALSE(decode(body).ok()) << keep;
  }
}

TEST(ThresholdMalformed, BadHeaderFields) {
  std::vector<uint8_t> b = valid_body(0.01);
  b[0] = 2;
  expect_error(b, Status::Code::kCorrupt, "position mode");
  for (int vd : {0, 4, 255}) {
    b = valid_body(0.01);
    b[1] = static_cast<uint8_t>(vd);
    expect_error(b, Status::Code::kCorrupt, "value dtype");
  }
  b = valid_body(0.01);
  b[2] = 1;
  expect_error(b, Status::Code::kCorrupt, "reserved");
  b = valid_body(0.01);
  for (int i = 8; i < 16; ++i) b[static_cast<std::size_t>(i)] = 0xff;
  expect_error(b, Status::Code::kCorrupt, "kept count");
  // float32 values cannot decode into a bfloat16 output.
  const std::vector<uint8_t> f = valid_body(0.01);
  EXPECT_EQ(decode(f, Dtype::kBfloat16, kN).code(), Status::Code::kCorrupt);
  EXPECT_EQ(decode(f, Dtype::kBytes, kN).code(), Status::Code::kUnsupported);
}

TEST(ThresholdMalformed, BitmapInconsistencies) {
  std::vector<uint8_t> b = valid_body(0.5);
  const std::size_t bitmap_end = kThresholdHeaderBytes + (kN + 7) / 8;
  b[bitmap_end - 1] = static_cast<uint8_t>(b[bitmap_end - 1] | 0x80);  // bit 3007 >= 3001
  expect_error(b, Status::Code::kCorrupt, "past the element count");
  b = valid_body(0.5);
  b[kThresholdHeaderBytes] ^= 1;  // one more or one fewer marked element
  expect_error(b, Status::Code::kCorrupt, "bitmap marks");
}

TEST(ThresholdMalformed, VarintInconsistencies) {
  // Hand-made bodies: count 10, one kept float32 value.
  auto body = [](std::vector<uint8_t> positions, uint64_t kept) {
    std::vector<uint8_t> b = {kThresholdDeltaVarint, 1, 0, 0, 0, 0, 0x80, 0x3f};
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(kept >> (8 * i)));
    b.insert(b.end(), positions.begin(), positions.end());
    for (uint64_t k = 0; k < kept; ++k) b.insert(b.end(), {0, 0, 0x80, 0x3f});
    return b;
  };
  auto dec = [](const std::vector<uint8_t>& b) {
    Status s;
    decode_guarded(b, Dtype::kFloat32, 10, &s);
    return s;
  };
  EXPECT_TRUE(dec(body({9}, 1)).ok());
  EXPECT_TRUE(dec(body({0, 8}, 2)).ok());
  const Status past = dec(body({10}, 1));
  EXPECT_EQ(past.code(), Status::Code::kCorrupt);
  EXPECT_NE(past.message().find("past the element count"), std::string::npos) << past.message();
  EXPECT_FALSE(dec(body({5, 4}, 2)).ok());  // second position 10
  EXPECT_NE(dec(body({0x83, 0x00}, 1)).message().find("non-minimal"), std::string::npos);
  EXPECT_NE(dec(body({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 1))
                .message()
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(dec(body({1, 2}, 1)).message().find("stray"), std::string::npos);
  EXPECT_NE(dec(body({0x81}, 1)).message().find("runs past"), std::string::npos);
}

TEST(ThresholdMalformed, DestinationTooSmall) {
  const std::vector<uint8_t> b = valid_body(0.01);
  std::vector<uint8_t> dst(kN * 4 - 1);
  EXPECT_EQ(threshold_decode_body(b, Dtype::kFloat32, kN, dst).code(),
            Status::Code::kInvalidArgument);
}

TEST(ThresholdMalformed, RandomCorruptionNeverWritesOutOfBounds) {
  std::mt19937_64 rng(12);
  for (double keep : {0.01, 0.5}) {
    const std::vector<uint8_t> good = valid_body(keep);
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<uint8_t> b = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f)
        b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      decode(b);  // any status; decode_guarded checks the guards and the no-write rule
    }
  }
}

}  // namespace
}  // namespace squeeze::compress
