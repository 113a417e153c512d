// Threshold codec encoder: tau (searched or reused), one tight scan that lists the kept
// positions, then positions (bitmap or delta varints, whichever is smaller) and values.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "compress/byte_io.h"
#include "compress/threshold.h"
#include "compress/threshold_scan.h"
#include "compress/threshold_values.h"

namespace squeeze::compress {

namespace {

Status invalid(const std::string& what) {
  return {Status::Code::kInvalidArgument, "threshold encode: " + what};
}

// The smallest half (bf16 or fp16) magnitude whose value is >= tau (tau > 0, maybe Inf).
uint16_t half_tau_bits(Dtype dt, float tau) {
  uint16_t h = dt == Dtype::kBfloat16 ? f32_to_bf16(tau) : f32_to_f16(tau);
  h = static_cast<uint16_t>(h & 0x7fffu);
  const float back = dt == Dtype::kBfloat16 ? bf16_to_f32(h) : f16_to_f32(h);
  if (back < tau) ++h;
  return h;
}

inline std::size_t varint_bytes(uint64_t v) {
  return 1 + static_cast<std::size_t>(std::bit_width(v | 1) - 1) / 7;
}

inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

}  // namespace

Status threshold_encode_body(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* written,
                             bool allow_expansion) {
  *written = 0;
  if (req.params == nullptr) return invalid("no codec parameters");
  const ThresholdParams& p = req.params->threshold;
  const Dtype dt = req.dtype;
  const uint64_t n = req.count;
  if (!is_float(dt) || dtype_size(dt) == 0)
    return invalid(std::string("needs a float dtype, got ") + dtype_name(dt));
  if (!(p.keep > 0.0 && p.keep <= 1.0))
    return invalid("keep must be in (0, 1], got " + std::to_string(p.keep));
  if (p.sample_size == 0) return invalid("sample_size must be at least 1");
  if (!is_float(p.value_dtype) || dtype_size(p.value_dtype) == 0) {
    return invalid(std::string("value dtype must be float32, bfloat16 or float16, got ") +
                   dtype_name(p.value_dtype));
  }
  const std::size_t w = dtype_size(dt);
  if (n > std::numeric_limits<std::size_t>::max() / 8)
    return invalid("count " + std::to_string(n) + " too large");
  if (n > 0 && req.src == nullptr) return invalid("null source with count " + std::to_string(n));
  const Dtype vd = threshold_value_dtype(dt, p.value_dtype);
  const std::size_t vw = dtype_size(vd);
  const auto* base = static_cast<const uint8_t*>(req.src);
  const std::size_t input_bytes = static_cast<std::size_t>(n) * w;
  std::size_t limit = dst.size();
  if (!allow_expansion) limit = std::min(limit, input_bytes == 0 ? 0 : input_bytes - 1);

  ThresholdState* st = req.threshold_state;
  const bool ef = p.error_feedback && st != nullptr;
  bool same_shape = false;
  bool search = true;
  const float* residual = nullptr;
  if (st != nullptr) {
    ThresholdState& s = *st;
    same_shape = s.dtype_ == dt && s.count_ == n;
    s.refresh_.set_refresh_every(p.refresh_every);
    search = !s.has_tau_ || !same_shape || s.keep_ != p.keep || s.sample_size_ != p.sample_size ||
             s.refresh_.search_due();
    if (ef && same_shape && s.residual_.size() == n) residual = s.residual_.data();
  }
  auto no_space = [&]() {
    if (st != nullptr) st->refresh_.invalidate();
    return Status(Status::Code::kNoSpace, "threshold encode: body does not fit (" +
                                              std::to_string(limit) + " bytes allowed for " +
                                              std::to_string(n) + " elements)");
  };
  if (limit < kThresholdHeaderBytes) return no_space();

  const float tau =
      search ? threshold_estimate_tau(dt, base, residual, n, p.keep, p.sample_size) : st->tau_;

  // Scan. Values alone must fit, which bounds the position list's memory.
  const uint64_t max_kept = (limit - kThresholdHeaderBytes) / vw;
  std::vector<uint64_t> kept;
  kept.reserve(static_cast<std::size_t>(std::min<double>(
      static_cast<double>(max_kept) + 1, static_cast<double>(n) * p.keep * 1.25 + 64)));
  std::vector<float>* ybuf = nullptr;
  bool fits;
  if (ef) {
    ybuf = &st->next_;
    ybuf->resize(static_cast<std::size_t>(n));
    fits = threshold_scan_feedback(dt, base, residual, n, f32_bits(tau), max_kept, ybuf->data(),
                                   &kept);
  } else if (dt == Dtype::kFloat32) {
    fits = threshold_scan_f32(base, n, f32_bits(tau), max_kept, &kept);
  } else {
    fits = threshold_scan_u16(base, n, half_tau_bits(dt, tau), max_kept, &kept);
  }
  if (!fits) return no_space();

  // Position encoding: delta varints (first = position, then gap - 1) or a bitmap.
  std::size_t varint_total = 0;
  uint64_t prev = 0;
  for (std::size_t k = 0; k < kept.size(); ++k) {
    varint_total += varint_bytes(k == 0 ? kept[0] : kept[k] - prev - 1);
    prev = kept[k];
  }
  const std::size_t bitmap_bytes = static_cast<std::size_t>((n + 7) / 8);
  const uint8_t mode = varint_total < bitmap_bytes ? kThresholdDeltaVarint : kThresholdBitmap;
  const std::size_t pos_bytes = mode == kThresholdDeltaVarint ? varint_total : bitmap_bytes;
  const std::size_t body = kThresholdHeaderBytes + pos_bytes + kept.size() * vw;
  if (body > limit) return no_space();

  ByteWriter hw(dst.first(kThresholdHeaderBytes));
  hw.put_u8(mode);
  hw.put_u8(static_cast<uint8_t>(vd));
  hw.put_u16(0);
  hw.put_f32(tau);
  hw.put_u64(kept.size());
  uint8_t* out = dst.data() + kThresholdHeaderBytes;
  if (mode == kThresholdDeltaVarint) {
    prev = 0;
    for (std::size_t k = 0; k < kept.size(); ++k) {
      out = put_varint(out, k == 0 ? kept[0] : kept[k] - prev - 1);
      prev = kept[k];
    }
  } else {
    std::memset(out, 0, bitmap_bytes);
    for (uint64_t i : kept) out[i >> 3] = static_cast<uint8_t>(out[i >> 3] | (1u << (i & 7)));
    out += bitmap_bytes;
  }
  uint8_t* values = out;
  if (!ef && vd == dt && w == 4) {
    for (uint64_t i : kept) {
      std::memcpy(out, base + i * 4, 4);
      out += 4;
    }
  } else if (!ef && vd == dt) {
    for (uint64_t i : kept) {
      std::memcpy(out, base + i * 2, 2);
      out += 2;
    }
  } else {
    for (uint64_t i : kept) {
      store_value(vd, out, ef ? (*ybuf)[i] : load_as_float(dt, base, i));
      out += vw;
    }
  }
  *written = body;

  if (st != nullptr) {
    ThresholdState& s = *st;
    if (search) {
      s.has_tau_ = true;
      s.tau_ = tau;
      s.keep_ = p.keep;
      s.sample_size_ = p.sample_size;
    }
    s.dtype_ = dt;
    s.count_ = n;
    s.refresh_.record(search);
    s.refresh_.observe_kept(kept.size(), n, p.keep);
    if (ef) {
      // residual = (x + r) - kept: y for dropped elements, the narrowing error for kept ones.
      s.residual_.swap(s.next_);
      for (std::size_t k = 0; k < kept.size(); ++k) {
        const float y = s.residual_[kept[k]];
        const float r = y - stored_value_as_float(vd, values + k * vw);
        s.residual_[kept[k]] = std::isfinite(y) && std::isfinite(r) ? r : 0.0f;
      }
    } else {
      std::vector<float>().swap(s.residual_);
    }
  }
  return Status::Ok();
}

}  // namespace squeeze::compress
