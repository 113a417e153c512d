// The quantize encoder writes the same bytes at every instruction-set level
// (compress/quantize_simd.h): the AVX-512 and AVX2 code kernels give qmath::quantize_one's
// code and escape decision for every element, the vector range scan finds the scalar scan's
// range, the vector row hash equals the scalar one, and whole bodies and frames from the
// public encode API equal those encoded with the SIMD paths off (level kScalar), for
// float32, bfloat16 and float16, every bound mode, with and without row dedupe, on
// NaN/Inf/denormal/escape-heavy inputs and lengths that leave tails. Levels the CPU lacks
// are skipped (set_level clamps to the CPU).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "compress/codec.h"
#include "compress/half.h"
#include "compress/quantize.h"
#include "compress/quantize_avx512.h"
#include "compress/quantize_math.h"
#include "compress/quantize_simd.h"
#include "compress/quantize_table.h"
#include "compress/row_dedupe.h"
#include "tests/compress/at_level.h"
#include "tests/compress/test_data.h"

namespace squeeze::compress {
namespace {

using qsimd::Level;
using testdata::Dist;

// The levels this CPU runs, kScalar first.
std::vector<Level> levels() {
  std::vector<Level> out;
  for (Level l : {Level::kScalar, Level::kAvx2, Level::kAvx512}) {
    if (l <= qsimd::cpu_level()) out.push_back(l);
  }
  return out;
}

// Values that stress the kernel: ties of rint, reconstructions near dtype rounding ties,
// clamped codes, zeros of both signs, subnormals, the largest finite values, NaN and Inf.
std::vector<float> adversarial(const qmath::Params& p, std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const double step = static_cast<double>(p.step);
  const float specials[] = {0.0f,
                            -0.0f,
                            FLT_MAX,
                            -FLT_MAX,
                            FLT_MIN,
                            -FLT_MIN,
                            1e-45f,
                            -1e-45f,
                            INFINITY,
                            -INFINITY,
                            NAN,
                            -NAN,
                            f32_from_bits(0x7fa00001u),
                            65504.0f,
                            65520.0f,
                            -65520.0f,
                            3.0e38f,
                            6.0e-8f,
                            2.98e-8f,
                            f32_from_bits(0x7f7fffffu)};
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t kind = rng() % 8;
    const double k = std::round(gauss(rng) * 300.0);
    switch (kind) {
      case 0: v[i] = specials[rng() % std::size(specials)]; break;
      case 1: v[i] = static_cast<float>(p.offset + (k + 0.5) * step); break;  // rint tie
      case 2:
        v[i] = std::nextafter(static_cast<float>(p.offset + (k + 0.5) * step), INFINITY);
        break;
      case 3: v[i] = static_cast<float>(p.offset + k * step + p.bound); break;       // bound edge
      case 4: v[i] = static_cast<float>(p.offset + gauss(rng) * step * 1e9); break;  // clamped
      case 5: v[i] = f32_from_bits(static_cast<uint32_t>(rng())); break;             // any bits
      default: v[i] = static_cast<float>(p.offset + gauss(rng) * step * 100.0); break;
    }
  }
  return v;
}

template <Dtype D>
void expect_kernel_exact(const std::vector<float>& v, const qmath::Params& p) {
  for (Level l : levels()) {
    AtLevel at(l);
    // Every length up to 40 at every start (misaligned loads, every tail), then the rest.
    for (std::size_t start = 0; start < 9 && start < v.size(); ++start) {
      for (std::size_t n = 0; start + n <= v.size(); n = n < 40 ? n + 1 : n * 3 + 7) {
        std::vector<int32_t> got(n + 1, 12345);
        bool all_good = true;
        const bool every = qtable::quantize_codes<D>(v.data() + start, n, p, got.data());
        for (std::size_t i = 0; i < n; ++i) {
          bool good;
          const int32_t want = qmath::quantize_one<D>(v[start + i], p, &good);
          all_good &= good;
          ASSERT_EQ(got[i], want) << qsimd::level_name(l) << " dtype " << dtype_name(D)
                                  << " x=" << v[start + i] << " bits " << std::hex
                                  << f32_bits(v[start + i]);
        }
        ASSERT_EQ(every, all_good) << qsimd::level_name(l) << " n=" << n;
        ASSERT_EQ(got[n], 12345) << "wrote past the end";
      }
    }
  }
}

template <Dtype D>
void kernel_cases() {
  uint64_t seed = 1;
  // Hand-made parameters where |x' - x| == bound exactly for the ties of rint (choose()
  // rarely gives that): the <= of the bound check decides.
  for (const auto& [off, step] :
       std::vector<std::pair<double, float>>{{0, 1.0f}, {0, 0.25f}, {3, 2.0f}, {-1, 0.0078125f}}) {
    const qmath::Params p{off, step, 1.0 / static_cast<double>(step),
                          static_cast<double>(step) / 2};
    expect_kernel_exact<D>(adversarial(p, 400, seed++), p);
    if (::testing::Test::HasFatalFailure()) return;
  }
  const double bounds[] = {1e-2, 1e-4, 1e-7, 3e-39, 1e30};
  for (double eb : bounds) {
    for (const auto& [mn, mx] :
         std::vector<std::pair<double, double>>{{-1, 1}, {1000, 1001}, {-3e38, 3e38}, {0, 0}}) {
      const qmath::Params p = qmath::choose<D>(mn, mx, eb * (mx - mn > 0 ? (mx - mn) : 1.0), false);
      expect_kernel_exact<D>(adversarial(p, 400, seed++), p);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(QuantizeSimdIdentity, CodeKernelsMatchQuantizeOneFloat32) { kernel_cases<Dtype::kFloat32>(); }
TEST(QuantizeSimdIdentity, CodeKernelsMatchQuantizeOneBfloat16) {
  kernel_cases<Dtype::kBfloat16>();
}
TEST(QuantizeSimdIdentity, CodeKernelsMatchQuantizeOneFloat16) { kernel_cases<Dtype::kFloat16>(); }

// The float32 AVX-512 kernel's single-precision path (quantize_avx512.cc) decides per 16
// elements whether its codes are provably the double kernel's. Many ranges and bounds as the
// encoder chooses them, values spread over the range, a few ulps around rint ties, at the
// range's ends and far outside it: every code and escape decision is quantize_one's.
TEST(QuantizeSimdIdentity, Float32FastPathGivesQuantizeOnesCodesNearTiesAndRangeEnds) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const double scale = std::pow(10.0, unit(rng) * 60 - 30);  // 1e-30 .. 1e30
    double mn = (unit(rng) * 2 - 1) * scale, mx = (unit(rng) * 2 - 1) * scale;
    if (trial % 3 == 0) mn = std::fabs(mn) + scale;  // a range away from 0: midpoint offset
    if (mn > mx) std::swap(mn, mx);
    const float fmn = static_cast<float>(mn), fmx = static_cast<float>(mx);
    const double eb =
        std::pow(10.0, -1 - unit(rng) * 7) * (static_cast<double>(fmx) - fmn);  // rel 1e-1 .. 1e-8
    const qmath::Params p = qmath::choose<Dtype::kFloat32>(fmn, fmx, eb, trial % 2 == 0);
    std::vector<float> v(4096);
    const double step = static_cast<double>(p.step);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double u = unit(rng);
      float x = static_cast<float>(fmn + u * (static_cast<double>(fmx) - fmn));
      if (i % 4 == 1 && step > 0) {  // a few ulps around a rint tie
        const double k = std::floor((static_cast<double>(x) - p.offset) / step);
        x = static_cast<float>(p.offset + (k + 0.5) * step);
        for (int u2 = static_cast<int>(rng() % 9) - 4; u2 != 0; u2 += u2 > 0 ? -1 : 1)
          x = std::nextafter(x, u2 > 0 ? INFINITY : -INFINITY);
      }
      if (i % 64 == 2) x = (rng() & 1) ? fmn : fmx;
      if (x < fmn) x = fmn;
      if (x > fmx) x = fmx;
      // Outside the range (generic parameters): up to 2^19 steps away, where a value's own
      // float rounding can exceed what the step left for it and the bound check decides.
      if (i % 8 == 3) x = static_cast<float>(p.offset + (unit(rng) * 2 - 1) * 0x1p19 * step);
      v[i] = x;
    }
    expect_kernel_exact<Dtype::kFloat32>(v, p);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Parameters choose() never gives: a bound below half the step (the double kernel escapes
  // many values), and a step that carries reconstructions of the largest floats past FLT_MAX
  // (to Inf, escaped). The single-precision path must stand aside for both.
  std::vector<float> v(4096);
  std::normal_distribution<double> gauss(0.0, 1.0);
  for (auto& x : v) x = static_cast<float>(gauss(rng) * 1000.0);
  expect_kernel_exact<Dtype::kFloat32>(v, qmath::Params{0.0, 1.0f, 1.0, 0.3});
  if (::testing::Test::HasFatalFailure()) return;
  const double big_step = 0x1p110;
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = f32_from_bits(0x7f7fffffu - static_cast<uint32_t>(i % 2048));
  // The largest float sits at q = 217.9: rint gives 218, whose reconstruction overflows.
  const double off = static_cast<double>(FLT_MAX) - 217.9 * big_step;
  expect_kernel_exact<Dtype::kFloat32>(
      v, qmath::Params{off, 0x1p110f, 1.0 / big_step, big_step / 2 + FLT_MAX * 0x1p-23});
}

TEST(QuantizeSimdIdentity, Avx512RangeScanFindsTheScalarRange) {
  if (qsimd::cpu_level() < Level::kAvx512) GTEST_SKIP() << "no AVX-512 here";
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t n = rng() % 70;
    std::vector<uint8_t> bytes(4 * n + 3);
    const std::size_t at = rng() % 4;  // any alignment
    for (std::size_t i = 0; i < n; ++i) {
      const uint64_t r = rng();
      float x = static_cast<float>(static_cast<double>(r % 2001) - 1000.0);
      if (r % 7 == 0) x = f32_from_bits(static_cast<uint32_t>(r >> 20));  // NaN, Inf, anything
      if (r % 11 == 0) x = (r & 1) ? -0.0f : 0.0f;
      if (r % 13 == 0) x = (r & 1) ? -INFINITY : INFINITY;
      if (trial % 5 == 0)
        x = (r % 3 == 0) ? NAN : ((r & 1) ? INFINITY : -INFINITY);  // nothing finite
      std::memcpy(bytes.data() + at + 4 * i, &x, 4);
    }
    float mn = INFINITY, mx = -INFINITY;
    for (std::size_t i = 0; i < n; ++i) {
      float x;
      std::memcpy(&x, bytes.data() + at + 4 * i, 4);
      if (std::fabs(x) <= FLT_MAX) {
        mn = std::fmin(mn, x);
        mx = std::fmax(mx, x);
      }
    }
    float got_mn = INFINITY, got_mx = -INFINITY;
    qavx512::range_update(bytes.data() + at, n, &got_mn, &got_mx);
    // Equal as values (which zero is reported may differ; the encoder cannot tell).
    ASSERT_EQ(got_mn, mn) << "trial " << trial;
    ASSERT_EQ(got_mx, mx) << "trial " << trial;
    ASSERT_EQ(std::isinf(got_mn), std::isinf(mn));
  }
}

TEST(QuantizeSimdIdentity, RowHashIsTheSameAtEveryLevelAndSeesEveryBit) {
  std::mt19937_64 rng(3);
  std::vector<uint8_t> buf(4200);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (std::size_t n : {0, 1, 7, 8, 63, 64, 65, 127, 128, 200, 512, 4099}) {
    uint64_t want = 0;
    {
      AtLevel at(Level::kScalar);
      want = row_hash(buf.data() + 1, n);
    }
    for (Level l : levels()) {
      AtLevel at(l);
      EXPECT_EQ(row_hash(buf.data() + 1, n), want) << qsimd::level_name(l) << " n=" << n;
    }
  }
  // Flipping any one bit of a 512-byte row changes the hash (otherwise dedupe would compare
  // such rows byte by byte, still exactly, but slowly).
  std::vector<uint64_t> seen;
  const uint64_t base = row_hash(buf.data(), 512);
  for (std::size_t bit = 0; bit < 512 * 8; ++bit) {
    buf[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(row_hash(buf.data(), 512), base) << "bit " << bit;
    buf[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

// A message of n elements from distribution d; with rows, most rows repeat a few distinct
// ones, some differ from them only in their last element by one ulp (exact dedupe keeps them).
std::vector<float> message(Dist d, std::size_t n, uint32_t row, uint64_t seed) {
  std::vector<float> v = testdata::make_floats(d, n, seed);
  if (row == 0) return v;
  const std::vector<float> pool = testdata::make_floats(d, 6 * std::size_t{row}, seed + 1);
  std::mt19937_64 rng(seed);
  for (std::size_t r = 0; (r + 1) * row <= n; ++r) {
    if (rng() % 4 == 0) continue;  // a fresh row
    const std::size_t id = rng() % 6;
    std::memcpy(&v[r * row], &pool[id * row], 4 * std::size_t{row});
    if (rng() % 5 == 0) v[r * row + row - 1] = std::nextafter(v[r * row + row - 1], INFINITY);
  }
  return v;
}

std::vector<uint8_t> encode_whole_frame(const std::vector<uint8_t>& in, Dtype dt, uint64_t count,
                                        const CodecParams& cp) {
  EncodeRequest req{dt, in.data(), count, &cp, nullptr};
  std::vector<uint8_t> frame(max_frame_bytes(req));
  std::size_t n = 0;
  const Status st = encode_frame(req, frame, &n);
  EXPECT_TRUE(st.ok()) << st.message();
  frame.resize(n);
  return frame;
}

std::vector<uint8_t> decode_whole_frame(const std::vector<uint8_t>& frame, std::size_t bytes) {
  std::vector<uint8_t> out(bytes);
  std::size_t written = 0;
  const Status st = decode_frame(frame, out, &written);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(written, bytes);
  return out;
}

TEST(QuantizeSimdIdentity, BodiesFramesAndDecodesAreTheSameAtEveryLevel) {
  const std::vector<Level> all = levels();
  std::size_t compared = 0;
  uint64_t seed = 11;
  for (Dtype dt : {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16}) {
    for (Dist d : testdata::all_dists()) {
      for (std::size_t n : {1, 7, 64, 1000, 5003, 70001}) {
        for (BoundMode mode : {BoundMode::kAbs, BoundMode::kRel, BoundMode::kRelRow}) {
          for (bool dedupe : {false, true}) {
            for (uint32_t row : {128u, 33u}) {
              if (!dedupe && mode != BoundMode::kRelRow && row != 128u) continue;
              const auto v = message(d, n, dedupe ? row : 0, seed++);
              const auto in = testdata::to_dtype(v, dt);
              const CodecParams cp = identity_params(mode, row, dedupe);
              std::vector<uint8_t> want_body, want_frame, want_decoded;
              {
                AtLevel at(Level::kScalar);
                want_body = quantize_body_at(Level::kScalar, in.data(), dt, n, cp);
                want_frame = encode_whole_frame(in, dt, n, cp);
                want_decoded = decode_whole_frame(want_frame, in.size());
              }
              for (std::size_t li = 1; li < all.size(); ++li) {
                AtLevel at(all[li]);
                ASSERT_EQ(quantize_body_at(all[li], in.data(), dt, n, cp), want_body)
                    << qsimd::level_name(all[li]) << " " << dtype_name(dt) << " "
                    << testdata::dist_name(d) << " n=" << n << " mode " << static_cast<int>(mode)
                    << " dedupe " << dedupe << " row " << row;
                ASSERT_EQ(encode_whole_frame(in, dt, n, cp), want_frame);
                ASSERT_EQ(decode_whole_frame(want_frame, in.size()), want_decoded) << "decode";
                ++compared;
              }
            }
          }
        }
      }
    }
  }
  if (all.size() > 1) {
    EXPECT_GT(compared, 1000u);
  }
}

}  // namespace
}  // namespace squeeze::compress
