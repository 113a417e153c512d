// Internal contract between the frame layer (compress/frame.cc) and each codec's body.
// A body is everything after the common frame header; each codec documents its own body
// layout in compress/FORMAT.md, including any parameters it needs to decode (eb, tau,
// value width...), so the decoder needs nothing but the body, dtype and element count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "compress/codec.h"

namespace squeeze::compress {

// Upper bound on the body size the codec may write for this request.
using BodyBoundFn = std::size_t (*)(const EncodeRequest& req);
// Writes the body into dst. Returns kNoSpace if it does not fit (the frame layer then
// falls back to a stored frame); must never write outside dst.
using BodyEncodeFn = Status (*)(const EncodeRequest& req, std::span<uint8_t> dst,
                                std::size_t* written);
// Decodes a body into dst (dst.size() == count * dtype_size(dtype)). Validates every field
// before writing; never writes outside dst; rejects trailing garbage.
using BodyDecodeFn = Status (*)(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                                std::span<uint8_t> dst);

struct BodyCodec {
  BodyBoundFn bound;
  BodyEncodeFn encode;
  BodyDecodeFn decode;
};

// One per codec, each defined in the codec's own file (quantize.cc, threshold.cc, ...).
extern const BodyCodec kStoredBody;
extern const BodyCodec kQuantizeBody;
extern const BodyCodec kThresholdBody;
extern const BodyCodec kLosslessBody;
extern const BodyCodec kCastBody;

}  // namespace squeeze::compress
