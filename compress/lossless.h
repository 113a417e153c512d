// The lossless codec: bit-exact for any bytes, tuned for floats and for mostly-zero data.
//
// The input is cut into independent 4096-byte blocks (a GPU encodes them in parallel and
// places them after a prefix sum of their sizes). A block is all zero (costs only its size
// entry), raw, or packed: a two-level map of its nonzero 16-byte groups (or, for data
// with scattered zero elements such as ReLU outputs, of its nonzero elements), then the
// nonzero parts split into byte planes (float elements first rotated left by one bit so the sign
// sits in the low byte and the exponent fills the high byte), each plane cut into segments
// of up to 256 bytes that are stored as "all equal", frame-of-reference bit-packed with
// 1..7 bits, or raw. Byte layout: compress/FORMAT.md, "Lossless body".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "compress/codec.h"
#include "compress/codec_body.h"

namespace squeeze::compress {

inline constexpr std::size_t kLosslessHeaderBytes = 4;
inline constexpr unsigned kLosslessBlockShift = 12;  // 4096-byte blocks
inline constexpr std::size_t kLosslessBlockBytes = std::size_t{1} << kLosslessBlockShift;
inline constexpr unsigned kLosslessGroupShift = 4;  // 16-byte groups in the zero map
inline constexpr std::size_t kLosslessGroupBytes = std::size_t{1} << kLosslessGroupShift;
inline constexpr std::size_t kLosslessSegment = 256;  // plane bytes per packing segment
inline constexpr uint8_t kLosslessFlagRotate = 1;     // flags bit 0: elements rotated (width > 1)
// First byte of a packed block: what one bit of its zero map covers.
inline constexpr uint8_t kLosslessMapGroups = 0;    // a 16-byte group
inline constexpr uint8_t kLosslessMapElements = 1;  // one element (width bytes)
// Segment header byte: 0..7 = bit width k (base byte follows), 8 = raw.
inline constexpr uint8_t kLosslessSegmentRaw = 8;

// Upper bound of the body for `bytes` input bytes: header, size table, raw blocks.
std::size_t lossless_body_bound_bytes(std::size_t bytes);
std::size_t lossless_body_bound(const EncodeRequest& req);
// Any dtype (kBytes included). kNoSpace when dst is too small.
Status lossless_encode_body(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* written);
Status lossless_decode_body(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                            std::span<uint8_t> dst);

// One block (len bytes, a multiple of width, at most kLosslessBlockBytes) into out, which
// must hold at least len bytes. Returns the encoded size: 0 for all-zero, len for raw
// (the block copied), else the packed size (< len). Exposed for the CUDA twin's tests.
std::size_t lossless_encode_block(const uint8_t* in, std::size_t len, std::size_t width,
                                  uint8_t* out);

}  // namespace squeeze::compress
