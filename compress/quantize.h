// The quantize body (error-bounded quantization), kQuantizeBody in compress/codec_body.h.
// Layout and the bound's arithmetic are specified in compress/FORMAT.md, "quantize body".
//
// Each finite element x becomes code = round((x - offset) / step) with step <= 2*eb, and
// decodes to x' = dtype(float(offset + code*step)). The encoder replays the decoder's exact
// arithmetic and sends any element with |x - x'| > eb (and every NaN/Inf, and every code
// that would not fit in 29 bits) verbatim in an escape list, so the bound holds for every
// element after decoding into the original dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "compress/codec.h"

namespace squeeze::compress {

inline constexpr std::size_t kQuantizeHeaderBytes = 44;
inline constexpr unsigned kQuantizeBlock = 64;     // codes per packed block
inline constexpr unsigned kQuantizeMaxWidth = 30;  // bits per zigzagged code
inline constexpr int32_t kQuantizeMaxCode = (1 << 29) - 1;
inline constexpr uint8_t kQuantizeFlagDedupe = 0x01;
inline constexpr uint8_t kQuantizeFlagRice = 0x02;  // codes Rice-coded (CPU only)
inline constexpr unsigned kRiceEscapeZeros = 32;    // this many 0 bits: the code follows raw
inline constexpr unsigned kRiceRawBits = 30;        // bits of an escaped zigzagged code

// The parsed and validated layout of a quantize body (everything but the code payload's
// contents). Spans point into the body.
struct QuantizeLayout {
  BoundMode mode = BoundMode::kAbs;
  bool dedupe = false;
  bool rice = false;  // widths are Rice parameters (0: all-zero block, else k + 1)
  uint32_t row_length = 0;
  double error_bound = 0;  // as requested: absolute, or relative factor
  double bound_abs = 0;    // message modes: the absolute bound every element meets
  double offset = 0;       // message modes
  float step = 0;          // message modes
  uint32_t n_escapes = 0;
  uint32_t n_unique = 0;  // dedupe: distinct full rows

  uint64_t n_full_rows = 0;   // count / row_length (0 without rows)
  uint64_t tail = 0;          // count % row_length
  uint64_t n_stream = 0;      // elements actually quantized (distinct rows + tail)
  uint64_t n_param_rows = 0;  // rel-row: rows with their own (offset, step)
  uint64_t n_blocks = 0;
  unsigned map_bits = 0;

  std::size_t widths_offset = 0, payload_offset = 0;  // in the body
  std::span<const uint8_t> map, row_params, widths, payload, escape_index, escape_values;
};

// The functions behind kQuantizeBody (compress/codec_body.h), callable directly by tests and
// fuzzers. quantize_body_encode needs float input and req.params; it returns kNoSpace when
// dst is too small (the frame layer then stores the input instead).
std::size_t quantize_body_bound(const EncodeRequest& req);
Status quantize_body_encode(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* written);
Status quantize_body_decode(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                            std::span<uint8_t> dst);

// Validates a quantize body completely (header, map, row parameters, widths, payload size,
// escape order, block padding) without writing anything. Errors name the field and its
// offset in the body.
Status parse_quantize_body(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                           QuantizeLayout* out);
// The same, for the decoder: a Rice-coded payload is not walked here; rice_decode_codes
// validates it while it decodes it (before the decoder writes anything to its destination).
Status parse_quantize_layout(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                             QuantizeLayout* out);
// Decodes (codes != nullptr: q.n_stream of them) or only checks a Rice-coded payload: every
// parameter, no code past 30 zigzagged bits, the stream ending in the payload's last byte
// with zero padding bits. Errors name the block and the body offset.
Status rice_decode_codes(const QuantizeLayout& q, int32_t* codes);
// The same without the BMI2 variant rice_decode_codes picks on CPUs that have it (tests
// compare the two).
Status rice_decode_codes_portable(const QuantizeLayout& q, int32_t* codes);

// The absolute bound the message modes guarantee for these values: error_bound for kAbs,
// error_bound * (max - min over finite elements, in double) for kRel. kRelRow bounds each
// row by error_bound * that row's range instead (see quantize_row_bound).
double quantize_message_bound(const QuantizeParams& p, Dtype dtype, const void* src,
                              uint64_t count);
double quantize_row_bound(const QuantizeParams& p, Dtype dtype, const void* row, uint64_t n);
// max - min over the finite elements (in double; 0 when none), as the encoder computes it for
// kRel, with its vector kernels: what a caller passes as QuantizeParams::reference_range.
double quantize_value_range(Dtype dtype, const void* src, uint64_t count);

}  // namespace squeeze::compress
