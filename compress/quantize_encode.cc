// The quantize body's encoder: optional row dedupe, range scan, then chunks of codes that
// are verified against the decoder's arithmetic, zigzagged and bit-packed per 64-code block.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compress/bitpack.h"
#include "compress/bitpack_avx512.h"
#include "compress/byte_io.h"
#include "compress/quantize.h"
#include "compress/quantize_avx512.h"
#include "compress/quantize_kernels.h"
#include "compress/quantize_math.h"
#include "compress/quantize_rice.h"
#include "compress/quantize_simd.h"
#include "compress/quantize_stream.h"
#include "compress/quantize_table.h"
#include "compress/row_dedupe.h"

namespace squeeze::compress {

static_assert(qmath::kMaxCode == static_cast<double>(kQuantizeMaxCode));
static_assert(bitpack::kBlock == kQuantizeBlock);

namespace {

constexpr std::size_t kChunk = 1024;  // elements per processing step: 16 blocks, fits in L1

Status no_space(const char* what) {
  return {Status::Code::kNoSpace, std::string("quantize: body does not fit (") + what + ")"};
}

struct Range {
  float mn = std::numeric_limits<float>::infinity();
  float mx = -std::numeric_limits<float>::infinity();
};

#if defined(__x86_64__)
#define SQUEEZE_AVX2 __attribute__((target("avx2")))
#else
#define SQUEEZE_AVX2
#endif

SQUEEZE_AVX2 void range_avx2(const float* v, std::size_t n, Range* r) {
  qkern::range_update(v, n, &r->mn, &r->mx);
}

void range_scalar(const float* v, std::size_t n, Range* r) {
  for (std::size_t i = 0; i < n; ++i) {
    const bool finite = std::fabs(v[i]) <= FLT_MAX;
    r->mn = finite && v[i] < r->mn ? v[i] : r->mn;
    r->mx = finite && v[i] > r->mx ? v[i] : r->mx;
  }
}

template <Dtype D>
bool quantize_run(const float* v, std::size_t n, const qmath::Params& p, int32_t* codes) {
  return qtable::quantize_codes<D>(v, n, p, codes);
}

template <Dtype D>
SQUEEZE_AVX2 void gather_avx2(const qstream::Stream& s, uint64_t p, std::size_t n, float* out) {
  s.gather<D>(p, n, out);  // the half widening inlines as AVX2 here
}

template <Dtype D>
void gather(const qstream::Stream& s, uint64_t p, std::size_t n, float* out) {
  if (D != Dtype::kFloat32 && qsimd::level() >= qsimd::Level::kAvx2) {
    gather_avx2<D>(s, p, n, out);
  } else {
    s.gather<D>(p, n, out);
  }
}

template <Dtype D>
Range stream_range(const qstream::Stream& s, uint64_t begin, uint64_t end) {
  Range r;
  if constexpr (D != Dtype::kFloat32) {  // on the raw bits (quantize_table.h)
    uint32_t kmin = 0xffff, kmax = 0;
    s.runs(begin, static_cast<std::size_t>(end - begin),
           [&](uint64_t e, std::size_t, std::size_t len) {
             qtable::range_keys<D>(s.src + e * s.esize, len, &kmin, &kmax);
           });
    if (kmin <= kmax) {
      r.mn = qtable::key_value<D>(kmin);
      r.mx = qtable::key_value<D>(kmax);
    }
    return r;
  }
  const qsimd::Level level = qsimd::level();
  if (level == qsimd::Level::kAvx512) {  // straight from the source, no copy
    s.runs(begin, static_cast<std::size_t>(end - begin),
           [&](uint64_t e, std::size_t, std::size_t len) {
             qavx512::range_update(s.src + e * 4, len, &r.mn, &r.mx);
           });
    return r;
  }
  float vals[kChunk];
  for (uint64_t p = begin; p < end; p += kChunk) {
    const auto n = static_cast<std::size_t>(std::min<uint64_t>(kChunk, end - p));
    gather<D>(s, p, n, vals);
    if (level == qsimd::Level::kAvx2) {
      range_avx2(vals, n, &r);
    } else {
      range_scalar(vals, n, &r);
    }
  }
  return r;
}

template <Dtype D>
Status encode_typed(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* written) {
  const QuantizeParams& qp = req.params->quantize;
  const std::size_t esize = dtype_size(D);
  const uint64_t count = req.count;
  const bool rel_row = qp.mode == BoundMode::kRelRow;
  const bool dedupe = qp.dedupe_rows;
  const uint64_t L = qp.row_length;

  qstream::Stream s;
  s.src = static_cast<const uint8_t*>(req.src);
  s.esize = esize;
  s.row_length = L;
  RowDedupe dd;
  const uint64_t n_full_rows = (dedupe || rel_row) ? count / L : 0;
  const uint64_t tail = (dedupe || rel_row) ? count % L : count;
  uint64_t n_stream = count;
  if (dedupe) {
    dedupe_rows(s.src, n_full_rows, static_cast<std::size_t>(L * esize), &dd);
    s.first = dd.first.data();
    s.n_unique = dd.first.size();
    s.n_full_rows = n_full_rows;
    n_stream = s.n_unique * L + tail;
    if (req.report != nullptr) {
      req.report->dedupe_rows = n_full_rows;
      req.report->dedupe_unique = s.n_unique;
    }
  }
  const uint64_t n_param_rows =
      rel_row ? (dedupe ? s.n_unique : n_full_rows) + (tail > 0 ? 1 : 0) : 0;
  const uint64_t n_blocks = (n_stream + kQuantizeBlock - 1) / kQuantizeBlock;

  ByteWriter w(dst);
  bool ok = true;
  std::span<uint8_t> header = w.reserve(kQuantizeHeaderBytes, &ok);
  if (!ok) return no_space("header");
  if (dedupe) {
    const unsigned map_bits =
        s.n_unique > 1 ? bitpack::bit_width(static_cast<uint32_t>(s.n_unique - 1)) : 0;
    std::span<uint8_t> map = w.reserve(bitpack::packed_array_bytes(n_full_rows, map_bits), &ok);
    if (!ok) return no_space("row map");
    bitpack::pack_array(dd.map.data(), n_full_rows, map_bits, map.data());
  }
  std::span<uint8_t> row_params = w.reserve(static_cast<std::size_t>(8 * n_param_rows), &ok);
  if (!ok) return no_space("row parameters");
  std::span<uint8_t> widths = w.reserve(static_cast<std::size_t>(n_blocks), &ok);
  if (!ok) return no_space("block widths");

  qmath::Params msg{};
  double bound_abs = 0;
  qtable::CodeTable table;  // 16-bit dtypes, message modes, large enough messages
  bool use_table = false;
  if (!rel_row) {
    const Range r = stream_range<D>(s, 0, n_stream);
    const double own = r.mn <= r.mx ? static_cast<double>(r.mx) - static_cast<double>(r.mn) : 0.0;
    const double range = std::max(own, qp.reference_range);  // reference_range: kRel only
    const double eb = qp.mode == BoundMode::kAbs ? qp.error_bound : qp.error_bound * range;
    msg = qmath::choose<D>(r.mn, r.mx, eb, false);
    bound_abs = msg.bound;
    if constexpr (D != Dtype::kFloat32) {
      use_table = qtable::CodeTable::worth_it<D>(r.mn, r.mx, n_stream);
      if (use_table) table.build<D>(r.mn, r.mx, msg);
    }
  }

  const bool avx512 = qsimd::level() == qsimd::Level::kAvx512;
  std::vector<uint32_t> esc_index;
  std::vector<uint8_t> esc_values;
  float vals[kChunk];
  int32_t codes[kChunk];
  // Stream elements [p0, p0 + n) as floats: at AVX-512 (like stream_range), float32 read
  // straight from the source where they are one contiguous run, aligned (the kernels' tails
  // read them as floats); otherwise copied to vals.
  auto values = [&](uint64_t p0, std::size_t n) -> const float* {
    if constexpr (D == Dtype::kFloat32) {
      const bool one_run = s.first == nullptr || p0 % L + n <= L;
      const uint8_t* at = s.src + s.element(p0) * 4;
      if (avx512 && one_run && reinterpret_cast<uintptr_t>(at) % alignof(float) == 0) {
        return reinterpret_cast<const float*>(at);
      }
    }
    gather<D>(s, p0, n, vals);
    return vals;
  };
  // Quantizes v[i, i + len) (stream positions p0 + i...) and lists the escapes.
  auto segment = [&](const float* v, uint64_t p0, std::size_t i, std::size_t len,
                     const qmath::Params& prm) {
    if (quantize_run<D>(v + i, len, prm, codes + i)) return;
    for (std::size_t j = i; j < i + len; ++j) {
      bool good;
      qmath::quantize_one<D>(v[j], prm, &good);
      if (good) continue;
      esc_index.push_back(static_cast<uint32_t>(p0 + j));
      const uint8_t* raw = s.src + s.element(p0 + j) * esize;
      esc_values.insert(esc_values.end(), raw, raw + esize);
    }
  };
  // The same codes and escapes from the table (quantize_table.h).
  auto table_chunk = [&](uint64_t p0, std::size_t n) {
    bool none = true;
    s.runs(p0, n, [&](uint64_t e, std::size_t at, std::size_t len) {
      none &= table.lookup(s.src + e * esize, len, codes + at);
    });
    if (none) return;
    for (std::size_t j = 0; j < n; ++j) {
      const uint8_t* raw = s.src + s.element(p0 + j) * esize;
      if (!table.escapes(static_cast<uint16_t>(raw[0] | (raw[1] << 8)))) continue;
      esc_index.push_back(static_cast<uint32_t>(p0 + j));
      esc_values.insert(esc_values.end(), raw, raw + esize);
    }
  };
  // Rice-coded payload: one bit stream from here on (the widths section holds parameters).
  const std::size_t payload_at = w.offset();
  rice::Writer rw(dst.data() + payload_at, dst.size() - payload_at);
  uint64_t cur_row = std::numeric_limits<uint64_t>::max();
  qmath::Params row{};
  for (uint64_t p0 = 0; p0 < n_stream; p0 += kChunk) {
    const auto n = static_cast<std::size_t>(std::min<uint64_t>(kChunk, n_stream - p0));
    if (use_table) {
      table_chunk(p0, n);
    } else if (!rel_row) {
      segment(values(p0, n), p0, 0, n, msg);
    } else {
      const float* v = values(p0, n);
      for (std::size_t i = 0; i < n;) {  // split at row boundaries
        const uint64_t k = (p0 + i) / L;
        if (k != cur_row) {
          cur_row = k;
          const uint64_t rb = k * L, re = std::min(rb + L, n_stream);
          const Range r = stream_range<D>(s, rb, re);
          const double range =
              r.mn <= r.mx ? static_cast<double>(r.mx) - static_cast<double>(r.mn) : 0.0;
          row = qmath::choose<D>(r.mn, r.mx, qp.error_bound * range, true);
          store_le32(row_params.data() + 8 * k, f32_bits(static_cast<float>(row.offset)));
          store_le32(row_params.data() + 8 * k + 4, f32_bits(row.step));
        }
        const auto len =
            static_cast<std::size_t>(std::min<uint64_t>(n - i, (k + 1) * L - (p0 + i)));
        segment(v, p0, i, len, row);
        i += len;
      }
    }
    if (qp.rice_codes) {
      for (std::size_t b = 0; b < n; b += kQuantizeBlock) {
        const auto len = static_cast<unsigned>(std::min<std::size_t>(kQuantizeBlock, n - b));
        widths[(p0 + b) / kQuantizeBlock] = rice::encode_block(codes + b, len, &rw);
      }
      if (!rw.ok()) return no_space("Rice-coded payload");
      continue;
    }
    const std::size_t padded = (n + kQuantizeBlock - 1) / kQuantizeBlock * kQuantizeBlock;
    for (std::size_t i = n; i < padded; ++i) codes[i] = 0;
    for (std::size_t b = 0; b < padded; b += kQuantizeBlock) {
      bool fits = false;
      std::span<uint8_t> rest = dst.subspan(w.offset());
      const unsigned width =
          avx512 ? bitpack::zigzag_pack64_avx512(codes + b, rest.data(), rest.size(), &fits)
                 : bitpack::zigzag_pack64(codes + b, rest.data(), rest.size(), &fits);
      if (!fits) return no_space("code payload");
      widths[(p0 + b) / kQuantizeBlock] = static_cast<uint8_t>(width);
      w.reserve(8u * width, &ok);
    }
  }
  if (qp.rice_codes) {
    const std::size_t bytes = rw.finish();
    if (!rw.ok()) return no_space("Rice-coded payload");
    w.reserve(bytes, &ok);
  }
  if (esc_index.size() * (4 + esize) > w.remaining()) return no_space("escapes");
  for (uint32_t idx : esc_index) w.put_u32(idx);
  w.put_bytes(esc_values);

  ByteWriter h(header);
  h.put_u8(static_cast<uint8_t>(qp.mode));
  h.put_u8(static_cast<uint8_t>((dedupe ? kQuantizeFlagDedupe : 0) |
                                (qp.rice_codes ? kQuantizeFlagRice : 0)));
  h.put_u16(0);
  h.put_u32(qp.row_length);
  h.put_f64(qp.error_bound);
  h.put_f64(bound_abs);
  h.put_f64(msg.offset);
  h.put_f32(msg.step);
  h.put_u32(static_cast<uint32_t>(esc_index.size()));
  h.put_u32(static_cast<uint32_t>(s.n_unique));
  *written = w.offset();
  return Status::Ok();
}

}  // namespace

double quantize_value_range(Dtype dtype, const void* src, uint64_t count) {
  qstream::Stream s;
  s.src = static_cast<const uint8_t*>(src);
  s.esize = dtype_size(dtype);
  Range r;
  switch (dtype) {
    case Dtype::kFloat32: r = stream_range<Dtype::kFloat32>(s, 0, count); break;
    case Dtype::kBfloat16: r = stream_range<Dtype::kBfloat16>(s, 0, count); break;
    case Dtype::kFloat16: r = stream_range<Dtype::kFloat16>(s, 0, count); break;
    case Dtype::kBytes: break;
  }
  return r.mn <= r.mx ? static_cast<double>(r.mx) - static_cast<double>(r.mn) : 0.0;
}

Status quantize_body_encode(const EncodeRequest& req, std::span<uint8_t> dst,
                            std::size_t* written) {
  *written = 0;
  if (req.params == nullptr) return {Status::Code::kInvalidArgument, "quantize: params are null"};
  const QuantizeParams& qp = req.params->quantize;
  if (!is_float(req.dtype) || dtype_size(req.dtype) == 0) {
    return {Status::Code::kInvalidArgument,
            std::string("quantize: input must be a float dtype, got ") + dtype_name(req.dtype)};
  }
  if (!(std::isfinite(qp.error_bound) && qp.error_bound > 0)) {
    return {Status::Code::kInvalidArgument,
            "quantize: error_bound must be finite and > 0, got " + std::to_string(qp.error_bound)};
  }
  if (static_cast<uint8_t>(qp.mode) > static_cast<uint8_t>(BoundMode::kRelRow)) {
    return {Status::Code::kInvalidArgument,
            "quantize: unknown bound mode " + std::to_string(static_cast<unsigned>(qp.mode))};
  }
  if (!(std::isfinite(qp.reference_range) && qp.reference_range >= 0) ||
      (qp.reference_range > 0 && qp.mode != BoundMode::kRel)) {
    return {Status::Code::kInvalidArgument,
            "quantize: reference_range must be finite, >= 0, and set in rel mode only, got " +
                std::to_string(qp.reference_range)};
  }
  if ((qp.mode == BoundMode::kRelRow || qp.dedupe_rows) && qp.row_length == 0) {
    return {Status::Code::kInvalidArgument,
            "quantize: rel-row mode and row dedupe need row_length > 0"};
  }
  if (req.count > std::numeric_limits<uint32_t>::max()) {
    return {Status::Code::kInvalidArgument,
            "quantize: count " + std::to_string(req.count) + " exceeds 2^32-1 elements"};
  }
  switch (req.dtype) {
    case Dtype::kFloat32: return encode_typed<Dtype::kFloat32>(req, dst, written);
    case Dtype::kBfloat16: return encode_typed<Dtype::kBfloat16>(req, dst, written);
    case Dtype::kFloat16: return encode_typed<Dtype::kFloat16>(req, dst, written);
    case Dtype::kBytes: break;
  }
  return {Status::Code::kInvalidArgument, "quantize: input must be a float dtype"};
}

}  // namespace squeeze::compress
