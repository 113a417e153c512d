// CPU hot loops of the quantize encoder, written with GCC/Clang vector extensions (no
// intrinsics). They compute exactly what qmath::quantize_one computes, four elements at a
// time (same operations, same order, same IEEE rounding), with scalar tails. They are
// always inlined, so each caller compiles them for its own target: quantize_encode.cc
// calls them from AVX2-targeted wrappers chosen at run time (on plain SSE2 the 4-wide
// double code is slower than the scalar loop, which is used there instead).
#pragma once

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "compress/quantize_math.h"

#define SQUEEZE_KERNEL inline __attribute__((always_inline))

namespace squeeze::compress::qkern {

using v4f = float __attribute__((vector_size(16)));
using v4u = uint32_t __attribute__((vector_size(16)));
using v4i = int32_t __attribute__((vector_size(16)));
using v4d = double __attribute__((vector_size(32)));
using v4l = int64_t __attribute__((vector_size(32)));

using v8f = float __attribute__((vector_size(32)));
using v8u = uint32_t __attribute__((vector_size(32)));

// *f = dtype(*f) for D, lane by lane: qmath::round_to on 4 or 8 floats (the AVX-512 kernel
// uses 8; by reference, so that no 256-bit vector crosses a function boundary).
template <Dtype D, typename VF>
SQUEEZE_KERNEL void round_in_place(VF* f) {
  static_assert(sizeof(VF) == 16 || sizeof(VF) == 32);
  using VU = std::conditional_t<sizeof(VF) == 16, v4u, v8u>;
  if constexpr (D == Dtype::kBfloat16) {
    const auto u = __builtin_bit_cast(VU, *f);
    const VU r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    *f = __builtin_bit_cast(VF, r);
  } else if constexpr (D == Dtype::kFloat16) {
    const auto u = __builtin_bit_cast(VU, *f);
    const VU sign = u & 0x80000000u;
    const VU a = u ^ sign;
    const VU normal = (a + 0xfffu + ((a >> 13) & 1u)) & 0xffffe000u;
    const auto af = __builtin_bit_cast(VF, a);
    const VF sub = (af + 0.5f) - 0.5f;
    VU r = a < 0x38800000u ? __builtin_bit_cast(VU, sub) : normal;
    r = r > 0x477fe000u ? (VU{} + 0x7f800000u) : r;
    r |= sign;
    *f = __builtin_bit_cast(VF, r);
  }
}

template <Dtype D>
SQUEEZE_KERNEL v4f round_to(v4f f) {
  round_in_place<D>(&f);
  return f;
}

// Finite min/max of v[0..n) folded into *mn/*mx (untouched when nothing is finite).
SQUEEZE_KERNEL void range_update(const float* v, std::size_t n, float* mn, float* mx) {
  v4f vmn = (v4f{} + *mn), vmx = (v4f{} + *mx);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4f x;
    std::memcpy(&x, v + i, sizeof x);
    const v4u ax = __builtin_bit_cast(v4u, x) & 0x7fffffffu;
    const v4i finite = ax <= 0x7f7fffffu;
    vmn = (finite & (x < vmn)) ? x : vmn;
    vmx = (finite & (x > vmx)) ? x : vmx;
  }
  float lo = *mn, hi = *mx;
  for (int k = 0; k < 4; ++k) {
    lo = vmn[k] < lo ? vmn[k] : lo;
    hi = vmx[k] > hi ? vmx[k] : hi;
  }
  for (; i < n; ++i) {
    const bool finite = std::fabs(v[i]) <= FLT_MAX;
    lo = finite && v[i] < lo ? v[i] : lo;
    hi = finite && v[i] > hi ? v[i] : hi;
  }
  *mn = lo;
  *mx = hi;
}

// Codes for v[0..n), 0 for elements that miss the bound. Returns true when every element
// meets it; otherwise the caller finds the misses with qmath::quantize_one (they are rare).
template <Dtype D>
SQUEEZE_KERNEL bool quantize_run(const float* v, std::size_t n, const qmath::Params& p,
                                 int32_t* codes) {
  const v4d off = (v4d{} + p.offset), inv = (v4d{} + p.inv_step);
  const v4d step = (v4d{} + static_cast<double>(p.step)), eb = (v4d{} + p.bound);
  const v4d kmax = (v4d{} + qmath::kMaxCode), kmin = (v4d{} + -qmath::kMaxCode);
  const v4d magic = (v4d{} + qmath::kRoundMagic);
  v4l all = (v4l{} + -1);
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4f xf;
    std::memcpy(&xf, v + i, sizeof xf);
    const v4d x = __builtin_convertvector(xf, v4d);
    v4d q = (x - off) * inv;
    q = q < kmin ? kmin : q;
    q = q > kmax ? kmax : q;
    v4d r = (q + magic) - magic;
    const v4d rec = off + r * step;
    const v4f back = round_to<D>(__builtin_convertvector(rec, v4f));
    const v4d diff = __builtin_convertvector(back, v4d) - x;
    const v4l mag = __builtin_bit_cast(v4l, diff) & 0x7fffffffffffffffll;
    const v4l good = __builtin_bit_cast(v4d, mag) <= eb;
    const v4l rbits = __builtin_bit_cast(v4l, r) & good;
    const v4i c = __builtin_convertvector(__builtin_bit_cast(v4d, rbits), v4i);
    std::memcpy(codes + i, &c, sizeof c);
    all &= good;
  }
  const bool every = (all[0] & all[1] & all[2] & all[3]) != 0;
  return qmath::quantize_each<D>(v + i, n - i, p, codes + i) && every;  // the tail always runs
}

}  // namespace squeeze::compress::qkern
