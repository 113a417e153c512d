#include "perf/codec_bench_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "compress/float_element.h"
#include "compress/quantize.h"

namespace squeeze::perf::codec_bench {

using namespace squeeze::compress;

std::vector<Config> configs() {
  std::vector<Config> c;
  auto add = [&](std::string name, CodecId id, const std::function<void(CodecParams&)>& set,
                 bool rows = false) {
    CodecParams p;
    p.codec = id;
    set(p);
    c.push_back({std::move(name), p, rows});
  };
  add("stored", CodecId::kStored, [](CodecParams&) {});
  add("cast:bf16", CodecId::kCast, [](CodecParams& p) { p.cast.to = Dtype::kBfloat16; });
  add("cast:fp16", CodecId::kCast, [](CodecParams& p) { p.cast.to = Dtype::kFloat16; });
  auto q = [&](std::string name, BoundMode m, double eb, bool rows = false, bool dedupe = false) {
    add(
        std::move(name), CodecId::kQuantize,
        [=](CodecParams& p) {
          p.quantize.mode = m;
          p.quantize.error_bound = eb;
          p.quantize.dedupe_rows = dedupe;
        },
        rows);
  };
  q("quantize:abs=1e-4", BoundMode::kAbs, 1e-4);
  q("quantize:rel=1e-2", BoundMode::kRel, 1e-2);
  q("quantize:rel=1e-3", BoundMode::kRel, 1e-3);
  // The collective network's coding (CPU only): Rice-coded codes.
  add("quantize:rel=1e-3+rice", CodecId::kQuantize, [](CodecParams& p) {
    p.quantize.mode = BoundMode::kRel;
    p.quantize.error_bound = 1e-3;
    p.quantize.rice_codes = true;
  });
  c.back().cpu_only = true;
  q("quantize:rowrel=1e-2", BoundMode::kRelRow, 1e-2, true);
  q("quantize:rel=1e-2+dedupe", BoundMode::kRel, 1e-2, true, true);
  auto t = [&](std::string name, double keep, Dtype values) {
    add(std::move(name), CodecId::kThreshold, [=](CodecParams& p) {
      p.threshold.keep = keep;
      p.threshold.value_dtype = values;
    });
  };
  t("threshold:keep=0.01", 0.01, Dtype::kFloat32);
  t("threshold:keep=0.01/bf16", 0.01, Dtype::kBfloat16);
  t("threshold:keep=0.001", 0.001, Dtype::kFloat32);
  t("threshold:keep=0.001/bf16", 0.001, Dtype::kBfloat16);
  add("lossless", CodecId::kLossless, [](CodecParams&) {});
  return c;
}

bool applies(const Config& c, const Traffic& t, Dtype dtype) {
  if (c.needs_rows && t.row_length == 0) return false;
  if (c.params.codec == CodecId::kCast && dtype != Dtype::kFloat32) return false;
  return true;
}

double max_abs_err(const uint8_t* in, const uint8_t* out, Dtype d, std::size_t n) {
  double m = 0;
  const std::size_t es = dtype_size(d);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = compress::float_element(in, d, i), y = compress::float_element(out, d, i);
    if (!std::isfinite(x)) {
      if (std::memcmp(in + es * i, out + es * i, es) != 0) return INFINITY;
      continue;
    }
    m = std::max(m, std::fabs(static_cast<double>(x) - static_cast<double>(y)));
  }
  return m;
}

double promised_bound(const Config& c, const uint8_t* in, Dtype d, std::size_t n) {
  switch (c.params.codec) {
    case CodecId::kStored:
    case CodecId::kLossless: return 0.0;
    case CodecId::kQuantize: {
      const QuantizeParams& q = c.params.quantize;
      if (q.mode != BoundMode::kRelRow) return quantize_message_bound(q, d, in, n);
      double worst = 0;  // rows have their own bounds; report the loosest
      const std::size_t es = dtype_size(d);
      for (std::size_t r = 0; r * q.row_length < n; ++r) {
        const std::size_t len = std::min<std::size_t>(q.row_length, n - r * q.row_length);
        worst = std::max(worst, quantize_row_bound(q, d, in + r * q.row_length * es, len));
      }
      return worst;
    }
    default: return NAN;
  }
}

}  // namespace squeeze::perf::codec_bench
