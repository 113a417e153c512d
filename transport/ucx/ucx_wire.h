// What the UCX transport puts on the wire besides UCX's own traffic. All little-endian.
//
// The 128-byte NCCL handle (listener -> connecting side):
//   0: u32 magic "SQZU" | 4: u32 version | 8: sockaddr of the listener's set-up socket (28 max)
//   36: u32 sockaddr length | 40: u64 nonce | 120: the connecting side's in-progress state
//
// A UCX worker address is a few hundred bytes (more with many devices), too big for the
// handle, so it travels over a TCP socket to the listener first, as UCX-based NCCL plugins
// do. Each side sends one hello on that socket, then nothing more; the socket stays open so
// that either side sees EOF when the other dies.
//   0: u32 magic ("SQUC" from the connecting side, "SQUA" from the accepting side)
//   4: u32 version | 8: u64 nonce from the handle | 16: u32 address bytes
//   20: u32 the receive comm's id (0 from the connecting side)
//   24: the accepting side's worker address (the connecting side sends none: only the
//       sender needs an endpoint; the receiver's tag receives belong to its worker)
//
// Data: every message is two tagged UCX messages: the 32-byte MessageHeader
// (transport/message_wire.h) with tag header_tag(comm, seq), then, unless empty, the
// payload with tag payload_tag(comm, seq). comm is the receive comm's id, unique on its
// worker, which all comms of a process share; seq counts the comm's messages from 0.
//   tag bits 63..32: comm id | bit 31: payload | bits 30..0: seq mod 2^31
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace squeeze::transport::ucx {

constexpr uint32_t kHandleMagic = 0x555a5153;   // "SQZU"
constexpr uint32_t kConnectMagic = 0x43555153;  // "SQUC"
constexpr uint32_t kAcceptMagic = 0x41555153;   // "SQUA"
constexpr uint32_t kWireVersion = 1;
constexpr std::size_t kHandleAddrOffset = 8;
constexpr std::size_t kHandleAddrMax = 28;  // sizeof(sockaddr_in6)
constexpr std::size_t kHandleAddrLenOffset = kHandleAddrOffset + kHandleAddrMax;
constexpr std::size_t kHandleNonceOffset = 40;
constexpr std::size_t kHandleStageOffset = kHandleBytes - sizeof(void*);
static_assert(kHandleNonceOffset + 8 <= kHandleStageOffset, "handle layout overlaps");

constexpr std::size_t kHelloFixedBytes = 24;
constexpr std::size_t kMaxWorkerAddressBytes = 64 * 1024;

// Receives match tags exactly.
inline uint64_t header_tag(uint32_t comm, uint32_t seq) {
  return uint64_t{comm} << 32 | (seq & 0x7fffffffu);
}
inline uint64_t payload_tag(uint32_t comm, uint32_t seq) {
  return header_tag(comm, seq) | 0x80000000u;
}

std::vector<uint8_t> encode_hello(uint32_t magic, uint64_t nonce, uint32_t comm_id,
                                  const std::vector<uint8_t>& address);

// Reads one hello incrementally from a byte stream and checks it: magic, nonce, version, and
// with_address a comm id != 0 and an address length in (0, kMaxWorkerAddressBytes], else
// both 0. want() says how many more bytes to feed.
class HelloReader {
 public:
  HelloReader(uint32_t magic, uint64_t nonce, bool with_address)
      : magic_(magic), nonce_(nonce), with_address_(with_address) {}
  std::size_t want() const { return need_ - buf_.size(); }
  // Takes n <= want() bytes. Returns "" or what is wrong with the hello.
  std::string feed(const uint8_t* data, std::size_t n);
  bool done() const { return fixed_ok_ && buf_.size() == need_; }
  // Whether the magic and nonce matched: from here on, a bad hello is the listener's own
  // peer misbehaving (another version, say), not a stray.
  bool genuine() const { return genuine_; }
  // The worker address and comm id, once done().
  std::vector<uint8_t> address() const;
  uint32_t comm_id() const;

 private:
  uint32_t magic_;
  uint64_t nonce_;
  bool with_address_;
  std::vector<uint8_t> buf_;
  std::size_t need_ = kHelloFixedBytes;
  bool fixed_ok_ = false;
  bool genuine_ = false;
};

}  // namespace squeeze::transport::ucx
