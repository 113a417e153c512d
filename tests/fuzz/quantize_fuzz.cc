// Fuzzes the quantize body directly. Byte 0 picks the operation:
//   even: decode. byte 1 = dtype (f32/bf16/f16), bytes 2..5 = count (u32 LE, capped at
//         2^16), the rest is the body; the destination has guard bytes that must survive.
//   odd:  round trip. byte 1 = dtype, 2 = mode (abs/rel/rel-row), 3 = bound exponent,
//         4 = row length (0..16), 5 = bit 0 dedupe, bit 1 Rice-coded codes, bits 2..3 a
//         reference range of 0, 1/2, 2 or 1000 times the values' own range (rel only); the
//         rest are values in the dtype. Encode, decode, and every element must meet the
//         bound (NaN/Inf bit-exact); the Rice-coded body must decode to the same bytes as
//         the bit-packed one. Decoded bodies (even bytes) reach the Rice payload's parser
//         through the flags byte.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "compress/float_element.h"
#include "compress/quantize.h"

using namespace squeeze::compress;

namespace {

constexpr Dtype kDtypes[] = {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kFloat16};

void decode(const uint8_t* data, std::size_t size) {
  if (size < 6) return;
  const Dtype d = kDtypes[data[1] % 3];
  uint32_t count;
  std::memcpy(&count, data + 2, 4);
  count &= (1u << 16) - 1;
  const std::size_t bytes = count * dtype_size(d);
  std::vector<uint8_t> buf(bytes + 64, 0xC3);
  Status st = quantize_body_decode(std::span(data + 6, size - 6), d, count,
                                   std::span(buf.data() + 32, bytes));
  for (std::size_t i = 0; i < 32; ++i) {
    if (buf[i] != 0xC3 || buf[32 + bytes + i] != 0xC3) std::abort();
  }
  if (!st.ok() && st.message().empty()) std::abort();
}

void round_trip(const uint8_t* data, std::size_t size) {
  if (size < 6) return;
  const Dtype d = kDtypes[data[1] % 3];
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  QuantizeParams& q = cp.quantize;
  q.mode = static_cast<BoundMode>(data[2] % 3);
  q.error_bound = q.mode == BoundMode::kAbs ? std::ldexp(1.0, 8 - data[3] % 40)
                                            : std::pow(10.0, -(data[3] % 7));
  q.row_length = data[4] % 17;
  q.dedupe_rows = (data[5] & 1) && q.row_length > 0;
  if (q.mode == BoundMode::kRelRow && q.row_length == 0) q.row_length = 1;
  q.rice_codes = (data[5] & 2) != 0;
  const uint8_t* values = data + 6;
  const std::size_t n = (size - 6) / dtype_size(d);
  constexpr double kReference[] = {0.0, 0.5, 2.0, 1000.0};
  if (q.mode == BoundMode::kRel)
    q.reference_range = kReference[(data[5] >> 2) & 3] * quantize_value_range(d, values, n);
  EncodeRequest req{d, values, n, &cp, nullptr};
  std::vector<uint8_t> body(quantize_body_bound(req));
  std::size_t written = 0;
  if (!quantize_body_encode(req, body, &written).ok()) std::abort();
  std::vector<uint8_t> out(n * dtype_size(d));
  if (!quantize_body_decode(std::span(body.data(), written), d, n, out).ok()) std::abort();
  QuantizeLayout layout;
  if (!parse_quantize_body(std::span(body.data(), written), d, n, &layout).ok()) std::abort();
  if (q.rice_codes) {  // the same codes as the bit-packed body: the same decoded bytes
    CodecParams packed = cp;
    packed.quantize.rice_codes = false;
    EncodeRequest preq{d, values, n, &packed, nullptr};
    std::vector<uint8_t> pbody(quantize_body_bound(preq));
    std::size_t pwritten = 0;
    std::vector<uint8_t> pout(out.size());
    if (!quantize_body_encode(preq, pbody, &pwritten).ok() ||
        !quantize_body_decode(std::span(pbody.data(), pwritten), d, n, pout).ok() || pout != out)
      std::abort();
  }
  const std::size_t es = dtype_size(d);
  double eb = std::max(quantize_message_bound(q, d, values, n), q.error_bound * q.reference_range);
  for (std::size_t i = 0; i < n; ++i) {
    if (q.mode == BoundMode::kRelRow && i % q.row_length == 0) {
      eb = quantize_row_bound(q, d, values + i * es, std::min<std::size_t>(q.row_length, n - i));
    }
    const float x = float_element(values, d, i), y = float_element(out.data(), d, i);
    if (std::isfinite(x)) {
      if (!(std::fabs(static_cast<double>(x) - static_cast<double>(y)) <= eb)) std::abort();
    } else if (std::memcmp(values + i * es, out.data() + i * es, es) != 0) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1) {
    round_trip(data, size);
  } else {
    decode(data, size);
  }
  return 0;
}
