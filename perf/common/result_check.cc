#include "perf/common/result_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "compress/float_element.h"
#include "compress/half.h"
#include "plugin/policy/plan.h"

namespace squeeze::perf {
namespace {

using compress::Dtype;

// float(a) op float(b), rounded to d: what NCCL's kernel writes for two ranks (avg: the two
// halves summed, exact for the factor 1/2).
bool same_as_pair(const uint8_t* got, const uint8_t* a, const uint8_t* b, std::size_t i, Dtype d,
                  RedOp op) {
  const float x = compress::float_element(a, d, i), y = compress::float_element(b, d, i);
  const float s = op == RedOp::kAvg ? (x + y) * 0.5f : apply_red_op(op, x, y);
  if (d == Dtype::kFloat32) {
    uint32_t g;
    std::memcpy(&g, got + 4 * i, 4);
    return g == compress::f32_bits(s);
  }
  uint16_t g;
  std::memcpy(&g, got + 2 * i, 2);
  return g == (d == Dtype::kBfloat16 ? compress::f32_to_bf16(s) : compress::f32_to_f16(s));
}

// Unit roundoff: 2^-p for p significant bits.
double unit_roundoff(Dtype d) {
  switch (d) {
    case Dtype::kBfloat16: return std::ldexp(1.0, -8);
    case Dtype::kFloat16: return std::ldexp(1.0, -11);
    default: return std::ldexp(1.0, -24);
  }
}

// Value range (max - min) of finite elements [first, first + n).
double value_range(const uint8_t* p, std::size_t first, std::size_t n, Dtype d) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = first; i < first + n; ++i) {
    const double v = compress::float_element(p, d, i);
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return hi >= lo ? hi - lo : 0.0;
}

// Range of each row of `len` elements (the last may be short).
std::vector<double> row_ranges(const uint8_t* p, std::size_t first, std::size_t n, std::size_t len,
                               Dtype d) {
  std::vector<double> r;
  for (std::size_t s = 0; s < n; s += len)
    r.push_back(value_range(p, first + s, std::min(len, n - s), d));
  return r;
}

// A message may start mid-row, so the codec's row can straddle two of ours: allow the
// largest range among a row and its neighbours.
double window(const std::vector<double>& rr, std::size_t row) {
  double m = rr[row];
  if (row > 0) m = std::max(m, rr[row - 1]);
  if (row + 1 < rr.size()) m = std::max(m, rr[row + 1]);
  return m;
}

void note_error(CheckResult* r, double err) {
  if (std::isnan(err) || std::isnan(r->max_err))
    r->max_err = NAN;
  else
    r->max_err = std::max(r->max_err, err);
}

}  // namespace

CheckResult check_allreduce(const std::vector<const uint8_t*>& inputs, const uint8_t* got,
                            std::size_t count, Dtype d, const Bound& b, RedOp op) {
  CheckResult r;
  const bool lossy = b.kind != Bound::Kind::kExact;
  r.wrong_applies = b.kind != Bound::Kind::kNone && !(lossy && op == RedOp::kProd);
  const std::size_t n = inputs.size();
  const double u = unit_roundoff(d), dn = static_cast<double>(n);
  // avg: NCCL sums the inputs times 1/n, so every partial result, and its error, is that much
  // smaller.
  const double scale = op == RedOp::kAvg ? 1.0 / dn : 1.0;
  // Partial results of a ring chunk have a range of at most the sum of the inputs' ranges.
  double range_sum = 0;
  std::vector<std::vector<double>> rows(n);
  for (std::size_t q = 0; q < n; ++q) {
    if (b.kind == Bound::Kind::kRel) range_sum += value_range(inputs[q], 0, count, d);
    if (b.kind == Bound::Kind::kRelRow) rows[q] = row_ranges(inputs[q], 0, count, b.row_length, d);
  }
  // Lossy hops a cast result went through (quantize budgets its bound over them): as the bound
  // says (the collective network: two), else the ring's.
  const double hops = b.cast_hops >= 0
                          ? b.cast_hops
                          : policy::allreduce_lossy_hops(static_cast<int32_t>(n),
                                                         b.bitwise ? policy::Consistency::kBitwise
                                                                   : policy::Consistency::kRelaxed);
  const double cast_u = unit_roundoff(b.cast_to);
  for (std::size_t i = 0; i < count; ++i) {
    double want = 0, abs_sum = 0;
    for (std::size_t q = 0; q < n; ++q) {
      const double x = compress::float_element(inputs[q], d, i);
      abs_sum += std::fabs(x);
      if (q == 0)
        want = x;
      else if (op == RedOp::kProd)
        want *= x;
      else if (op == RedOp::kMin)
        want = std::min(want, x);
      else if (op == RedOp::kMax)
        want = std::max(want, x);
      else
        want += x;
    }
    want *= scale;
    abs_sum *= scale;
    const double g = compress::float_element(got, d, i);
    const double err = std::isfinite(g) || !std::isfinite(want) ? std::fabs(g - want) : NAN;
    note_error(&r, err);
    if (!r.wrong_applies) continue;
    // Summation rounding; a product rounds relative to itself; min and max do not round.
    const double rounding = op == RedOp::kMin || op == RedOp::kMax ? 0.0
                            : op == RedOp::kProd                   ? (dn + 1) * u * std::fabs(want)
                                                                   : (dn + 1) * u * abs_sum;
    double tol = 0;
    switch (b.kind) {
      case Bound::Kind::kExact:
        if (n == 2) {
          r.wrong += same_as_pair(got, inputs[0], inputs[1], i, d, op) ? 0 : 1;
          continue;
        }
        tol = rounding;
        break;
      case Bound::Kind::kAbs: tol = b.value + rounding; break;
      case Bound::Kind::kRel: tol = b.value * range_sum * scale + rounding; break;
      case Bound::Kind::kRelRow: {
        double w = 0;
        for (std::size_t q = 0; q < n; ++q) w += window(rows[q], i / b.row_length);
        tol = b.value * w * scale + rounding;
        break;
      }
      case Bound::Kind::kCast: tol = hops * cast_u * abs_sum + rounding; break;
      case Bound::Kind::kNone: continue;
    }
    r.wrong += err <= tol ? 0 : 1;  // NaN is wrong
  }
  return r;
}

CheckResult check_alltoall(const uint8_t* want, const uint8_t* got, std::size_t per_peer,
                           int nranks, Dtype d, const Bound& b) {
  CheckResult r;
  r.wrong_applies = b.kind != Bound::Kind::kNone;
  const std::size_t es = compress::dtype_size(d);
  const double u = unit_roundoff(d), cast_u = unit_roundoff(b.cast_to);
  for (std::size_t q = 0; q < static_cast<std::size_t>(nranks); ++q) {
    const std::size_t first = q * per_peer;
    if (per_peer == 0) break;
    if (std::memcmp(want + first * es, got + first * es, per_peer * es) == 0) continue;  // common
    const double range = b.kind == Bound::Kind::kRel ? value_range(want, first, per_peer, d) : 0.0;
    const std::vector<double> rows = b.kind == Bound::Kind::kRelRow
                                         ? row_ranges(want, first, per_peer, b.row_length, d)
                                         : std::vector<double>{};
    for (std::size_t i = 0; i < per_peer; ++i) {
      const std::size_t k = first + i;
      if (std::memcmp(want + k * es, got + k * es, es) == 0) continue;
      const double w = compress::float_element(want, d, k), g = compress::float_element(got, d, k);
      const double err = std::isfinite(g) || !std::isfinite(w) ? std::fabs(g - w) : NAN;
      note_error(&r, err);
      double tol = 0;
      switch (b.kind) {
        case Bound::Kind::kExact: r.wrong += 1; continue;
        case Bound::Kind::kAbs: tol = b.value; break;
        case Bound::Kind::kRel: tol = b.value * range; break;
        case Bound::Kind::kRelRow: tol = b.value * window(rows, i / b.row_length); break;
        case Bound::Kind::kCast: tol = cast_u * std::fabs(w); break;
        case Bound::Kind::kNone: continue;
      }
      r.wrong += err <= tol + u * std::fabs(w) ? 0 : 1;  // + rounding into the dtype; NaN is wrong
    }
  }
  return r;
}

}  // namespace squeeze::perf
