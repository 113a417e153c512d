// The stored body: the input bytes as they are. Every frame can fall back to it.
#include <cstring>
#include <string>

#include "compress/codec_body.h"

namespace squeeze::compress {
namespace {

std::size_t stored_bound(const EncodeRequest& req) { return req.count * dtype_size(req.dtype); }

Status stored_encode(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* written) {
  *written = 0;
  const std::size_t n = stored_bound(req);
  if (n > dst.size()) {
    return {Status::Code::kNoSpace, "stored: body needs " + std::to_string(n) +
                                        " bytes, dst holds " + std::to_string(dst.size())};
  }
  if (n > 0) std::memcpy(dst.data(), req.src, n);
  *written = n;
  return Status::Ok();
}

Status stored_decode(std::span<const uint8_t> body, Dtype /*dtype*/, uint64_t /*count*/,
                     std::span<uint8_t> dst) {
  if (body.size() != dst.size()) {
    return {Status::Code::kCorrupt, "stored: body holds " + std::to_string(body.size()) +
                                        " bytes, the frame's original_bytes is " +
                                        std::to_string(dst.size())};
  }
  if (!body.empty()) std::memcpy(dst.data(), body.data(), body.size());
  return Status::Ok();
}

}  // namespace

const BodyCodec kStoredBody = {stored_bound, stored_encode, stored_decode};

}  // namespace squeeze::compress
