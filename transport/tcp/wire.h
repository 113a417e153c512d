// What the TCP transport puts on the wire: the 16-byte hello a connecting socket sends first,
// then messages, each behind the 32-byte header of transport/message_wire.h. Little-endian.
//
// hello: u32 magic "SQZH" | u32 version (of the message header) | u64 nonce (from the
//        listener's handle)
#pragma once

#include <cstdint>

#include "compress/byte_io.h"
#include "transport/message_wire.h"

namespace squeeze::transport::tcp {

constexpr uint32_t kHelloMagic = 0x485a5153;  // "SQZH"
constexpr std::size_t kHelloBytes = 16;

inline void encode_hello(uint64_t nonce, uint8_t* out) {
  compress::store_le32(out, kHelloMagic);
  compress::store_le32(out + 4, kMsgWireVersion);
  compress::store_le64(out + 8, nonce);
}

// What a whole hello is to the listener that handed out `nonce`.
enum class Hello {
  kOurs,          // magic, nonce and version all match
  kStray,         // another magic or another nonce: not for this listener
  kOtherVersion,  // for this listener, but from a peer speaking another wire version
};
inline Hello check_hello(const uint8_t* in, uint64_t nonce) {
  if (compress::load_le32(in) != kHelloMagic || compress::load_le64(in + 8) != nonce)
    return Hello::kStray;
  if (compress::load_le32(in + 4) != kMsgWireVersion) return Hello::kOtherVersion;
  return Hello::kOurs;
}
inline uint32_t hello_version(const uint8_t* in) { return compress::load_le32(in + 4); }

}  // namespace squeeze::transport::tcp
