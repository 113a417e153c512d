// Fuzzes the cast body directly. Byte 0 picks the operation:
//   even: decode. byte 1 = frame dtype (any of the four), bytes 2..5 = count (u32 LE,
//         capped at 2^16), the rest is the body; guard bytes must survive.
//   odd:  round trip. byte 1 = target (bf16/fp16); the rest are float32 values. Decoding
//         must give exactly the half conversion of every value (NaN stays NaN).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "compress/codec_body.h"
#include "compress/half.h"

using namespace squeeze::compress;

namespace {

void decode(const uint8_t* data, std::size_t size) {
  if (size < 6) return;
  const auto d = static_cast<Dtype>(data[1] % 4);
  uint32_t count;
  std::memcpy(&count, data + 2, 4);
  count &= (1u << 16) - 1;
  const std::size_t bytes = count * dtype_size(d);
  std::vector<uint8_t> buf(bytes + 64, 0x3C);
  Status st =
      kCastBody.decode(std::span(data + 6, size - 6), d, count, std::span(buf.data() + 32, bytes));
  for (std::size_t i = 0; i < 32; ++i) {
    if (buf[i] != 0x3C || buf[32 + bytes + i] != 0x3C) std::abort();
  }
  if (!st.ok() && st.message().empty()) std::abort();
}

void round_trip(const uint8_t* data, std::size_t size) {
  if (size < 2) return;
  CodecParams cp;
  cp.codec = CodecId::kCast;
  cp.cast.to = (data[1] & 1) ? Dtype::kFloat16 : Dtype::kBfloat16;
  const std::size_t n = (size - 2) / 4;
  EncodeRequest req{Dtype::kFloat32, data + 2, n, &cp, nullptr};
  std::vector<uint8_t> body(kCastBody.bound(req));
  std::size_t written = 0;
  if (!kCastBody.encode(req, body, &written).ok()) std::abort();
  std::vector<uint8_t> out(4 * n);
  if (!kCastBody.decode(std::span(body.data(), written), Dtype::kFloat32, n, out).ok())
    std::abort();
  for (std::size_t i = 0; i < n; ++i) {
    float x, y;
    std::memcpy(&x, data + 2 + 4 * i, 4);
    std::memcpy(&y, out.data() + 4 * i, 4);
    const float want =
        cp.cast.to == Dtype::kBfloat16 ? bf16_to_f32(f32_to_bf16(x)) : f16_to_f32(f32_to_f16(x));
    if (std::isnan(want) ? !std::isnan(y) : f32_bits(want) != f32_bits(y)) std::abort();
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
