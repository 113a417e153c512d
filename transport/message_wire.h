// The 32-byte message header that travels in front of every message of the TCP transport
// (on its socket) and of the UCX transport (as a tagged UCX message of its own). Little-endian:
//
//   0: u32 magic "SQZM" | 4: u8 kind | 5: u8 version | 6: u16 0 | 8: i32 tag | 12: u32 0 |
//   16: u64 payload_bytes | 24: u64 original_bytes
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "compress/byte_io.h"
#include "transport/transport.h"

namespace squeeze::transport {

constexpr uint32_t kMsgMagic = 0x4d5a5153;  // "SQZM"
constexpr uint8_t kMsgWireVersion = 1;
constexpr std::size_t kWireHeaderBytes = 32;

inline void encode_header(const MessageHeader& h, uint8_t* out) {
  std::memset(out, 0, kWireHeaderBytes);
  compress::store_le32(out, kMsgMagic);
  out[4] = static_cast<uint8_t>(h.kind);
  out[5] = kMsgWireVersion;
  compress::store_le32(out + 8, static_cast<uint32_t>(h.tag));
  compress::store_le64(out + 16, h.payload_bytes);
  compress::store_le64(out + 24, h.original_bytes);
}

// Returns "" when valid, else what is wrong.
inline std::string decode_header(const uint8_t* in, MessageHeader* h) {
  const uint32_t magic = compress::load_le32(in);
  if (magic != kMsgMagic) return "bad message magic 0x" + std::to_string(magic);
  if (in[5] != kMsgWireVersion) return "unsupported wire version " + std::to_string(in[5]);
  if (in[4] > static_cast<uint8_t>(PayloadKind::kFrame))
    return "unknown payload kind " + std::to_string(in[4]);
  h->kind = static_cast<PayloadKind>(in[4]);
  h->tag = static_cast<int32_t>(compress::load_le32(in + 8));
  h->payload_bytes = compress::load_le64(in + 16);
  h->original_bytes = compress::load_le64(in + 24);
  if (h->kind == PayloadKind::kRaw && h->original_bytes != h->payload_bytes)
    return "raw message with payload " + std::to_string(h->payload_bytes) + " != original " +
           std::to_string(h->original_bytes);
  return "";
}

}  // namespace squeeze::transport
