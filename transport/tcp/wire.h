// What the TCP transport puts on the wire: the 32-byte hello each connecting socket sends
// first, then messages, each behind the 32-byte header of transport/message_wire.h.
// Little-endian.
//
// hello:  0: u32 magic "SQZH" | 4: u32 version (of the message header) | 8: u64 nonce (from the
//         listener's handle) | 16: u64 connection id (the connecting side's, the same on all
//         of a connection's sockets) | 24: u16 stream index (0: the control socket) |
//         26: u16 stream count (control + data sockets; 1: a single-socket connection) |
//         28: u16 helper threads the sender drives its data sockets with | 30: u16 zero
#pragma once

#include <cstdint>

#include "compress/byte_io.h"
#include "transport/message_wire.h"

namespace squeeze::transport::tcp {

constexpr uint32_t kHelloMagic = 0x485a5153;  // "SQZH"
constexpr std::size_t kHelloBytes = 32;

struct StreamHello {
  uint64_t conn_id = 0;
  uint16_t index = 0, count = 1, nthreads = 0;
};

inline void encode_hello(uint64_t nonce, const StreamHello& s, uint8_t* out) {
  compress::store_le32(out, kHelloMagic);
  compress::store_le32(out + 4, kMsgWireVersion);
  compress::store_le64(out + 8, nonce);
  compress::store_le64(out + 16, s.conn_id);
  compress::store_le16(out + 24, s.index);
  compress::store_le16(out + 26, s.count);
  compress::store_le16(out + 28, s.nthreads);
  compress::store_le16(out + 30, 0);
}

inline StreamHello decode_stream_hello(const uint8_t* in) {
  StreamHello s;
  s.conn_id = compress::load_le64(in + 16);
  s.index = compress::load_le16(in + 24);
  s.count = compress::load_le16(in + 26);
  s.nthreads = compress::load_le16(in + 28);
  return s;
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
