// Lossless bodies that are truncated, corrupted or inconsistent are rejected with a clear
// error, and a failed decode writes nothing (decoded into a buffer with guard bytes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "compress/lossless.h"
#include "tests/compress/test_data.h"
#include "tests/compress/threshold_test_util.h"

namespace squeeze::compress {
namespace {

using testutil::decode_guarded;
namespace td = ::squeeze::testdata;

// float32 data with a zero block, a packed sparse block, a dense block and a partial block.
std::vector<uint8_t> sample_input() {
  std::vector<float> v = td::make_floats(td::Dist::kGaussian, 4 * 1024 + 300, 21);
  for (std::size_t i = 0; i < 1024; ++i) v[i] = 0.0f;
  for (std::size_t i = 1024; i < 2048; ++i) v[i] = i % 50 == 0 ? v[i] : 0.0f;
  return td::to_dtype(v, Dtype::kFloat32);
}
const uint64_t kCount = 4 * 1024 + 300;

std::vector<uint8_t> valid_body() {
  const std::vector<uint8_t> in = sample_input();
  EncodeRequest req{Dtype::kFloat32, in.data(), kCount, nullptr, nullptr};
  std::vector<uint8_t> body(lossless_body_bound(req));
  std::size_t n = 0;
  EXPECT_TRUE(lossless_encode_body(req, body, &n).ok());
  body.resize(n);
  return body;
}

Status decode(const std::vector<uint8_t>& body, Dtype dt = Dtype::kFloat32,
              uint64_t count = kCount) {
  Status s;
  decode_guarded(body, dt, count, &s, lossless_decode_body);
  return s;
}

void expect_error(const std::vector<uint8_t>& body, Status::Code code, const std::string& words) {
  const Status s = decode(body);
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_NE(s.message().find("lossless body"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(words), std::string::npos)
      << "wanted '" << words << "' in: " << s.message();
}

uint16_t block_size(const std::vector<uint8_t>& b, std::size_t i) {
  return static_cast<uint16_t>(b[4 + 2 * i] | (b[5 + 2 * i] << 8));
}

TEST(LosslessMalformed, SampleHasEveryBlockKind) {
  const std::vector<uint8_t> b = valid_body();
  EXPECT_EQ(block_size(b, 0), 0u);
  EXPECT_GT(block_size(b, 1), 0u);
  EXPECT_LT(block_size(b, 1), 4096u);
  EXPECT_GT(block_size(b, 2), 0u);
  EXPECT_TRUE(decode(b).ok());
}

TEST(LosslessMalformed, EveryTruncationIsRejected) {
  const std::vector<uint8_t> body = valid_body();
  for (std::size_t len = 0; len < body.size(); ++len) {
    const std::vector<uint8_t> cut(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(len));
    ASSERT_FALSE(decode(cut).ok()) << "length " << len << " of " << body.size();
  }
  std::vector<uint8_t> longer = body;
  longer.push_back(0);
  expect_error(longer, Status::Code::kCorrupt, "trailing bytes");
}

TEST(LosslessMalformed, BadHeaderFields) {
  std::vector<uint8_t> b = valid_body();
  b[0] = 13;
  expect_error(b, Status::Code::kCorrupt, "block shift");
  b = valid_body();
  b[1] = 5;
  expect_error(b, Status::Code::kCorrupt, "group shift");
  b = valid_body();
  b[2] = 0;
  expect_error(b, Status::Code::kCorrupt, "flags");
  b = valid_body();
  b[3] = 1;
  expect_error(b, Status::Code::kCorrupt, "reserved");
  // A float32 body read as bytes has the wrong flags and the wrong block count.
  EXPECT_FALSE(decode(valid_body(), Dtype::kBytes, kCount * 4).ok());
  EXPECT_EQ(decode(valid_body(), static_cast<Dtype>(9)).code(), Status::Code::kUnsupported);
}

TEST(LosslessMalformed, BadSizeTable) {
  std::vector<uint8_t> b = valid_body();
  b[4 + 2 * 4] = 0xff;  // the 1200-byte last block claims more
  b[5 + 2 * 4] = 0x0f;
  expect_error(b, Status::Code::kCorrupt, "exceeds");
  b = valid_body();
  b[4] = 1;  // the zero block now claims one byte: everything after shifts
  EXPECT_FALSE(decode(b).ok());
}

TEST(LosslessMalformed, BadPackedBlockStructure) {
  const std::vector<uint8_t> good = valid_body();
  const std::size_t start = 4 + 2 * 5 + block_size(good, 0);  // block 1, packed
  // Granularity byte, then L1 (16 bytes for 1024 element bits, 4 for 256 groups), then
  // the listed L0 bytes.
  ASSERT_EQ(good[start], kLosslessMapElements);  // every 50th element is nonzero
  const std::size_t l1 = 16;
  std::vector<uint8_t> b = good;
  b[start] = 2;
  expect_error(b, Status::Code::kCorrupt, "granularity");
  b = good;
  b[start + 1 + l1] = 0;  // a listed L0 byte that is zero
  expect_error(b, Status::Code::kCorrupt, "zero byte");
  // Find the first segment header and break it.
  std::size_t listed = 0;
  for (std::size_t i = 1; i <= l1; ++i)
    listed += static_cast<std::size_t>(__builtin_popcount(good[start + i]));
  const std::size_t seg = start + 1 + l1 + listed;
  b = good;
  b[seg] = 9;
  expect_error(b, Status::Code::kCorrupt, "bit width 9");
}

TEST(LosslessMalformed, HandMadeBlocks) {
  // 16 bytes (one group), dtype bytes: header, table, block.
  auto body = [](std::vector<uint8_t> block) {
    std::vector<uint8_t> b(6 + block.size());
    const uint8_t head[] = {12, 4, 0, 0, static_cast<uint8_t>(block.size()), 0};
    std::copy(std::begin(head), std::end(head), b.begin());
    std::copy(block.begin(), block.end(), b.begin() + 6);
    return b;
  };
  auto dec = [](const std::vector<uint8_t>& b) {
    Status s;
    decode_guarded(b, Dtype::kBytes, 16, &s, lossless_decode_body);
    return s;
  };
  // Granularity 0: one 16-byte group; L1 = 1, L0 = 1, then one segment.
  EXPECT_TRUE(dec(body({0, 1, 1, 0, 7})).ok());              // all bytes 7
  EXPECT_TRUE(dec(body({0, 1, 1, 1, 0, 0xff, 0xff})).ok());  // 1-bit: bytes 0/1
  EXPECT_NE(dec(body({0, 3, 1, 0, 7})).message().find("past the map"), std::string::npos);
  EXPECT_NE(dec(body({0, 1, 2, 0, 7})).message().find("past the block"), std::string::npos);
  EXPECT_NE(dec(body({0, 1, 1, 0, 7, 0})).message().find("stray"), std::string::npos);
  EXPECT_NE(dec(body({0, 1, 1, 1, 0})).message().find("runs past"), std::string::npos);
  EXPECT_NE(dec(body({0, 1})).message().find("runs past"), std::string::npos);
  EXPECT_NE(dec(body({5, 1, 1, 0, 7})).message().find("granularity"), std::string::npos);
  // Granularity 1 (bytes: one bit per byte): 16 bits = L0 2 bytes, L1 1 byte (bits 0, 1).
  // Bytes 0 and 9 nonzero: L0 = {0x01, 0x02}; the two bytes 5 and 6 as one 1-bit segment.
  EXPECT_TRUE(dec(body({1, 3, 0x01, 0x02, 1, 5, 0x02})).ok());
  // 12 bytes at 1 bit: 2 bytes, the top 4 bits of the second are padding.
  auto dec12 = [&](std::vector<uint8_t> block) {
    std::vector<uint8_t> b = {12, 4, 0, 0, static_cast<uint8_t>(block.size()), 0};
    b.insert(b.end(), block.begin(), block.end());
    Status s;
    decode_guarded(b, Dtype::kBytes, 12, &s, lossless_decode_body);
    return s;
  };
  EXPECT_TRUE(dec12({0, 1, 1, 1, 0, 0xff, 0x0f}).ok());
  EXPECT_NE(dec12({0, 1, 1, 1, 0, 0xff, 0x1f}).message().find("padding"), std::string::npos);
}

TEST(LosslessMalformed, DestinationTooSmall) {
  const std::vector<uint8_t> b = valid_body();
  std::vector<uint8_t> dst(kCount * 4 - 1);
  EXPECT_EQ(lossless_decode_body(b, Dtype::kFloat32, kCount, dst).code(),
            Status::Code::kInvalidArgument);
}

TEST(LosslessMalformed, RandomCorruptionNeverWritesOutOfBounds) {
  std::mt19937_64 rng(22);
  const std::vector<uint8_t> good = valid_body();
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> b = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    decode(b);  // any status; decode_guarded checks the guards and the no-write rule
  }
}

}  // namespace
}  // namespace squeeze::compress
