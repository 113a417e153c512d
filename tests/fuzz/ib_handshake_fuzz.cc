// Feeds arbitrary bytes, as a peer would send them over the out-of-band TCP connection or
// place them in an NCCL handle, to the ib transport's set-up parsers: queue-pair info (and
// the listener's magic-and-nonce gate before it), the ready message, the handle. Each must
// return an error or a value that re-encodes to the very same bytes; never read past the
// input, never crash.
#include <cstdint>
#include <cstring>
#include <vector>

#include "transport/ib/ib_handshake.h"

using namespace squeeze::transport;
using namespace squeeze::transport::ib;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Queue-pair info: the parser takes the byte count, so give it exactly what came.
  std::vector<uint8_t> info(data, data + size);
  ConnInfo c;
  if (parse_conn_info(info.data(), info.size(), &c).empty()) {
    if (size != kConnInfoBytes) __builtin_trap();
    uint8_t back[kConnInfoBytes];
    encode_conn_info(c, back);
    if (std::memcmp(back, data, kConnInfoBytes) != 0)
      __builtin_trap();  // accepted bytes it does not understand
    if (c.nqps < 1 || c.nqps > kMaxQpsPerConn) __builtin_trap();
    // The listener's first gate passes info for the nonce it carries, and for no other.
    if (!conn_info_is_for(info.data(), c.nonce) || conn_info_is_for(info.data(), ~c.nonce))
      __builtin_trap();
  }
  // The handle and the ready message are fixed-size buffers.
  uint8_t handle[kHandleBytes] = {};
  std::memcpy(handle, data, size < kHandleBytes ? size : kHandleBytes);
  IbHandle h;
  if (read_handle(handle, &h).empty()) {
    if (h.addr.len == 0 || h.addr.len > sizeof(sockaddr_in6)) __builtin_trap();
    (void)h.addr.str();
  }
  uint8_t ready[kReadyBytes] = {};
  std::memcpy(ready, data, size < kReadyBytes ? size : kReadyBytes);
  uint64_t nonce = 0;
  if (size >= kReadyBytes) std::memcpy(&nonce, data + 8, 8);
  (void)parse_ready(ready, nonce);
  return 0;
}
