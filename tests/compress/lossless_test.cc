// Lossless codec: bit-exact round trips for any bytes, and the compression it promises on
// zero, sparse and float data.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compress/lossless.h"
#include "tests/compress/test_data.h"
#include "tests/compress/threshold_data.h"
#include "tests/compress/threshold_test_util.h"

namespace squeeze::compress {
namespace {

using testutil::decode_guarded;
namespace td = ::squeeze::testdata;

std::vector<uint8_t> encode(Dtype dt, const std::vector<uint8_t>& in) {
  const uint64_t n = in.size() / dtype_size(dt);
  EncodeRequest req{dt, in.data(), n, nullptr, nullptr};
  std::vector<uint8_t> body(lossless_body_bound(req));
  std::size_t written = 0;
  const Status s = lossless_encode_body(req, body, &written);
  EXPECT_TRUE(s.ok()) << s.message();
  body.resize(written);
  return body;
}

// Encodes, decodes into a guarded buffer and checks bit-exactness; returns the ratio.
double round_trip(Dtype dt, const std::vector<uint8_t>& in, const std::string& what) {
  SCOPED_TRACE(what + " " + dtype_name(dt) + " " + std::to_string(in.size()) + " bytes");
  const std::vector<uint8_t> body = encode(dt, in);
  EXPECT_LE(body.size(), lossless_body_bound_bytes(in.size()));
  Status s;
  const std::vector<uint8_t> out =
      decode_guarded(body, dt, in.size() / dtype_size(dt), &s, lossless_decode_body);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(out == in) << "not bit-exact";
  return static_cast<double>(in.size()) / static_cast<double>(body.size());
}

const std::vector<std::size_t> kCounts = {0,
                                          1,
                                          2,
                                          3,
                                          7,
                                          15,
                                          16,
                                          17,
                                          255,
                                          1023,
                                          1024,
                                          1025,
                                          2047,
                                          4095,
                                          4096,
                                          4097,
                                          65535,
                                          65536,
                                          65537,
                                          (1u << 20) - 1,
                                          (1u << 20) + 1};

TEST(Lossless, EveryFloatDistributionInEveryDtypeIsBitExact) {
  for (td::Dist d : td::all_dists()) {
    for (std::size_t n : {1000ul, 4097ul, 100003ul}) {
      const std::vector<float> v = td::make_floats(d, n, 5);
      for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
        round_trip(dt, td::to_dtype(v, dt), td::dist_name(d));
      }
    }
  }
}

TEST(Lossless, RandomBytesOfEverySizeAndWidth) {
  for (std::size_t n : kCounts) {
    for (Dtype dt : {Dtype::kBytes, Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
      const double r = round_trip(dt, testgen::random_bytes(n * dtype_size(dt), n), "random");
      if (n >= 4096) {
        EXPECT_GT(r, 0.99);  // incompressible data costs only the size table
      }
    }
  }
}

TEST(Lossless, ZerosAndSparseDataShrinkEnormously) {
  for (std::size_t n : kCounts)
    round_trip(Dtype::kFloat32, std::vector<uint8_t>(n * 4, 0), "zeros");
  EXPECT_GT(round_trip(Dtype::kFloat32, std::vector<uint8_t>(1 << 22, 0), "zeros"), 1000.0);
  // Embedding gradients: 99% of 64-float rows are zero.
  const auto rows = testgen::sparse_rows(65536, 64, 0.01, 6);
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    EXPECT_GT(round_trip(dt, td::to_dtype(rows, dt), "sparse rows"), 50.0) << dtype_name(dt);
  }
  // 1% of elements nonzero, scattered.
  const std::vector<float> v = td::make_floats(td::Dist::kSparse, 1 << 20, 7);
  EXPECT_GT(round_trip(Dtype::kFloat32, td::to_dtype(v, Dtype::kFloat32), "sparse elements"), 15.0);
}

TEST(Lossless, FloatsCompressSomewhatAndNeverExpandBeyondTheTable) {
  const std::vector<float> v = td::make_floats(td::Dist::kGaussian, 1 << 20, 8);
  EXPECT_GT(round_trip(Dtype::kFloat32, td::to_dtype(v, Dtype::kFloat32), "gaussian"), 1.05);
  EXPECT_GT(round_trip(Dtype::kBfloat16, td::to_dtype(v, Dtype::kBfloat16), "gaussian"), 1.2);
  const std::vector<float> c = td::make_floats(td::Dist::kConstant, 1 << 20, 8);
  EXPECT_GT(round_trip(Dtype::kFloat32, td::to_dtype(c, Dtype::kFloat32), "constant"), 50.0);
}

TEST(Lossless, ScatteredZeroElementsUseAnElementMap) {
  // ReLU outputs: about half the elements exactly zero, scattered.
  std::vector<float> v = td::make_floats(td::Dist::kGaussian, 1 << 20, 13);
  for (float& f : v) f = f + 0.1f > 0.0f ? f + 0.1f : 0.0f;
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16}) {
    const std::vector<uint8_t> in = td::to_dtype(v, dt);
    EXPECT_GT(round_trip(dt, in, "relu"), dt == Dtype::kFloat32 ? 1.6 : 1.8);
    std::vector<uint8_t> block(kLosslessBlockBytes);
    ASSERT_LT(lossless_encode_block(in.data(), kLosslessBlockBytes, dtype_size(dt), block.data()),
              kLosslessBlockBytes);
    EXPECT_EQ(block[0], kLosslessMapElements);
  }
  // Whole zero rows keep the coarser map.
  const auto rows = testgen::sparse_rows(64, 64, 0.3, 14);
  std::vector<uint8_t> block(kLosslessBlockBytes);
  const auto in = td::to_dtype(rows, Dtype::kFloat32);
  ASSERT_LT(lossless_encode_block(in.data(), kLosslessBlockBytes, 4, block.data()),
            kLosslessBlockBytes);
  EXPECT_EQ(block[0], kLosslessMapGroups);
}

TEST(Lossless, EverySegmentWidthRoundTrips) {
  // One 256-byte block per width: values base + [0, 2^k) packed at k bits, or raw.
  std::mt19937_64 rng(9);
  for (unsigned k = 0; k <= 8; ++k) {
    std::vector<uint8_t> in(256);
    for (auto& b : in) b = static_cast<uint8_t>(0x11 + (k == 8 ? rng() : rng() % (1u << k)));
    if (k > 0 && k < 8) in[5] = static_cast<uint8_t>(0x11 + (1u << k) - 1);  // reach the full width
    if (k == 8) {
      in[0] = 0;
      in[1] = 255;
    }
    const std::vector<uint8_t> body = encode(Dtype::kBytes, in);
    // header 4, table 2, granularity 1 + map (L1 1 + L0 2 bytes), then one segment.
    const std::size_t seg = k == 8 ? 1 + 256 : 2 + 256 * k / 8;
    const std::size_t block = 4 + seg < 256 ? 4 + seg : 256;
    EXPECT_EQ(body.size(), 6 + block) << "k=" << k;
    round_trip(Dtype::kBytes, in, "width " + std::to_string(k));
    for (std::size_t len : {1ul, 5ul, 17ul, 100ul}) {  // partial groups and short segments
      round_trip(Dtype::kBytes,
                 std::vector<uint8_t>(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(len)),
                 "width " + std::to_string(k) + " prefix");
    }
  }
}

TEST(Lossless, BlocksAreZeroRawOrPackedAsTheyShouldBe) {
  std::vector<uint8_t> out(kLosslessBlockBytes);
  const std::vector<uint8_t> zero(kLosslessBlockBytes, 0);
  EXPECT_EQ(lossless_encode_block(zero.data(), zero.size(), 4, out.data()), 0u);
  const std::vector<uint8_t> noise = testgen::random_bytes(kLosslessBlockBytes, 10);
  EXPECT_EQ(lossless_encode_block(noise.data(), noise.size(), 1, out.data()), noise.size());
  EXPECT_EQ(out, noise);
  std::vector<uint8_t> one(kLosslessBlockBytes, 0);
  one[2000] = 7;
  EXPECT_LT(lossless_encode_block(one.data(), one.size(), 4, out.data()), 24u);
}

TEST(Lossless, ZeroTailInAPartialLastGroup) {
  // Found by the fuzzer: a block whose only zero group is its short last one.
  for (std::size_t len : {22ul, 86ul, 100ul, 4092ul}) {
    for (std::size_t zeros = 1; zeros <= 15 && zeros < len; ++zeros) {
      std::vector<uint8_t> in(len, 0x0c);
      std::fill(in.end() - static_cast<std::ptrdiff_t>(zeros), in.end(), 0);
      for (Dtype dt : {Dtype::kBytes, Dtype::kBfloat16, Dtype::kFloat32}) {
        if (len % dtype_size(dt) == 0) round_trip(dt, in, "zero tail " + std::to_string(zeros));
      }
    }
  }
}

TEST(Lossless, MixedBlocksAndPartialLastBlock) {
  std::vector<uint8_t> in = testgen::random_bytes(3 * kLosslessBlockBytes + 1000, 11);
  std::memset(in.data() + kLosslessBlockBytes, 0, kLosslessBlockBytes);          // a zero block
  std::memset(in.data() + 2 * kLosslessBlockBytes, 0, kLosslessBlockBytes - 8);  // nearly zero
  for (Dtype dt : {Dtype::kBytes, Dtype::kBfloat16, Dtype::kFloat32}) round_trip(dt, in, "mixed");
}

TEST(Lossless, DeterministicAndNoSpaceWhenDstIsSmall) {
  const auto in = td::to_dtype(td::make_floats(td::Dist::kGaussian, 50000, 12), Dtype::kFloat32);
  EXPECT_EQ(encode(Dtype::kFloat32, in), encode(Dtype::kFloat32, in));
  EncodeRequest req{Dtype::kFloat32, in.data(), 50000, nullptr, nullptr};
  const std::size_t need = encode(Dtype::kFloat32, in).size();
  for (std::size_t cap : {0ul, 3ul, 100ul, need / 2, need - 1}) {
    std::vector<uint8_t> dst(cap + 64, 0x5A);
    std::size_t written = 1;
    EXPECT_EQ(lossless_encode_body(req, std::span<uint8_t>(dst.data(), cap), &written).code(),
              Status::Code::kNoSpace)
        << cap;
    EXPECT_EQ(written, 0u);
    for (std::size_t i = cap; i < dst.size(); ++i)
      ASSERT_EQ(dst[i], 0x5A) << "wrote past dst at " << i;
  }
  std::vector<uint8_t> exact(need);
  std::size_t written = 0;
  EXPECT_TRUE(kLosslessBody.encode(req, exact, &written).ok());
  EXPECT_EQ(written, need);
  EXPECT_EQ(
      lossless_encode_body({Dtype::kFloat32, nullptr, 4, nullptr, nullptr}, exact, &written).code(),
      Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace squeeze::compress

namespace squeeze::compress {
namespace {

TEST(LosslessFrame, RoundTripsThroughTheFrameApi) {
  const auto rows = testgen::sparse_rows(4096, 64, 0.01, 40);
  CodecParams cp;
  cp.codec = CodecId::kLossless;
  cp.checksum = true;
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kBytes}) {
    std::vector<uint8_t> in = td::to_dtype(rows, dt == Dtype::kBytes ? Dtype::kFloat32 : dt);
    EncodeRequest req{dt, in.data(), in.size() / dtype_size(dt), &cp, nullptr};
    std::vector<uint8_t> frame(max_frame_bytes(req));
    std::size_t n = 0;
    ASSERT_TRUE(encode_frame(req, frame, &n).ok());
    FrameInfo info;
    ASSERT_TRUE(peek_frame(std::span<const uint8_t>(frame.data(), n), &info).ok());
    EXPECT_EQ(info.codec, CodecId::kLossless);
    EXPECT_GT(in.size() / n, 20u) << dtype_name(dt);
    std::vector<uint8_t> out(in.size());
    std::size_t written = 0;
    ASSERT_TRUE(decode_frame(std::span<const uint8_t>(frame.data(), n), out, &written).ok());
    EXPECT_EQ(out, in);
  }
}

}  // namespace
}  // namespace squeeze::compress
