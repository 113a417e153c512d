// The cast codec and the half conversions under it: exact widening, round-to-nearest-even
// narrowing that matches the hardware (F16C) and a reference, NaN/Inf/subnormal handling,
// and the branch-free rounding the quantize codec uses to verify its bound.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "compress/codec.h"
#include "compress/codec_body.h"
#include "compress/half.h"
#include "compress/half_simd.h"
#include "compress/quantize_math.h"
#include "tests/compress/test_data.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace squeeze::compress {
namespace {

// Reference float -> bf16: the nearer of the two neighbours, ties to even; past the largest
// bf16 the upper neighbour is 2^128, which stands for Inf (IEEE overflow rounding).
uint16_t bf16_reference(float f) {
  const uint32_t u = f32_bits(f);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  if (std::isinf(f)) return static_cast<uint16_t>(u >> 16);
  const uint32_t lo = u & 0xffff0000u;
  const uint32_t hi = lo + 0x10000u;
  const double x = std::fabs(static_cast<double>(f));
  const double vlo = std::fabs(static_cast<double>(f32_from_bits(lo)));
  const double vhi = (lo & 0x7fffffffu) == 0x7f7f0000u
                         ? std::ldexp(1.0, 128)
                         : std::fabs(static_cast<double>(f32_from_bits(hi)));
  const double dl = x - vlo, dh = vhi - x;
  if (dl < dh || (dl == dh && ((lo >> 16) & 1) == 0)) return static_cast<uint16_t>(lo >> 16);
  return static_cast<uint16_t>(hi >> 16);
}

std::vector<float> interesting_floats(std::size_t random_count) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          65504.0f,
                          65519.0f,
                          65520.0f,
                          65536.0f,
                          1e10f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::min(),
                          6.1035156e-05f,
                          5.9604645e-08f,
                          2.9802322e-08f,
                          2.9802326e-08f,
                          1.0000001f,
                          3.3895314e38f,
                          3.3961776e38f};
  std::mt19937 rng(11);
  for (std::size_t i = 0; i < random_count; ++i) {
    const auto u = static_cast<uint32_t>(rng());
    const float f = f32_from_bits(u);
    if (!std::isnan(f)) v.push_back(f);
    v.push_back(f32_from_bits((u & 0x87ffffffu) | 0x30000000u));  // concentrate near fp16's range
  }
  return v;
}

TEST(Half, WideningIsExactAndNarrowingBackIsIdentity) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto b = static_cast<uint16_t>(h);
    const float fb = bf16_to_f32(b);
    const float fh = f16_to_f32(b);
    if (std::isnan(fb)) {
      EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(fb))));
    } else {
      ASSERT_EQ(f32_to_bf16(fb), b) << h;
    }
    if (std::isnan(fh)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(fh))));
      EXPECT_EQ(f32_to_f16(fh) & 0x8000, b & 0x8000);
    } else {
      ASSERT_EQ(f32_to_f16(fh), b) << h;
    }
  }
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_f32(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(Half, Bf16NarrowingMatchesReference) {
  for (float f : interesting_floats(2000000)) {
    ASSERT_EQ(f32_to_bf16(f), bf16_reference(f)) << f;
  }
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to +Inf
}

#if defined(__x86_64__)
// _mm_cvtps_ph rather than _cvtss_sh, whose clang definition is a compound literal
// (-Wpedantic); the feature test by cpuid, since clang 14 does not know
// __builtin_cpu_supports("f16c"). F16C is VEX-encoded, so it also needs AVX usable.
__attribute__((target("f16c"))) uint16_t f16_hardware(float f) {
  return static_cast<uint16_t>(
      _mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
}

bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) != 0 &&
         (c & bit_F16C) != 0;
}

TEST(Half, Fp16NarrowingMatchesF16cHardware) {
  if (!cpu_has_f16c()) GTEST_SKIP() << "CPU lacks F16C";
  for (float f : interesting_floats(2000000)) {
    ASSERT_EQ(f32_to_f16(f), f16_hardware(f)) << f;
  }
}
#endif

TEST(Half, FastRoundingUsedByQuantizeAgreesWithTheConversions) {
  for (float f : interesting_floats(2000000)) {
    ASSERT_EQ(f32_bits(qmath::round_bf16(f)), f32_bits(bf16_to_f32(f32_to_bf16(f)))) << f;
    const float r16 = qmath::round_f16(f);
    ASSERT_EQ(f32_bits(r16), f32_bits(f16_to_f32(f32_to_f16(f)))) << f;
    ASSERT_EQ(qmath::f16_bits_of_rounded(r16), f32_to_f16(f)) << f;
  }
}

TEST(Half, SimdConversionsAreBitIdenticalToScalar) {
  std::vector<float> f = interesting_floats(200000);
  f.push_back(std::numeric_limits<float>::quiet_NaN());
  f.push_back(f32_from_bits(0xffa00001u));  // negative signaling NaN
  f.push_back(f32_from_bits(0x7f800001u));
  std::vector<uint8_t> h(2 * f.size());
  for (Dtype d : {Dtype::kBfloat16, Dtype::kFloat16}) {
    if (d == Dtype::kBfloat16) {
      hsimd::narrow_run<Dtype::kBfloat16>(reinterpret_cast<const uint8_t*>(f.data()), f.size(),
                                          h.data());
    } else {
      hsimd::narrow_run<Dtype::kFloat16>(reinterpret_cast<const uint8_t*>(f.data()), f.size(),
                                         h.data());
    }
    for (std::size_t i = 0; i < f.size(); ++i) {
      uint16_t got;
      std::memcpy(&got, &h[2 * i], 2);
      ASSERT_EQ(got, d == Dtype::kBfloat16 ? f32_to_bf16(f[i]) : f32_to_f16(f[i]))
          << dtype_name(d) << " " << f[i];
    }
  }
  std::vector<uint8_t> all(2 * 65536);
  for (uint32_t i = 0; i < 65536; ++i) std::memcpy(&all[2 * i], &i, 2);
  std::vector<float> w(65536);
  auto* wb = reinterpret_cast<uint8_t*>(w.data());
  hsimd::widen_run<Dtype::kBfloat16>(all.data(), 65536, wb);
  for (uint32_t i = 0; i < 65536; ++i)
    ASSERT_EQ(f32_bits(w[i]), f32_bits(bf16_to_f32(static_cast<uint16_t>(i)))) << i;
  hsimd::widen_run<Dtype::kFloat16>(all.data(), 65536, wb);
  for (uint32_t i = 0; i < 65536; ++i)
    ASSERT_EQ(f32_bits(w[i]), f32_bits(f16_to_f32(static_cast<uint16_t>(i)))) << i;
}

TEST(Cast, Float32ToHalvesAndBack) {
  const auto v = testdata::make_floats(testdata::Dist::kSpecial, 5001, 12);
  for (Dtype to : {Dtype::kBfloat16, Dtype::kFloat16}) {
    CodecParams p;
    p.codec = CodecId::kCast;
    p.cast.to = to;
    EncodeRequest req{Dtype::kFloat32, v.data(), v.size(), &p, nullptr};
    std::vector<uint8_t> frame(max_frame_bytes(req));
    std::size_t n = 0;
    ASSERT_TRUE(encode_frame(req, frame, &n).ok());
    EXPECT_EQ(n, kFrameHeaderBytes + 4 + 2 * v.size());
    testdata::Guarded out(v.size() * 4);
    std::size_t written = 0;
    ASSERT_TRUE(decode_frame(std::span(frame.data(), n), out.span(), &written).ok());
    EXPECT_TRUE(out.guards_intact());
    for (std::size_t i = 0; i < v.size(); ++i) {
      const float want =
          to == Dtype::kBfloat16 ? bf16_to_f32(f32_to_bf16(v[i])) : f16_to_f32(f32_to_f16(v[i]));
      const float got = testdata::element(out.data(), Dtype::kFloat32, i);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << i;
      } else {
        ASSERT_EQ(f32_bits(got), f32_bits(want)) << i;
      }
    }
  }
}

TEST(Cast, RejectsNonFloat32InputAndBadTargets) {
  const std::vector<uint16_t> v(10, 0x3c00);
  std::vector<uint8_t> dst(1024);
  std::size_t n = 0;
  CodecParams p;
  p.codec = CodecId::kCast;
  for (Dtype d : {Dtype::kBytes, Dtype::kBfloat16, Dtype::kFloat16}) {
    Status st = encode_frame({d, v.data(), 10, &p, nullptr}, dst, &n);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(st.message().find("float32"), std::string::npos) << st.message();
  }
  p.cast.to = Dtype::kFloat32;
  EXPECT_EQ(encode_frame({Dtype::kFloat32, v.data(), 5, &p, nullptr}, dst, &n).code(),
            Status::Code::kInvalidArgument);
}

TEST(Cast, BodyValidation) {
  std::vector<uint8_t> out(8);
  const uint8_t ok[] = {2, 0, 0, 0, 1, 2, 3, 4};
  EXPECT_TRUE(kCastBody.decode(std::span<const uint8_t>(ok), Dtype::kFloat32, 2, out).ok());
  EXPECT_FALSE(
      kCastBody.decode(std::span<const uint8_t>(ok), Dtype::kBfloat16, 2, std::span(out.data(), 4))
          .ok());
  EXPECT_FALSE(kCastBody.decode(std::span(ok, 7), Dtype::kFloat32, 2, out).ok());
  EXPECT_FALSE(kCastBody.decode(std::span<const uint8_t>(ok), Dtype::kFloat32, 3, out).ok());
  const uint8_t bad_to[] = {1, 0, 0, 0, 1, 2, 3, 4};
  EXPECT_FALSE(kCastBody.decode(std::span<const uint8_t>(bad_to), Dtype::kFloat32, 2, out).ok());
  const uint8_t bad_pad[] = {3, 0, 1, 0, 1, 2, 3, 4};
  EXPECT_FALSE(kCastBody.decode(std::span<const uint8_t>(bad_pad), Dtype::kFloat32, 2, out).ok());
  EXPECT_FALSE(
      kCastBody.decode(std::span(ok, 3), Dtype::kFloat32, 0, std::span(out.data(), 0)).ok());
}

}  // namespace
}  // namespace squeeze::compress
