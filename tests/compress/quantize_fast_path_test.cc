// The quantize encoder's fast paths decide exactly what the exact per-element arithmetic
// (qmath::quantize_one, replayed in double) decides: same code, same escape, for every
// element. Checked element by element on adversarial inputs for all three dtypes: values
// near code boundaries (ties of rint), reconstructions near bf16/fp16 rounding ties,
// subnormals, the largest finite values, NaN and Inf; and, for the 16-bit dtypes, over
// every finite bit pattern. The fast paths are the AVX2/scalar code kernel
// (qtable::quantize_codes), the 16-bit code table (qtable::CodeTable) and the integer range
// scan on raw bits (qtable::range_keys) that the table and the message parameters use.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "compress/half.h"
#include "compress/quantize_math.h"
#include "compress/quantize_table.h"
#include "tests/compress/test_data.h"

namespace squeeze::compress {
namespace {

// The finite range by a plain float scan (what the encoder used before the key scan).
void float_range(const std::vector<float>& v, float* mn, float* mx) {
  *mn = INFINITY;
  *mx = -INFINITY;
  for (float x : v) {
    if (!std::isfinite(x)) continue;
    *mn = std::fmin(*mn, x);
    *mx = std::fmax(*mx, x);
  }
}

// Values of dtype D (already rounded into it) as floats, and their raw bytes.
template <Dtype D>
std::vector<float> in_dtype(const std::vector<float>& v) {
  const auto bytes = testdata::to_dtype(v, D);
  std::vector<float> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = testdata::element(bytes.data(), D, i);
  return out;
}

// Asserts that every fast path agrees with quantize_one on every element of v (values of D).
// Returns the number of escapes, so callers can check that the input exercised them.
template <Dtype D>
std::size_t expect_fast_paths_exact(const std::vector<float>& v, const qmath::Params& p, float mn,
                                    float mx) {
  const std::size_t n = v.size();
  std::vector<int32_t> want(n);
  std::vector<char> good(n);
  bool all_good = true;
  for (std::size_t i = 0; i < n; ++i) {
    bool g;
    want[i] = qmath::quantize_one<D>(v[i], p, &g);
    good[i] = g;
    all_good &= g;
  }
  std::vector<int32_t> got(n, 12345);
  EXPECT_EQ(qtable::quantize_codes<D>(v.data(), n, p, got.data()), all_good);
  std::size_t escapes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    escapes += good[i] ? 0 : 1;
    if (good[i] && got[i] != want[i]) {
      ADD_FAILURE() << "kernel code " << got[i] << " != exact " << want[i] << " for x=" << v[i]
                    << " (element " << i << ")";
      return escapes;
    }
    if (!good[i] && got[i] != 0) {
      ADD_FAILURE() << "kernel code " << got[i] << " for escaping x=" << v[i];
      return escapes;
    }
  }
  if constexpr (D != Dtype::kFloat32) {
    const auto raw = testdata::to_dtype(v, D);
    qtable::CodeTable table;
    table.build<D>(mn, mx, p);
    std::vector<int32_t> looked(n, 12345);
    EXPECT_EQ(table.lookup(raw.data(), n, looked.data()), all_good);
    for (std::size_t i = 0; i < n; ++i) {
      const auto h = static_cast<uint16_t>(testdata::element_bits(raw.data(), D, i));
      if (table.escapes(h) != !good[i] || looked[i] != (good[i] ? want[i] : 0)) {
        ADD_FAILURE() << "table: x=" << v[i] << " bits " << h << " code " << looked[i]
                      << " escapes " << table.escapes(h) << "; exact: code " << want[i] << " good "
                      << int{good[i]};
        return escapes;
      }
    }
  }
  return escapes;
}

// Range by the key scan (16-bit) or the float scan (float32), then abs/rel parameters.
template <Dtype D>
std::size_t check_message(const std::vector<float>& raw_values, BoundMode mode, double eb) {
  const auto v = in_dtype<D>(raw_values);
  float mn, mx;
  float_range(v, &mn, &mx);
  if constexpr (D != Dtype::kFloat32) {
    const auto bytes = testdata::to_dtype(v, D);
    uint32_t kmin = 0xffff, kmax = 0;
    // In two pieces, as the encoder folds runs.
    qtable::range_keys<D>(bytes.data(), v.size() / 3, &kmin, &kmax);
    qtable::range_keys<D>(bytes.data() + 2 * (v.size() / 3), v.size() - v.size() / 3, &kmin, &kmax);
    if (mn <= mx) {
      EXPECT_LE(kmin, kmax);
      EXPECT_EQ(qtable::key_value<D>(kmin), mn);  // == : either zero matches either zero
      EXPECT_EQ(qtable::key_value<D>(kmax), mx);
      mn = qtable::key_value<D>(kmin);
      mx = qtable::key_value<D>(kmax);
    } else {
      EXPECT_GT(kmin, kmax) << "no finite element, yet the key scan found a range";
    }
  }
  const double range = mn <= mx ? static_cast<double>(mx) - static_cast<double>(mn) : 0.0;
  const auto p = qmath::choose<D>(mn, mx, mode == BoundMode::kAbs ? eb : eb * range, false);
  return expect_fast_paths_exact<D>(v, p, mn, mx);
}

// Adversarial messages: ties of rint((x - offset) / step) and their neighbours, far from
// zero (so the rounding into bf16/fp16 decides), subnormals, the largest finite values,
// NaN and Inf, and random bit patterns.
std::vector<std::vector<float>> adversarial(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<float>> out;
  for (double step : {1e-3, 0.0625, 0.3, 7.0}) {
    std::vector<float> v;
    for (int k = -300; k <= 300; ++k) {
      const auto tie = static_cast<float>((k + 0.5) * step);
      v.push_back(tie);
      v.push_back(std::nextafter(tie, INFINITY));
      v.push_back(std::nextafter(tie, -INFINITY));
      v.push_back(static_cast<float>((k + 0.5) * step + 1000.0));  // far from zero: dtype rounding
    }
    out.push_back(v);
  }
  std::vector<float> sub, big, specials, bits;
  for (int e = -149; e <= -100; ++e) sub.push_back(std::ldexp(1.0f, e) * ((e & 1) ? -1.0f : 1.0f));
  for (int m = 0; m < 1024; ++m)
    sub.push_back(std::ldexp(static_cast<float>(m), -24));  // fp16 subnormals
  for (float x : {65504.0f, -65504.0f, 65519.0f, 65520.0f, 3.3895314e38f, -3.3895314e38f, 1.0f})
    big.push_back(x);
  for (float x : {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.5f, -2.25f}) specials.push_back(x);
  for (int i = 0; i < 20000; ++i) {
    const auto u = static_cast<uint32_t>(rng());
    float f;
    std::memcpy(&f, &u, sizeof f);
    bits.push_back(f);
  }
  out.push_back(sub);
  out.push_back(big);
  out.push_back(specials);
  out.push_back(bits);
  out.push_back({0.0f, -0.0f, 0.0f});
  out.push_back({-0.0f, NAN, 0.0f});
  out.push_back({NAN, INFINITY});
  return out;
}

template <Dtype D>
void run_adversarial() {
  std::size_t escapes = 0;
  for (const auto& v : adversarial(7)) {
    for (double eb : {1e-7, 1e-3, 0.01, 0.5, 3.0})
      escapes += check_message<D>(v, BoundMode::kAbs, eb);
    for (double rel : {1e-6, 1e-3, 1e-2, 0.3}) escapes += check_message<D>(v, BoundMode::kRel, rel);
  }
  EXPECT_GT(escapes, 0u) << "the inputs never exercised an escape";
}

TEST(QuantizeFastPath, Float32KernelMatchesExactOnAdversarialInputs) {
  run_adversarial<Dtype::kFloat32>();
}
TEST(QuantizeFastPath, Bfloat16KernelTableAndRangeMatchExactOnAdversarialInputs) {
  run_adversarial<Dtype::kBfloat16>();
}
TEST(QuantizeFastPath, Float16KernelTableAndRangeMatchExactOnAdversarialInputs) {
  run_adversarial<Dtype::kFloat16>();
}

// Every finite bit pattern of the dtype, every escape decision, for ranges that hold zero
// and ranges that do not (midpoint offset), with bounds from far below to far above an ulp.
template <Dtype D>
void run_every_pattern() {
  std::vector<float> all;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const auto b = static_cast<uint16_t>(h);
    all.push_back(D == Dtype::kBfloat16 ? bf16_to_f32(b) : f16_to_f32(b));
  }
  std::size_t escapes = 0;
  for (double eb : {1e-30, 1e-6, 1e-2, 0.7, 100.0}) {
    escapes += check_message<D>(all, BoundMode::kAbs, eb);
    escapes += check_message<D>(all, BoundMode::kRel, eb * 1e-3);
    std::vector<float> positive;  // offset at the midpoint
    for (float x : all) {
      if (x >= 0.75f && x <= 900.0f) positive.push_back(x);
    }
    escapes += check_message<D>(positive, BoundMode::kAbs, eb);
  }
  EXPECT_GT(escapes, 0u);
}

TEST(QuantizeFastPath, Bfloat16EveryBitPatternMatchesExact) {
  run_every_pattern<Dtype::kBfloat16>();
}
TEST(QuantizeFastPath, Float16EveryBitPatternMatchesExact) { run_every_pattern<Dtype::kFloat16>(); }

}  // namespace
}  // namespace squeeze::compress
