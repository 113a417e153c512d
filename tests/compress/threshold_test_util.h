// Helpers shared by the threshold codec tests: encode to a body, decode into a buffer with
// guard bytes on both sides.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "compress/threshold.h"

namespace squeeze::compress::testutil {

struct Encoded {
  Status status;
  std::vector<uint8_t> body;
};

inline Encoded threshold_encode(Dtype dt, const void* src, uint64_t n, const ThresholdParams& p,
                                ThresholdState* st = nullptr, bool allow_expansion = true) {
  CodecParams cp;
  cp.codec = CodecId::kThreshold;
  cp.threshold = p;
  EncodeRequest req;
  req.dtype = dt;
  req.src = src;
  req.count = n;
  req.params = &cp;
  req.threshold_state = st;
  Encoded e;
  e.body.resize(threshold_body_bound(req));
  std::size_t written = 0;
  e.status = threshold_encode_body(req, e.body, &written, allow_expansion);
  e.body.resize(written);
  return e;
}

inline constexpr std::size_t kGuard = 64;
inline constexpr uint8_t kGuardByte = 0xA5;

// Decodes into the middle of a guarded buffer pre-filled with kGuardByte. Checks the guards,
// and on failure that nothing at all was written. Returns the decoded bytes.
inline std::vector<uint8_t> decode_guarded(
    std::span<const uint8_t> body, Dtype dt, uint64_t n, Status* status,
    Status (*decode)(std::span<const uint8_t>, Dtype, uint64_t,
                     std::span<uint8_t>) = threshold_decode_body) {
  const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dt);
  std::vector<uint8_t> buf(bytes + 2 * kGuard, kGuardByte);
  *status = decode(body, dt, n, std::span<uint8_t>(buf.data() + kGuard, bytes));
  for (std::size_t i = 0; i < kGuard; ++i) {
    EXPECT_EQ(buf[i], kGuardByte) << "write before dst at -" << (kGuard - i);
    EXPECT_EQ(buf[kGuard + bytes + i], kGuardByte) << "write past dst at +" << i;
  }
  if (!status->ok()) {
    for (std::size_t i = 0; i < bytes; ++i) {
      if (buf[kGuard + i] != kGuardByte) {
        ADD_FAILURE() << "failed decode wrote dst byte " << i << ": " << status->message();
        break;
      }
    }
  }
  return {buf.begin() + static_cast<std::ptrdiff_t>(kGuard),
          buf.begin() + static_cast<std::ptrdiff_t>(kGuard + bytes)};
}

}  // namespace squeeze::compress::testutil
