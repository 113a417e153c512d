// The cast body: float32 narrowed to bfloat16 or float16 (round to nearest even), widened
// back on decode. Lossy without a bound: it is the baseline production systems use.
// Layout (compress/FORMAT.md): u8 target dtype, 3 zero bytes, then count halves.
#include <string>

#include "compress/byte_io.h"
#include "compress/codec_body.h"
#include "compress/half_simd.h"

namespace squeeze::compress {
namespace {

constexpr std::size_t kCastHeader = 4;

std::size_t cast_bound(const EncodeRequest& req) { return kCastHeader + 2 * req.count; }

Status cast_encode(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* written) {
  *written = 0;
  const CastParams& p = req.params->cast;
  if (req.dtype != Dtype::kFloat32) {
    return {Status::Code::kInvalidArgument,
            std::string("cast: input must be float32, got ") + dtype_name(req.dtype)};
  }
  if (p.to != Dtype::kBfloat16 && p.to != Dtype::kFloat16) {
    return {Status::Code::kInvalidArgument,
            std::string("cast: target must be bfloat16 or float16, got ") + dtype_name(p.to)};
  }
  const std::size_t n = cast_bound(req);
  if (n > dst.size()) {
    return {Status::Code::kNoSpace, "cast: body needs " + std::to_string(n) + " bytes, dst holds " +
                                        std::to_string(dst.size())};
  }
  dst[0] = static_cast<uint8_t>(p.to);
  dst[1] = dst[2] = dst[3] = 0;
  const auto* src = static_cast<const uint8_t*>(req.src);  // any alignment
  if (p.to == Dtype::kBfloat16) {
    hsimd::narrow_run<Dtype::kBfloat16>(src, static_cast<std::size_t>(req.count),
                                        dst.data() + kCastHeader);
  } else {
    hsimd::narrow_run<Dtype::kFloat16>(src, static_cast<std::size_t>(req.count),
                                       dst.data() + kCastHeader);
  }
  *written = n;
  return Status::Ok();
}

Status cast_decode(std::span<const uint8_t> body, Dtype dtype, uint64_t count,
                   std::span<uint8_t> dst) {
  if (dtype != Dtype::kFloat32) {
    return {Status::Code::kCorrupt,
            std::string("cast: frame dtype must be float32, got ") + dtype_name(dtype)};
  }
  if (body.size() < kCastHeader) {
    return {Status::Code::kTruncated, "cast: body holds " + std::to_string(body.size()) +
                                          " bytes, less than its 4-byte header"};
  }
  const auto to = static_cast<Dtype>(body[0]);
  if (to != Dtype::kBfloat16 && to != Dtype::kFloat16) {
    return {Status::Code::kCorrupt, "cast: target dtype " + std::to_string(body[0]) +
                                        " at body offset 0 is not bfloat16 (2) or float16 (3)"};
  }
  for (std::size_t i = 1; i < kCastHeader; ++i) {
    if (body[i] != 0) {
      return {Status::Code::kCorrupt,
              "cast: reserved byte at body offset " + std::to_string(i) + " is not zero"};
    }
  }
  if (count > (body.size() - kCastHeader) / 2 || body.size() - kCastHeader != 2 * count) {
    return {Status::Code::kCorrupt, "cast: body holds " +
                                        std::to_string(body.size() - kCastHeader) +
                                        " value bytes at body offset 4, count " +
                                        std::to_string(count) + " needs 2 bytes per element"};
  }
  if (dst.size() != 4 * count) {
    return {Status::Code::kInvalidArgument, "cast: dst holds " + std::to_string(dst.size()) +
                                                " bytes, count " + std::to_string(count) +
                                                " needs more"};
  }
  if (to == Dtype::kBfloat16) {
    hsimd::widen_run<Dtype::kBfloat16>(body.data() + kCastHeader, static_cast<std::size_t>(count),
                                       dst.data());
  } else {
    hsimd::widen_run<Dtype::kFloat16>(body.data() + kCastHeader, static_cast<std::size_t>(count),
                                      dst.data());
  }
  return Status::Ok();
}

}  // namespace

const BodyCodec kCastBody = {cast_bound, cast_encode, cast_decode};

}  // namespace squeeze::compress
