// Threshold body decoder on arbitrary bytes, plus a cheap encode/decode round trip.
//
// Input: byte 0 selects the mode (bit 7: round trip) and the dtype (float32, bfloat16,
// float16); bytes 1..4 are the element count (little-endian, capped) in decode mode or
// the keep fraction and flags in round-trip mode; the rest is the body, or the data.
// A decode must fail cleanly or succeed, never touch bytes outside dst, and never write
// dst when it fails.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "compress/threshold.h"

using namespace squeeze::compress;

namespace {

constexpr std::size_t kGuard = 32;
constexpr uint8_t kFill = 0xC3;
constexpr uint64_t kMaxCount = 1 << 16;

void check(bool ok) {
  if (!ok) std::abort();
}

// Decodes into a guarded buffer; returns the decoded bytes (empty on failure).
std::vector<uint8_t> guarded_decode(std::span<const uint8_t> body, Dtype dt, uint64_t count,
                                    bool* ok) {
  const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dt);
  std::vector<uint8_t> buf(bytes + 2 * kGuard, kFill);
  const Status s =
      threshold_decode_body(body, dt, count, std::span<uint8_t>(buf.data() + kGuard, bytes));
  *ok = s.ok();
  for (std::size_t i = 0; i < buf.size(); ++i) {
    const bool inside = i >= kGuard && i < kGuard + bytes;
    if (!inside || !s.ok()) check(buf[i] == kFill);
  }
  check(s.ok() || !s.message().empty());
  return {buf.begin() + kGuard, buf.begin() + static_cast<std::ptrdiff_t>(kGuard + bytes)};
}

void round_trip(Dtype dt, const uint8_t* meta, std::span<const uint8_t> data) {
  const std::size_t w = dtype_size(dt);
  const uint64_t n = data.size() / w;
  CodecParams cp;
  cp.codec = CodecId::kThreshold;
  cp.threshold.keep = (meta[0] + 1) / 256.0;
  cp.threshold.sample_size = 1 + meta[1];
  cp.threshold.refresh_every = meta[2] & 3;
  cp.threshold.error_feedback = (meta[3] & 1) != 0;
  cp.threshold.value_dtype = dt;
  ThresholdState state;
  for (int message = 0; message < 2; ++message) {
    EncodeRequest req{dt, data.data(), n, &cp, &state};
    std::vector<uint8_t> body(threshold_body_bound(req));
    std::size_t written = 0;
    const Status s = threshold_encode_body(req, body, &written, true);
    check(s.ok() && written <= body.size());
    bool ok = false;
    const std::vector<uint8_t> out =
        guarded_decode(std::span<const uint8_t>(body.data(), written), dt, n, &ok);
    check(ok);
    if (cp.threshold.error_feedback) continue;  // kept values are x + r, not x
    for (uint64_t i = 0; i < n; ++i) {          // every element is either itself or +0
      const bool same = std::memcmp(&out[i * w], &data[i * w], w) == 0;
      uint32_t bits = 0;
      std::memcpy(&bits, &out[i * w], w);
      check(same || bits == 0);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const Dtype dt = static_cast<Dtype>(1 + (data[0] & 0x7f) % 3);
  std::span<const uint8_t> rest(data + 5, size - 5);
  if ((data[0] & 0x80) != 0) {
    round_trip(dt, data + 1, rest.first(std::min<std::size_t>(rest.size(), kMaxCount * 4)));
    return 0;
  }
  uint32_t count = 0;
  std::memcpy(&count, data + 1, 4);
  bool ok = false;
  guarded_decode(rest, dt, count % (kMaxCount + 1), &ok);
  return 0;
}
