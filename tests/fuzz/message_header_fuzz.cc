// Feeds arbitrary bytes to the parser of the 32-byte header in front of every message of the
// TCP and UCX transports (transport/message_wire.h), as a peer would send it. An accepted
// header must have a known kind, the wire version, a raw payload equal to its original size,
// and re-encode to the very bytes it came from (the reserved bytes aside, which the parser
// ignores); it must read nothing past the 32 bytes. And any header the sending side encodes
// must parse back to itself.
#include <cstdint>
#include <cstring>
#include <memory>

#include "compress/byte_io.h"
#include "transport/message_wire.h"

using namespace squeeze::transport;

namespace {

// Bytes 6..7 and 12..15 are reserved: written as 0, not checked.
bool same_but_reserved(const uint8_t* a, const uint8_t* b) {
  return std::memcmp(a, b, 6) == 0 && std::memcmp(a + 8, b + 8, 4) == 0 &&
         std::memcmp(a + 16, b + 16, 16) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kWireHeaderBytes) return 0;
  auto in =
      std::make_unique<uint8_t[]>(kWireHeaderBytes);  // exactly the header: ASan sees overreads
  std::memcpy(in.get(), data, kWireHeaderBytes);
  MessageHeader h;
  if (decode_header(in.get(), &h).empty()) {
    if (h.kind != PayloadKind::kRaw && h.kind != PayloadKind::kFrame) __builtin_trap();
    if (in[5] != kMsgWireVersion) __builtin_trap();
    if (h.kind == PayloadKind::kRaw && h.payload_bytes != h.original_bytes) __builtin_trap();
    uint8_t back[kWireHeaderBytes];
    encode_header(h, back);
    if (!same_but_reserved(back, in.get())) __builtin_trap();  // accepted what it misread
  }
  // The sending side: a header made of the same bytes' fields parses back to itself.
  MessageHeader sent;
  sent.kind = (data[4] & 1) ? PayloadKind::kFrame : PayloadKind::kRaw;
  sent.tag = static_cast<int32_t>(squeeze::compress::load_le32(data + 8));
  sent.payload_bytes = squeeze::compress::load_le64(data + 16);
  sent.original_bytes =
      sent.kind == PayloadKind::kRaw ? sent.payload_bytes : squeeze::compress::load_le64(data + 24);
  uint8_t wire[kWireHeaderBytes];
  encode_header(sent, wire);
  MessageHeader got;
  if (!decode_header(wire, &got).empty() || got.kind != sent.kind || got.tag != sent.tag ||
      got.payload_bytes != sent.payload_bytes || got.original_bytes != sent.original_bytes)
    __builtin_trap();
  return 0;
}
