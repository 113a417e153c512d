// AVX-512 quantize kernels (quantize_avx512.h). The code kernel performs, per element, the
// operations of qmath::quantize_one in the same order in double precision: subtract, multiply,
// clamp, round by the magic constant, multiply, add, round to float and to the dtype,
// subtract, compare. No multiply and add fuse: GCC contracts them into an FMA under
// AVX-512 (its C++ default is -ffp-contract=fast), which an empty asm between them prevents;
// the result would be the same anyway, as r*step is exact (quantize_math.h).
//
// Float32 has a faster path, 16 lanes in single precision, taken per 16 elements only where
// its codes and bound decisions are provably those of the double kernel; otherwise those 16
// go through the double kernel. Per element, with q = (x - offset) / step:
//  (a) |q_f| <= 2^20: no clamping, and rint of the float q is exact;
//  (b) q_f is further than |q_f| 2^-20 + tol from a half-integer, tol covering the float
//      rounding of offset, of 1/step and of the subtraction and product (each 2^-24
//      relative; 2^-20 and tol's factors are 8x and 2x those): q_f, the exact q and the
//      double kernel's q then round to the same integer r, and |q - r| <= 1/2;
//  (c) |x| <= xmax, where xmax makes step/2 + (|x| + step/2)(2^-24 + 2^-51) + 2^-149 <=
//      bound (1 - 2^-50) and |x| + step <= FLT_MAX: the double kernel's reconstruction,
//      within step/2 of x before it is rounded to double (2^-53) and to float (2^-24, no
//      overflow), then lies within the bound, with room for the rounding of its check.
// (a)-(c) fail for NaN and Inf, which the double kernel then escapes. For the parameters
// qmath::choose gives, (c) holds for every finite value of the range (its step leaves the
// half ulp of the largest magnitude), so the fallback is taken near rint ties only.
#include "compress/quantize_avx512.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#include "compress/avx512_target.h"
#endif

#include "compress/quantize_kernels.h"

namespace squeeze::compress::qavx512 {

#if defined(__x86_64__)
namespace {

// The last n < 8 elements, by quantize_one compiled for the baseline target (no FMA there).
template <Dtype D>
__attribute__((noinline)) bool tail(const float* v, std::size_t n, const qmath::Params& p,
                                    int32_t* codes) {
  return qmath::quantize_each<D>(v, n, p, codes);
}

SQUEEZE_INTRINSIC_WARNINGS_OFF  // compress/avx512_target.h

    template <Dtype D>
    SQUEEZE_AVX512 bool quantize_512(const float* v, std::size_t n, const qmath::Params& p,
                                     int32_t* codes) {
  const __m512d off = _mm512_set1_pd(p.offset), inv = _mm512_set1_pd(p.inv_step);
  const __m512d step = _mm512_set1_pd(static_cast<double>(p.step)), eb = _mm512_set1_pd(p.bound);
  const __m512d kmax = _mm512_set1_pd(qmath::kMaxCode), kmin = _mm512_set1_pd(-qmath::kMaxCode);
  const __m512d magic = _mm512_set1_pd(qmath::kRoundMagic);
  __mmask8 all = 0xff;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(v + i));
    __m512d q = _mm512_mul_pd(_mm512_sub_pd(x, off), inv);
    q = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(q, kmin, _CMP_LT_OQ), q,
                             kmin);  // q < -max ? -max : q
    q = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(q, kmax, _CMP_GT_OQ), q,
                             kmax);  // q > max ? max : q
    const __m512d r = _mm512_sub_pd(_mm512_add_pd(q, magic), magic);
    __m512d prod = _mm512_mul_pd(r, step);
    asm("" : "+v"(prod));  // keeps the multiply and the add apart (GCC would fuse them)
    const __m512d rec = _mm512_add_pd(off, prod);
    __m256 back = _mm512_cvtpd_ps(rec);
    qkern::round_in_place<D>(&back);
    const __m512d diff = _mm512_sub_pd(_mm512_cvtps_pd(back), x);
    const __mmask8 good = _mm512_cmp_pd_mask(_mm512_abs_pd(diff), eb, _CMP_LE_OQ);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), _mm512_maskz_cvttpd_epi32(good, r));
    all = static_cast<__mmask8>(all & good);
  }
  // GCC 12 leaves out the vzeroupper before the call; without it the SSE code that runs
  // next (the block packer) slows down by more than this kernel gains.
  _mm256_zeroupper();
  return tail<D>(v + i, n - i, p, codes + i) && all == 0xff;
}

// The float32 path's per-message constants; on = false where it cannot apply.
struct Fast32 {
  bool on = false;
  float off = 0, inv = 0, tol = 0, xmax = 0;
};

float float_down(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) > v) f = std::nextafterf(f, -INFINITY);
  return f;
}

float float_up(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) < v) f = std::nextafterf(f, INFINITY);
  return f;
}

Fast32 fast32(const qmath::Params& p) {
  Fast32 f;
  const double step = static_cast<double>(p.step), inv = p.inv_step, eb = p.bound;
  const double off = p.offset;
  // inv below FLT_MIN would be a float32 subnormal, rounded far more than 2^-24.
  if (!(step > 0 && inv >= 0x1p-126 && inv <= FLT_MAX && std::fabs(off) <= FLT_MAX && eb > 0 &&
        eb <= DBL_MAX))
    return f;
  const double tol = (std::fabs(off) * 0x1p-23 + 0x1p-149) * inv * 2.0 + 0x1p-40;
  const double c = 0x1p-24 + 0x1p-51;
  double xmax = (eb * (1 - 0x1p-50) - step * 0.5 - 0x1p-149) / c - step * 0.5;
  xmax = std::min(xmax * (1 - 0x1p-45),
                  static_cast<double>(FLT_MAX) - step);  // 0x1p-45: this line's own roundings
  if (!(tol < 0.125) || !(xmax > 0)) return f;
  f.on = true;
  f.off = static_cast<float>(off);
  f.inv = static_cast<float>(inv);
  f.tol = float_up(tol);
  f.xmax = float_down(xmax);
  return f;
}

SQUEEZE_AVX512 bool quantize_512_f32(const float* v, std::size_t n, const qmath::Params& p,
                                     int32_t* codes) {
  const Fast32 f = fast32(p);
  if (!f.on) return quantize_512<Dtype::kFloat32>(v, n, p, codes);
  const __m512 off = _mm512_set1_ps(f.off), inv = _mm512_set1_ps(f.inv),
               tol = _mm512_set1_ps(f.tol);
  const __m512 xmax = _mm512_set1_ps(f.xmax), half = _mm512_set1_ps(0.5f);
  const __m512 qlim = _mm512_set1_ps(0x1p20f), rel = _mm512_set1_ps(0x1p-20f);
  bool all = true;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(v + i);
    const __m512 q = _mm512_mul_ps(_mm512_sub_ps(x, off), inv);
    const __m512 r = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 aq = _mm512_abs_ps(q);
    const __m512 margin = _mm512_sub_ps(half, _mm512_abs_ps(_mm512_sub_ps(q, r)));  // exact
    const __m512 need = _mm512_add_ps(_mm512_mul_ps(aq, rel), tol);
    const __mmask16 ok = _mm512_cmp_ps_mask(aq, qlim, _CMP_LE_OQ) &
                         _mm512_cmp_ps_mask(margin, need, _CMP_GT_OQ) &
                         _mm512_cmp_ps_mask(_mm512_abs_ps(x), xmax, _CMP_LE_OQ);
    if (ok == 0xffff) {
      _mm512_storeu_si512(codes + i, _mm512_cvtps_epi32(r));  // r is integral: exact
    } else {
      all &= quantize_512<Dtype::kFloat32>(v + i, 16, p, codes + i);
    }
  }
  _mm256_zeroupper();  // as in quantize_512
  return quantize_512<Dtype::kFloat32>(v + i, n - i, p, codes + i) && all;
}

SQUEEZE_AVX512 void range_512(const uint8_t* src, std::size_t n, float* mn, float* mx) {
  __m512 vmn = _mm512_set1_ps(*mn), vmx = _mm512_set1_ps(*mx);
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff),
                max_finite = _mm512_set1_epi32(0x7f7fffff);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_loadu_si512(src + 4 * i);
    const __m512 x = _mm512_castsi512_ps(bits);
    const __mmask16 finite = _mm512_cmple_epu32_mask(_mm512_and_si512(bits, abs_mask), max_finite);
    vmn = _mm512_mask_min_ps(vmn, finite, x, vmn);  // finite lanes: x < vmn ? x : vmn
    vmx = _mm512_mask_max_ps(vmx, finite, x, vmx);  // finite lanes: x > vmx ? x : vmx
  }
  // The lanes hold finite values or the starting ones, no NaN: min/max fold in any order.
  float lo = _mm512_reduce_min_ps(vmn), hi = _mm512_reduce_max_ps(vmx);
  for (; i < n; ++i) {
    float x;
    std::memcpy(&x, src + 4 * i, 4);
    const bool finite = std::fabs(x) <= FLT_MAX;
    lo = finite && x < lo ? x : lo;
    hi = finite && x > hi ? x : hi;
  }
  *mn = lo;
  *mx = hi;
}

SQUEEZE_INTRINSIC_WARNINGS_ON

}  // namespace

// The target attribute goes on separate functions: in C++ a declaration with a different
// target than the header's would be another version of the function, not this one.
template <Dtype D>
bool quantize_run(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes) {
  if constexpr (D == Dtype::kFloat32) return quantize_512_f32(v, n, p, codes);
  return quantize_512<D>(v, n, p, codes);
}

void range_update(const uint8_t* src, std::size_t n, float* mn, float* mx) {
  range_512(src, n, mn, mx);
}

#else  // not x86-64: never called (qsimd::level() is kScalar), defined for the linker

template <Dtype D>
bool quantize_run(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes) {
  return qkern::quantize_run<D>(v, n, p, codes);
}

void range_update(const uint8_t* src, std::size_t n, float* mn, float* mx) {
  for (std::size_t i = 0; i < n; ++i) {
    float x;
    std::memcpy(&x, src + 4 * i, 4);
    qkern::range_update(&x, 1, mn, mx);
  }
}

#endif

template bool quantize_run<Dtype::kFloat32>(const float*, std::size_t, const qmath::Params&,
                                            int32_t*);
template bool quantize_run<Dtype::kBfloat16>(const float*, std::size_t, const qmath::Params&,
                                             int32_t*);
template bool quantize_run<Dtype::kFloat16>(const float*, std::size_t, const qmath::Params&,
                                            int32_t*);

}  // namespace squeeze::compress::qavx512
