// The quantize codec's per-element arithmetic, shared by the CPU encoder (which replays the
// decoder to verify the bound), the CPU decoder and the CUDA kernels, so that all of them
// produce the same bits. Host and device friendly, branch-free where it matters.
//
// Exactness argument (see compress/FORMAT.md): step is a float32 (24-bit significand) and
// |code| < 2^29, so code*step is exact in double, and offset + code*step rounds once,
// whether or not the compiler fuses the multiply-add. The double is then rounded to float32
// and, for 16-bit dtypes, from float32 to the dtype, both round-to-nearest-even.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "compress/codec.h"
#include "compress/half.h"

namespace squeeze::compress::qmath {

inline constexpr double kRoundMagic = 6755399441055744.0;    // 1.5 * 2^52: (q + M) - M = rint(q)
inline constexpr double kMaxCode = 536870911.0;              // 2^29 - 1: zigzag fits in 30 bits
inline constexpr double kMaxBound = 1.7976931348623157e308;  // bounds are clamped to DBL_MAX

// Double arithmetic that no compiler may fuse into an FMA: nvcc contracts a*b+c by default,
// which would change roundings and so the codes, and CPU and GPU frames must be identical.
SQUEEZE_HD inline double dmul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
SQUEEZE_HD inline double dadd(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
SQUEEZE_HD inline double dsub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// float -> nearest bfloat16 value, as a float (NaN inputs give unspecified values).
SQUEEZE_HD inline float round_bf16(float f) {
  const uint32_t u = f32_bits(f);
  return f32_from_bits((u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u);
}

// float -> nearest float16 value, as a float; overflow gives +-Inf (NaN: unspecified).
SQUEEZE_HD inline float round_f16(float f) {
  const uint32_t u = f32_bits(f);
  const uint32_t sign = u & 0x80000000u;
  const uint32_t a = u ^ sign;
  const uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u)) & 0xffffe000u;
  const float sub = (f32_from_bits(a) + 0.5f) - 0.5f;  // RNE to a multiple of 2^-24
  uint32_t r = a < 0x38800000u ? f32_bits(sub) : normal;
  r = r > 0x477fe000u ? 0x7f800000u : r;
  return f32_from_bits(r | sign);
}

// Bits of a float that round_f16 produced (an fp16 value or +-Inf).
SQUEEZE_HD inline uint16_t f16_bits_of_rounded(float r) {
  const uint32_t u = f32_bits(r);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  const uint32_t normal = (a - 0x38000000u) >> 13;
  const uint32_t sub = static_cast<uint32_t>(f32_from_bits(a) * 16777216.0f);  // a * 2^24
  uint32_t h = a < 0x38800000u ? sub : normal;
  h = a >= 0x7f800000u ? 0x7c00u : h;
  return static_cast<uint16_t>(h | sign);
}

template <Dtype D>
SQUEEZE_HD inline float round_to(float f) {
  if constexpr (D == Dtype::kBfloat16) {
    return round_bf16(f);
  } else if constexpr (D == Dtype::kFloat16) {
    return round_f16(f);
  } else {
    return f;
  }
}

SQUEEZE_HD inline double reconstruct(double offset, double step, int32_t code) {
  return dadd(offset, dmul(static_cast<double>(code), step));
}

// Parameters of one quantization domain (the message, or one row).
struct Params {
  double offset;
  float step;
  double inv_step;
  double bound;  // |x - x'| <= bound is what the encoder verifies
};

// Chooses offset and step for finite values in [mn, mx] (mn > mx: none) and bound eb.
// The offset is 0 when the range holds 0 (exact zeros stay exact, zero blocks vanish),
// else the midpoint (constant input then gets all-zero codes). The step leaves room for the
// rounding of the reconstruction into the dtype, so escapes stay rare. float_offset rounds
// the offset to a float (rel-row stores per-row offsets as float32).
template <Dtype D>
SQUEEZE_HD inline Params choose(double mn, double mx, double eb, bool float_offset) {
  Params p{};
  if (!(mn <= mx)) mn = mx = 0;
  eb = fmin(eb, kMaxBound);  // an infinite bound would let Inf through as a finite code
  double off = (mn <= 0 && mx >= 0) ? 0.0 : dadd(mn, dmul(dsub(mx, mn), 0.5));
  if (float_offset) off = static_cast<double>(static_cast<float>(off));
  p.offset = off;
  const double mag = dadd(fmax(fabs(mn), fabs(mx)), eb);
  double half_ulp = dmul(mag, 5.9604644775390625e-8);  // 2^-24: double -> float
  if constexpr (D == Dtype::kBfloat16) half_ulp = dadd(half_ulp, dmul(mag, 0.00390625));  // 2^-8
  if constexpr (D == Dtype::kFloat16) {
    half_ulp =
        dadd(dadd(half_ulp, dmul(mag, 0.00048828125)), 2.98023223876953125e-8);  // 2^-11, 2^-25
  }
  const double eb_eff = dsub(eb, fmin(dmul(eb, 0.5), half_ulp));
  float s = static_cast<float>(dmul(2.0, eb_eff));
  if (static_cast<double>(s) > dmul(2.0, eb_eff)) s = nextafterf(s, 0.0f);
  if (!(s >= 0.0f)) s = 0.0f;
  p.step = s;
  p.inv_step = s > 0.0f ? 1.0 / static_cast<double>(s) : 0.0;  // IEEE division on both sides
  p.bound = eb;
  return p;
}

// One element: returns its code, and whether x' = dtype(offset + code*step) meets the bound.
// NaN, Inf and out-of-range codes come back with ok = false and code 0.
template <Dtype D>
SQUEEZE_HD inline int32_t quantize_one(float xf, const Params& p, bool* ok) {
  const double x = static_cast<double>(xf);
  double q = dmul(dsub(x, p.offset), p.inv_step);
  q = q < -kMaxCode ? -kMaxCode : q;
  q = q > kMaxCode ? kMaxCode : q;
  double r = dsub(dadd(q, kRoundMagic), kRoundMagic);
  const double rec = dadd(p.offset, dmul(r, static_cast<double>(p.step)));
  const float back = round_to<D>(static_cast<float>(rec));
  const bool good = fabs(dsub(static_cast<double>(back), x)) <= p.bound;
  r = good ? r : 0.0;
  *ok = good;
  return static_cast<int32_t>(r);
}

// quantize_one over v[0, n): the codes, and true when every element meets the bound. The
// scalar path, and the vector kernels' last few elements.
template <Dtype D>
inline bool quantize_each(const float* v, std::size_t n, const Params& params, int32_t* codes) {
  const Params p = params;  // a local copy: the stores to codes cannot change it
  bool every = true;
  for (std::size_t i = 0; i < n; ++i) {
    bool good;
    codes[i] = quantize_one<D>(v[i], p, &good);
    every &= good;
  }
  return every;
}

}  // namespace squeeze::compress::qmath
