// What the TCP transport puts on the wire: a 32-byte header before every message, and the
// 16-byte hello a connecting socket sends first. All little-endian.
//
// message header: u32 magic "SQZM" | u8 kind | u8 version | u16 0 | i32 tag | u32 0 |
//                 u64 payload_bytes | u64 original_bytes
// hello:          u32 magic "SQZH" | u32 version | u64 nonce (from the listener's handle)
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "transport/transport.h"

namespace squeeze::transport::tcp {

constexpr uint32_t kMsgMagic = 0x4d5a5153;    // "SQZM"
constexpr uint32_t kHelloMagic = 0x485a5153;  // "SQZH"
constexpr uint8_t kWireVersion = 1;
constexpr std::size_t kWireHeaderBytes = 32;
constexpr std::size_t kHelloBytes = 16;

inline void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void put_u64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t get_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline void encode_header(const MessageHeader& h, uint8_t* out) {
  std::memset(out, 0, kWireHeaderBytes);
  put_u32(out, kMsgMagic);
  out[4] = static_cast<uint8_t>(h.kind);
  out[5] = kWireVersion;
  put_u32(out + 8, static_cast<uint32_t>(h.tag));
  put_u64(out + 16, h.payload_bytes);
  put_u64(out + 24, h.original_bytes);
}

// Returns "" when valid, else what is wrong.
inline std::string decode_header(const uint8_t* in, MessageHeader* h) {
  if (get_u32(in) != kMsgMagic) return "bad message magic 0x" + std::to_string(get_u32(in));
  if (in[5] != kWireVersion) return "unsupported wire version " + std::to_string(in[5]);
  if (in[4] > static_cast<uint8_t>(PayloadKind::kFrame)) return "unknown payload kind " + std::to_string(in[4]);
  h->kind = static_cast<PayloadKind>(in[4]);
  h->tag = static_cast<int32_t>(get_u32(in + 8));
  h->payload_bytes = get_u64(in + 16);
  h->original_bytes = get_u64(in + 24);
  if (h->kind == PayloadKind::kRaw && h->original_bytes != h->payload_bytes)
    return "raw message with payload " + std::to_string(h->payload_bytes) + " != original " +
           std::to_string(h->original_bytes);
  return "";
}

}  // namespace squeeze::transport::tcp
