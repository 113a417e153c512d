// Feeds arbitrary bytes, as a stray, stale or hostile host would send them to a TCP listener,
// to the hello check the listener makes before it hands a connection to NCCL
// (transport/tcp/wire.h), in chunks of any size as the socket delivers them. It must accept
// only a hello that carries the magic, the listener's nonce and the wire version; call one
// with the magic and nonce but another version the peer's version mismatch, and anything
// else a stray; read nothing past the 16 bytes; and accept every hello the connecting side
// encodes for its nonce.
//
// Input: byte 0 picks the chunk size (1 + byte % 16); the rest is the stream.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "compress/byte_io.h"
#include "transport/tcp/wire.h"

using namespace squeeze::transport::tcp;

namespace {
constexpr uint64_t kNonce = 0x0123456789abcdefull;  // the seeds carry it
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::size_t chunk = 1 + data[0] % kHelloBytes;
  ++data;
  --size;
  // As the listener does: gather the hello piece by piece into a buffer of exactly its size.
  auto hello = std::make_unique<uint8_t[]>(kHelloBytes);
  std::size_t got = 0;
  while (got < kHelloBytes && got < size) {
    const std::size_t n = std::min({chunk, kHelloBytes - got, size - got});
    std::memcpy(hello.get() + got, data + got, n);
    got += n;
  }
  if (got < kHelloBytes) return 0;  // the peer stopped early: the listener waits or drops it
  const Hello verdict = check_hello(hello.get(), kNonce);
  const bool genuine = squeeze::compress::load_le32(hello.get()) == kHelloMagic &&
                       squeeze::compress::load_le64(hello.get() + 8) == kNonce;
  const bool same_version =
      squeeze::compress::load_le32(hello.get() + 4) == squeeze::transport::kMsgWireVersion;
  if (verdict == Hello::kOurs && !(genuine && same_version)) __builtin_trap();  // accepted a stray
  if (verdict == Hello::kOtherVersion && !(genuine && !same_version)) __builtin_trap();
  if (verdict == Hello::kStray && genuine) __builtin_trap();  // dropped its own peer silently
  // Whatever nonce the bytes carry, the hello the connecting side sends for it is accepted by
  // that listener and by no other.
  const uint64_t nonce = squeeze::compress::load_le64(hello.get() + 8);
  uint8_t mine[kHelloBytes];
  encode_hello(nonce, StreamHello{}, mine);
  if (check_hello(mine, nonce) != Hello::kOurs || check_hello(mine, nonce ^ 1) != Hello::kStray)
    __builtin_trap();
  return 0;
}
