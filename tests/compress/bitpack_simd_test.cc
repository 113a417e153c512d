// The AVX-512 block packer (compress/bitpack_avx512.h) writes pack64's bytes, exactly 8*w
// of them, at every width 0..32, and its zigzag and width are those of the scalar
// bitpack::zigzag_pack64; the quantize encoder, which at AVX-512 also reads float32
// straight from the caller's buffer, gives the scalar level's body at every source alignment.
// Skipped where the CPU lacks AVX-512.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "compress/bitpack.h"
#include "compress/bitpack_avx512.h"
#include "compress/codec.h"
#include "compress/quantize.h"
#include "compress/quantize_simd.h"
#include "tests/compress/at_level.h"
#include "tests/compress/test_data.h"

namespace squeeze::compress {
namespace {

constexpr unsigned kN = bitpack::kBlock;

uint32_t width_mask(unsigned w) { return w == 32 ? 0xffffffffu : (1u << w) - 1; }

// 64 values below 2^w: random, all ones (the maximum), zeros, one set bit walking, and
// random with the top bit forced on.
std::vector<std::vector<uint32_t>> blocks_of_width(unsigned w, std::mt19937_64& rng) {
  std::vector<std::vector<uint32_t>> out;
  for (int t = 0; t < 40; ++t) {
    std::vector<uint32_t> v(kN);
    for (auto& x : v) x = static_cast<uint32_t>(rng()) & width_mask(w);
    out.push_back(v);
  }
  out.emplace_back(kN, width_mask(w));
  out.emplace_back(kN, 0u);
  if (w > 0) {
    std::vector<uint32_t> walk(kN), top(kN);
    for (unsigned i = 0; i < kN; ++i) {
      walk[i] = 1u << (i % w);
      top[i] = (static_cast<uint32_t>(rng()) & width_mask(w)) | (1u << (w - 1));
    }
    out.push_back(walk);
    out.push_back(top);
  }
  return out;
}

bool have_avx512() { return qsimd::cpu_level() == qsimd::Level::kAvx512; }
constexpr const char* kNoAvx512 = "this CPU lacks AVX-512 F, VL, DQ or BW";

TEST(BitpackSimd, PackGivesPack64sBytesExactlyAtEveryWidth) {
  if (!have_avx512()) GTEST_SKIP() << kNoAvx512;
  std::mt19937_64 rng(7);
  for (unsigned w = 0; w <= bitpack::kMaxWidth; ++w) {
    for (const auto& v : blocks_of_width(w, rng)) {
      std::vector<uint8_t> want(8 * w);
      bitpack::pack64(v.data(), w, want.data());
      testdata::Guarded got(8 * w);  // exactly sized, guard bytes either side
      bitpack::pack64_avx512(v.data(), w, got.data());
      ASSERT_TRUE(got.guards_intact()) << "w=" << w;
      ASSERT_EQ(std::vector<uint8_t>(got.span().begin(), got.span().end()), want) << "w=" << w;
    }
  }
}

TEST(BitpackSimd, ZigzagPackGivesPackBlocksWidthAndBytes) {
  if (!have_avx512()) GTEST_SKIP() << kNoAvx512;
  std::mt19937_64 rng(8);
  std::vector<bool> seen(bitpack::kMaxWidth + 1);
  for (unsigned w = 0; w <= bitpack::kMaxWidth; ++w) {
    for (const auto& zz : blocks_of_width(w, rng)) {
      int32_t codes[kN];  // the codes whose zigzags are zz
      for (unsigned i = 0; i < kN; ++i)
        codes[i] = static_cast<int32_t>((zz[i] >> 1) ^ (0u - (zz[i] & 1)));
      std::vector<uint8_t> want(8 * bitpack::kMaxWidth);
      bool want_fits = false;
      const unsigned ww = bitpack::zigzag_pack64(codes, want.data(), want.size(), &want_fits);
      ASSERT_TRUE(want_fits);
      ASSERT_LE(ww, w);
      want.resize(8 * ww);
      seen[ww] = true;
      testdata::Guarded got(8 * ww);  // exactly sized
      bool fits = false;
      ASSERT_EQ(bitpack::zigzag_pack64_avx512(codes, got.data(), 8 * ww, &fits), ww) << "w=" << w;
      ASSERT_TRUE(fits);
      ASSERT_TRUE(got.guards_intact()) << "w=" << w;
      ASSERT_EQ(std::vector<uint8_t>(got.span().begin(), got.span().end()), want) << "w=" << w;
      if (ww > 0) {  // one byte short: reports the width, writes nothing
        testdata::Guarded none(8 * ww - 1);
        fits = true;
        EXPECT_EQ(bitpack::zigzag_pack64_avx512(codes, none.data(), 8 * ww - 1, &fits), ww);
        EXPECT_FALSE(fits);
        EXPECT_TRUE(none.guards_intact()) << "w=" << w;
        for (uint8_t byte : none.span()) ASSERT_EQ(byte, testdata::Guarded::kPattern);
      }
    }
  }
  for (unsigned w = 0; w <= bitpack::kMaxWidth; ++w)
    EXPECT_TRUE(seen[w]) << "no block of width " << w;
}

TEST(BitpackSimd, QuantizeEncoderReadsFloat32SourcesAtEveryAlignment) {
  if (!have_avx512()) GTEST_SKIP() << kNoAvx512;
  const std::size_t n = 5003;
  std::vector<float> v = testdata::make_floats(testdata::Dist::kSpecial, n, 3);
  std::memcpy(&v[2048], &v[0], 4 * 2048);  // rows of 2048: the second repeats the first
  for (std::size_t r = 10; r < 13; ++r) std::memcpy(&v[100 * r], &v[0], 4 * 100);  // rows of 100
  std::vector<uint8_t> buf(4 * n + 4);
  for (std::size_t shift = 0; shift < 4; ++shift) {
    std::memcpy(buf.data() + shift, v.data(), 4 * n);
    for (BoundMode mode : {BoundMode::kAbs, BoundMode::kRel, BoundMode::kRelRow}) {
      for (bool dedupe : {false, true}) {
        for (uint32_t row : {100u, 2048u}) {  // 2048: whole chunks inside one distinct row
          const CodecParams cp = identity_params(mode, row, dedupe);
          EXPECT_EQ(
              quantize_body_at(qsimd::Level::kAvx512, buf.data() + shift, Dtype::kFloat32, n, cp),
              quantize_body_at(qsimd::Level::kScalar, buf.data() + shift, Dtype::kFloat32, n, cp))
              << "shift " << shift << " mode " << static_cast<int>(mode) << " dedupe " << dedupe
              << " row " << row;
        }
      }
    }
  }
}

}  // namespace
}  // namespace squeeze::compress
