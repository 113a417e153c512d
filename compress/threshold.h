// Dynamic Communication Thresholding (the "threshold" codec): keep the elements whose
// magnitude is at least tau, drop the rest. tau is the (1 - keep)-quantile of |x| estimated
// from a bounded deterministic sample and reused for `refresh_every` messages of a stream
// through ThresholdState. Optional error feedback adds the stream's dropped residual back
// before thresholding. Body layout: compress/FORMAT.md, "threshold body".
//
// Special values: NaN and +-Inf are always kept and never enter the tau estimate. Zeros are
// never kept (tau >= the smallest positive float), so -0.0 decodes as +0.0. Values narrowed
// to float16 saturate at +-65504 instead of becoming Inf (they are the largest elements of
// the message; an Inf would poison the receiver). With error feedback the residual of a
// non-finite element is 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compress/codec.h"
#include "compress/codec_body.h"
#include "compress/controllers.h"

namespace squeeze::compress {

// Per-stream state: the reused tau, its refresh controller, and the error-feedback
// residual. One object per stream (a collective call site); not thread-safe.
// The encoder changes it only when it returns Ok, so a message that falls back to a stored
// frame (the receiver gets x exactly) leaves the residual as it was. When a message keeps
// too many elements to be worth sending, or more than twice or less than half the target
// (a stale tau; see ThresholdRefresh), the next message searches again.
class ThresholdState {
 public:
  ThresholdState() = default;

  bool has_tau() const { return has_tau_; }
  float tau() const { return tau_; }                         // meaningful when has_tau()
  uint64_t messages() const { return refresh_.messages(); }  // messages encoded (Ok)
  uint64_t searches() const { return refresh_.searches(); }  // tau searches among them
  // The residual carried to the next message (empty until error feedback first runs).
  std::span<const float> residual() const { return residual_; }
  // Forgets tau, the counters and the residual.
  void reset() { *this = ThresholdState(); }

 private:
  friend Status threshold_encode_body(const EncodeRequest& req, std::span<uint8_t> dst,
                                      std::size_t* written, bool allow_expansion);
  ThresholdRefresh refresh_;
  bool has_tau_ = false;
  float tau_ = 0.0f;
  double keep_ = 0.0;  // parameters tau was searched with
  uint32_t sample_size_ = 0;
  Dtype dtype_ = Dtype::kBytes;  // shape of the stream's messages
  uint64_t count_ = 0;
  std::vector<float> residual_;
  std::vector<float> next_;  // scratch: x + residual for the message being encoded
};

// The dtype kept values are stored in: the requested one when it is narrower than the
// input, else the input's own (so bf16/fp16 inputs stay exact).
Dtype threshold_value_dtype(Dtype input, Dtype requested);

// The tau the encoder would search for x (+ residual, if non-null; it has count elements).
// Returns +Inf when the sample holds no finite value, and never less than the smallest
// positive float. count == 0 gives +Inf.
float threshold_estimate_tau(Dtype dtype, const void* src, const float* residual, uint64_t count,
                             double keep, uint32_t sample_size);

// Encodes a threshold body. Returns kNoSpace (state untouched except that tau will be
// searched again) when the body does not fit dst or, unless allow_expansion, when it would
// not be smaller than the input. kThresholdBody.encode is this with allow_expansion = false.
Status threshold_encode_body(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* written,
                             bool allow_expansion);
Status threshold_decode_body(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                             std::span<uint8_t> dst);
std::size_t threshold_body_bound(const EncodeRequest& req);

// What a body's header says (validated for this dtype and count, positions not walked).
struct ThresholdBodyInfo {
  uint8_t position_mode = 0;  // kThresholdBitmap or kThresholdDeltaVarint
  Dtype value_dtype = Dtype::kFloat32;
  float tau = 0.0f;
  uint64_t kept = 0;
};
Status threshold_peek_body(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                           ThresholdBodyInfo* info);

inline constexpr uint8_t kThresholdBitmap = 0;
inline constexpr uint8_t kThresholdDeltaVarint = 1;
inline constexpr std::size_t kThresholdHeaderBytes = 16;

}  // namespace squeeze::compress
