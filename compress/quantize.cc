// The quantize codec's entry in the body registry, its size bound, and the bound helpers
// tests and tools use to check what the codec promises.
#include "compress/quantize.h"

#include <cfloat>
#include <cmath>

#include "compress/codec_body.h"
#include "compress/quantize_stream.h"

namespace squeeze::compress {
namespace {

template <Dtype D>
double range_of(const uint8_t* src, uint64_t n) {
  float mn = FLT_MAX, mx = -FLT_MAX;
  bool any = false;
  for (uint64_t i = 0; i < n; ++i) {
    const float v = qstream::load<D>(src + i * dtype_size(D));
    if (!std::isfinite(v)) continue;
    any = true;
    mn = std::fmin(mn, v);
    mx = std::fmax(mx, v);
  }
  return any ? static_cast<double>(mx) - static_cast<double>(mn) : 0.0;
}

double range_any(Dtype d, const void* src, uint64_t n) {
  const auto* p = static_cast<const uint8_t*>(src);
  switch (d) {
    case Dtype::kFloat32: return range_of<Dtype::kFloat32>(p, n);
    case Dtype::kBfloat16: return range_of<Dtype::kBfloat16>(p, n);
    case Dtype::kFloat16: return range_of<Dtype::kFloat16>(p, n);
    case Dtype::kBytes: break;
  }
  return 0.0;
}

}  // namespace

std::size_t quantize_body_bound(const EncodeRequest& req) {
  const std::size_t esize = dtype_size(req.dtype);
  const QuantizeParams* qp = req.params ? &req.params->quantize : nullptr;
  const uint64_t rows = qp && qp->row_length ? req.count / qp->row_length + 1 : 0;
  const uint64_t blocks = (req.count + kQuantizeBlock - 1) / kQuantizeBlock;
  // header + map (<= 4 bytes/row) + row params + widths + 30-bit codes + every element escaped
  return static_cast<std::size_t>(kQuantizeHeaderBytes + 12 * rows +
                                  blocks * (1 + 8 * kQuantizeMaxWidth) + req.count * (4 + esize));
}

double quantize_message_bound(const QuantizeParams& p, Dtype dtype, const void* src,
                              uint64_t count) {
  if (p.mode == BoundMode::kAbs) return p.error_bound;
  return p.error_bound * range_any(dtype, src, count);
}

double quantize_row_bound(const QuantizeParams& p, Dtype dtype, const void* row, uint64_t n) {
  return p.error_bound * range_any(dtype, row, n);
}

const BodyCodec kQuantizeBody = {quantize_body_bound, quantize_body_encode, quantize_body_decode};

}  // namespace squeeze::compress
