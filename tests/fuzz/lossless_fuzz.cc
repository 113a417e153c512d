// Lossless body decoder on arbitrary bytes, plus an encode/decode round trip that must be
// bit-exact.
//
// Input: byte 0 selects the mode (bit 7: round trip) and the dtype (bytes, float32,
// bfloat16, float16); bytes 1..4 are the element count (little-endian, capped) in decode
// mode; the rest is the body, or the data to round-trip. A decode must fail cleanly or
// succeed, never touch bytes outside dst, and never write dst when it fails.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "compress/lossless.h"

using namespace squeeze::compress;

namespace {

constexpr std::size_t kGuard = 32;
constexpr uint8_t kFill = 0xC3;
constexpr uint64_t kMaxBytes = 1 << 18;

void check(bool ok) {
  if (!ok) std::abort();
}

std::vector<uint8_t> guarded_decode(std::span<const uint8_t> body, Dtype dt, uint64_t count,
                                    bool* ok) {
  const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dt);
  std::vector<uint8_t> buf(bytes + 2 * kGuard, kFill);
  const Status s =
      lossless_decode_body(body, dt, count, std::span<uint8_t>(buf.data() + kGuard, bytes));
  *ok = s.ok();
  for (std::size_t i = 0; i < buf.size(); ++i) {
    const bool inside = i >= kGuard && i < kGuard + bytes;
    if (!inside || !s.ok()) check(buf[i] == kFill);
  }
  check(s.ok() || !s.message().empty());
  return {buf.begin() + kGuard, buf.begin() + static_cast<std::ptrdiff_t>(kGuard + bytes)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const Dtype dt = static_cast<Dtype>(data[0] & 3);
  const std::size_t w = dtype_size(dt);
  std::span<const uint8_t> rest(data + 5, size - 5);
  if ((data[0] & 0x80) != 0) {
    const uint64_t n = std::min<std::size_t>(rest.size(), kMaxBytes) / w;
    EncodeRequest req{dt, rest.data(), n, nullptr, nullptr};
    std::vector<uint8_t> body(lossless_body_bound(req));
    std::size_t written = 0;
    check(lossless_encode_body(req, body, &written).ok() && written <= body.size());
    bool ok = false;
    const std::vector<uint8_t> out =
        guarded_decode(std::span<const uint8_t>(body.data(), written), dt, n, &ok);
    check(ok && (out.empty() || std::memcmp(out.data(), rest.data(), out.size()) == 0));
    return 0;
  }
  uint32_t count = 0;
  std::memcpy(&count, data + 1, 4);
  bool ok = false;
  guarded_decode(rest, dt, count % (kMaxBytes / w + 1), &ok);
  return 0;
}
