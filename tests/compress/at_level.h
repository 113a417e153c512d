// Runs the quantize codec at one instruction-set level (compress/quantize_simd.h) for the
// lifetime of an AtLevel, and encodes a quantize body at a given level, so that a test can
// compare levels on the same input, with the parameters the identity tests sweep.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "compress/codec.h"
#include "compress/quantize.h"
#include "compress/quantize_simd.h"

namespace squeeze::compress {

class AtLevel {
 public:
  explicit AtLevel(qsimd::Level l) : prev_(qsimd::set_level(l)) {}
  ~AtLevel() { qsimd::set_level(prev_); }
  AtLevel(const AtLevel&) = delete;
  AtLevel& operator=(const AtLevel&) = delete;

 private:
  qsimd::Level prev_;
};

// The quantize parameters the SIMD identity tests sweep: abs 1e-3 or a relative 1e-2.
inline CodecParams identity_params(BoundMode mode, uint32_t row_length, bool dedupe_rows) {
  CodecParams cp;
  cp.codec = CodecId::kQuantize;
  cp.quantize.mode = mode;
  cp.quantize.error_bound = mode == BoundMode::kAbs ? 1e-3 : 1e-2;
  cp.quantize.row_length = row_length;
  cp.quantize.dedupe_rows = dedupe_rows;
  return cp;
}

// The quantize body of count elements of dt at src (any alignment), encoded at `level`.
inline std::vector<uint8_t> quantize_body_at(qsimd::Level level, const uint8_t* src, Dtype dt,
                                             uint64_t count, const CodecParams& cp) {
  AtLevel at(level);
  EncodeRequest req{dt, src, count, &cp, nullptr};
  std::vector<uint8_t> body(quantize_body_bound(req));
  std::size_t written = 0;
  const Status st = quantize_body_encode(req, body, &written);
  EXPECT_TRUE(st.ok()) << st.message();
  body.resize(written);
  return body;
}

}  // namespace squeeze::compress
