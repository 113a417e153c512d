// Feeds arbitrary bytes, as a peer would send them on the UCX set-up socket, into the hello
// reader in chunks of any size: it must reject them with a reason or accept a hello whose
// fields are within bounds and that re-encodes to the very bytes it took, and never take more
// bytes than the hello announced.
//
// Input: byte 0 picks the side (bit 0: the accepting side's hello, with an address) and the
// chunk size (bits 1..7, plus 1); the rest is the stream.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "transport/ucx/ucx_wire.h"

using namespace squeeze::transport::ucx;

namespace {
constexpr uint64_t kNonce = 0x0123456789abcdefull;  // the seeds carry it
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > kHelloFixedBytes + kMaxWorkerAddressBytes + 64) return 0;
  const bool with_address = (data[0] & 1) != 0;
  const std::size_t chunk = 1 + (data[0] >> 1);
  const uint32_t magic = with_address ? kAcceptMagic : kConnectMagic;
  ++data;
  --size;
  HelloReader r(magic, kNonce, with_address);
  std::size_t off = 0;
  while (off < size && !r.done()) {
    const std::size_t want = r.want();
    const std::size_t n = std::min({chunk, want, size - off});
    if (n == 0 || n > want) __builtin_trap();
    if (!r.feed(data + off, n).empty()) return 0;
    off += n;
  }
  if (!r.done()) return 0;
  const std::vector<uint8_t> addr = r.address();
  if (with_address ? (addr.empty() || addr.size() > kMaxWorkerAddressBytes || r.comm_id() == 0)
                   : (!addr.empty() || r.comm_id() != 0))
    __builtin_trap();
  const std::vector<uint8_t> again = encode_hello(magic, kNonce, r.comm_id(), addr);
  if (again.size() != off || std::memcmp(again.data(), data, off) != 0) __builtin_trap();
  return 0;
}
