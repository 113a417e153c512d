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

// Whether a whole hello is one for the listener that handed out `nonce`. The version is not
// checked: the message header that follows carries it too.
inline bool hello_is_for(const uint8_t* in, uint64_t nonce) {
  return compress::load_le32(in) == kHelloMagic && compress::load_le64(in + 8) == nonce;
}

}  // namespace squeeze::transport::tcp
