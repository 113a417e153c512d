// The frame layer: the common header (compress/FORMAT.md), its validation, the optional
// body checksum, and dispatch to each codec's body through the registry.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "compress/byte_io.h"
#include "compress/codec.h"
#include "compress/codec_registry.h"
#include "compress/crc32c.h"
#include "compress/quantize.h"

namespace squeeze::compress {
namespace {

// Field offsets inside the header.
constexpr std::size_t kOffMagic = 0;
constexpr std::size_t kOffVersion = 4;
constexpr std::size_t kOffCodec = 5;
constexpr std::size_t kOffDtype = 6;
constexpr std::size_t kOffFlags = 7;
constexpr std::size_t kOffCount = 8;
constexpr std::size_t kOffOriginal = 16;
constexpr std::size_t kOffBody = 24;
constexpr std::size_t kOffBodyCrc = 32;
constexpr std::size_t kOffHeaderCrc = 36;
static_assert(kOffHeaderCrc + 4 == kFrameHeaderBytes);

constexpr uint8_t kFlagChecksum = 0x01;
constexpr uint8_t kKnownFlags = kFlagChecksum;

std::string at(std::size_t off) { return " at offset " + std::to_string(off); }

Status corrupt(std::string msg) { return {Status::Code::kCorrupt, "frame: " + std::move(msg)}; }

// count * size without overflow; false when it does not fit in 64 bits.
bool mul_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (b != 0 && a > std::numeric_limits<uint64_t>::max() / b) return false;
  *out = a * b;
  return true;
}

void write_header(uint8_t* h, CodecId codec, Dtype dtype, bool checksum, uint64_t count,
                  uint64_t original, uint64_t body, uint32_t body_crc) {
  store_le32(h + kOffMagic, kFrameMagic);
  h[kOffVersion] = kFrameVersion;
  h[kOffCodec] = static_cast<uint8_t>(codec);
  h[kOffDtype] = static_cast<uint8_t>(dtype);
  h[kOffFlags] = checksum ? kFlagChecksum : 0;
  store_le64(h + kOffCount, count);
  store_le64(h + kOffOriginal, original);
  store_le64(h + kOffBody, body);
  store_le32(h + kOffBodyCrc, checksum ? body_crc : 0);
  store_le32(h + kOffHeaderCrc, crc32c(h, kOffHeaderCrc));
}

}  // namespace

std::size_t max_frame_bytes(const EncodeRequest& req) {
  uint64_t original = 0;
  if (dtype_size(req.dtype) == 0 || !mul_u64(req.count, dtype_size(req.dtype), &original) ||
      original > std::numeric_limits<std::size_t>::max() - kFrameHeaderBytes) {
    return std::numeric_limits<std::size_t>::max();  // unencodable; any allocation fails loudly
  }
  return kFrameHeaderBytes + static_cast<std::size_t>(original);
}

Status encode_frame(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* frame_bytes) {
  *frame_bytes = 0;
  if (req.report != nullptr) *req.report = EncodeReport{};
  static const CodecParams kDefaultParams;
  const CodecParams& params = req.params ? *req.params : kDefaultParams;
  const std::size_t esize = dtype_size(req.dtype);
  if (esize == 0) {
    return {Status::Code::kInvalidArgument,
            "frame: unknown dtype " + std::to_string(static_cast<unsigned>(req.dtype))};
  }
  uint64_t original = 0;
  if (!mul_u64(req.count, esize, &original) ||
      original > std::numeric_limits<std::size_t>::max() - kFrameHeaderBytes) {
    return {Status::Code::kInvalidArgument, "frame: count " + std::to_string(req.count) + " of " +
                                                dtype_name(req.dtype) + " overflows"};
  }
  if (req.src == nullptr && original > 0) {
    return {Status::Code::kInvalidArgument,
            "frame: src is null with count " + std::to_string(req.count)};
  }
  const BodyCodec* body = find_body_codec(params.codec);
  if (body == nullptr) {
    return {Status::Code::kInvalidArgument,
            "frame: unknown codec " + std::to_string(static_cast<unsigned>(params.codec))};
  }
  if (dst.size() < kFrameHeaderBytes) {
    return {Status::Code::kNoSpace, "frame: dst holds " + std::to_string(dst.size()) +
                                        " bytes, less than the " +
                                        std::to_string(kFrameHeaderBytes) + "-byte header"};
  }

  CodecId used = CodecId::kStored;
  std::size_t body_bytes = 0;
  if (params.codec != CodecId::kStored && original > 0) {
    // A body that is not smaller than the input is useless: cap it so the codec gives up early.
    const std::size_t cap = std::min<std::size_t>(dst.size() - kFrameHeaderBytes,
                                                  static_cast<std::size_t>(original) - 1);
    std::span<uint8_t> body_dst = dst.subspan(kFrameHeaderBytes, cap);
    EncodeRequest r = req;
    r.params = &params;  // codecs may rely on non-null params
    std::size_t n = 0;
    Status st = body->encode(r, body_dst, &n);
    if (st.ok() && n <= cap) {
      used = params.codec;
      body_bytes = n;
    } else if (st.ok()) {
      return {Status::Code::kInvalidArgument,
              std::string("frame: codec ") + codec_name(params.codec) + " reported " +
                  std::to_string(n) + " body bytes for a " + std::to_string(cap) + "-byte buffer"};
    } else if (st.code() != Status::Code::kNoSpace) {
      return st;
    }
  }
  if (used == CodecId::kStored) {
    const std::size_t need = kFrameHeaderBytes + static_cast<std::size_t>(original);
    if (dst.size() < need) {
      return {Status::Code::kNoSpace, "frame: stored frame needs " + std::to_string(need) +
                                          " bytes, dst holds " + std::to_string(dst.size())};
    }
    std::size_t n = 0;
    Status st = kStoredBody.encode(req, dst.subspan(kFrameHeaderBytes), &n);
    if (!st.ok()) return st;
    body_bytes = n;
  }
  const uint32_t body_crc =
      params.checksum ? crc32c(dst.data() + kFrameHeaderBytes, body_bytes) : 0;
  write_header(dst.data(), used, req.dtype, params.checksum, req.count, original, body_bytes,
               body_crc);
  *frame_bytes = kFrameHeaderBytes + body_bytes;
  return Status::Ok();
}

Status peek_frame(std::span<const uint8_t> frame, FrameInfo* info) {
  if (frame.size() < kFrameHeaderBytes) {
    return {Status::Code::kTruncated, "frame: header needs " + std::to_string(kFrameHeaderBytes) +
                                          " bytes, got " + std::to_string(frame.size())};
  }
  const uint8_t* h = frame.data();
  const uint32_t magic = load_le32(h + kOffMagic);
  if (magic != kFrameMagic) return corrupt("bad magic " + std::to_string(magic) + at(kOffMagic));
  if (h[kOffVersion] != kFrameVersion) {
    return {Status::Code::kUnsupported, "frame: version " + std::to_string(h[kOffVersion]) +
                                            at(kOffVersion) + " (this build reads version " +
                                            std::to_string(kFrameVersion) + ")"};
  }
  const uint32_t want_crc = load_le32(h + kOffHeaderCrc);
  const uint32_t got_crc = crc32c(h, kOffHeaderCrc);
  if (want_crc != got_crc) {
    return corrupt("header checksum " + std::to_string(want_crc) + at(kOffHeaderCrc) +
                   " does not match the header's " + std::to_string(got_crc));
  }
  const auto codec = static_cast<CodecId>(h[kOffCodec]);
  if (find_body_codec(codec) == nullptr) {
    return {Status::Code::kUnsupported,
            "frame: unknown codec " + std::to_string(h[kOffCodec]) + at(kOffCodec)};
  }
  const auto dtype = static_cast<Dtype>(h[kOffDtype]);
  if (dtype_size(dtype) == 0) {
    return {Status::Code::kUnsupported,
            "frame: unknown dtype " + std::to_string(h[kOffDtype]) + at(kOffDtype)};
  }
  const uint8_t flags = h[kOffFlags];
  if ((flags & ~kKnownFlags) != 0)
    return corrupt("unknown flags " + std::to_string(flags) + at(kOffFlags));
  const bool has_checksum = (flags & kFlagChecksum) != 0;
  if (!has_checksum && load_le32(h + kOffBodyCrc) != 0) {
    return corrupt("body checksum" + at(kOffBodyCrc) + " is set but the checksum flag is clear");
  }
  const uint64_t count = load_le64(h + kOffCount);
  const uint64_t original = load_le64(h + kOffOriginal);
  uint64_t expect = 0;
  if (!mul_u64(count, dtype_size(dtype), &expect) || expect != original) {
    return corrupt("original_bytes " + std::to_string(original) + at(kOffOriginal) +
                   " is not count " + std::to_string(count) + " x " +
                   std::to_string(dtype_size(dtype)) + "-byte " + dtype_name(dtype));
  }
  if (original > std::numeric_limits<std::size_t>::max()) {
    return corrupt("original_bytes " + std::to_string(original) + at(kOffOriginal) +
                   " exceeds the address space");
  }
  const uint64_t body = load_le64(h + kOffBody);
  if (body > std::numeric_limits<std::size_t>::max() - kFrameHeaderBytes) {
    return corrupt("body_bytes " + std::to_string(body) + at(kOffBody) +
                   " exceeds the address space");
  }
  info->codec = codec;
  info->dtype = dtype;
  info->count = count;
  info->original_bytes = original;
  info->body_bytes = body;
  info->frame_bytes = kFrameHeaderBytes + body;
  info->has_checksum = has_checksum;
  return Status::Ok();
}

Status gpu_decodable(std::span<const uint8_t> frame) {
  FrameInfo info{};
  Status st = peek_frame(frame, &info);
  if (!st.ok()) return st;
  // The quantize body's flags byte is its second (compress/FORMAT.md, quantize.h).
  constexpr std::size_t kQuantizeFlagsAt = kFrameHeaderBytes + 1;
  if (info.codec == CodecId::kQuantize && frame.size() > kQuantizeFlagsAt &&
      (frame[kQuantizeFlagsAt] & kQuantizeFlagRice) != 0) {
    return {Status::Code::kUnsupported,
            "frame: quantize body flag 0x02 (Rice-coded codes) at offset " +
                std::to_string(kQuantizeFlagsAt) +
                ": only the CPU decoder reads it (the collective network's frames); the CUDA "
                "decoder does not"};
  }
  return Status::Ok();
}

Status decode_frame(std::span<const uint8_t> frame, std::span<uint8_t> dst, std::size_t* written) {
  *written = 0;
  FrameInfo info{};
  Status st = peek_frame(frame, &info);
  if (!st.ok()) return st;
  const std::size_t remaining = frame.size() - kFrameHeaderBytes;
  if (info.body_bytes > remaining) {
    return {Status::Code::kTruncated, "frame: body_bytes " + std::to_string(info.body_bytes) +
                                          at(kOffBody) + " exceeds remaining " +
                                          std::to_string(remaining)};
  }
  if (info.body_bytes < remaining) {
    return corrupt(std::to_string(remaining - info.body_bytes) +
                   " trailing bytes after the body (body_bytes " + std::to_string(info.body_bytes) +
                   at(kOffBody) + ")");
  }
  if (dst.size() < info.original_bytes) {
    return {Status::Code::kInvalidArgument, "frame: dst holds " + std::to_string(dst.size()) +
                                                " bytes, the frame decodes to " +
                                                std::to_string(info.original_bytes)};
  }
  std::span<const uint8_t> body = frame.subspan(kFrameHeaderBytes);
  if (info.has_checksum) {
    const uint32_t want = load_le32(frame.data() + kOffBodyCrc);
    const uint32_t got = crc32c(body);
    if (want != got) {
      return corrupt("body checksum " + std::to_string(want) + at(kOffBodyCrc) +
                     " does not match the body's " + std::to_string(got));
    }
  }
  const BodyCodec* codec = find_body_codec(info.codec);
  st = codec->decode(body, info.dtype, info.count,
                     dst.first(static_cast<std::size_t>(info.original_bytes)));
  if (!st.ok()) return st;
  *written = static_cast<std::size_t>(info.original_bytes);
  return Status::Ok();
}

}  // namespace squeeze::compress
