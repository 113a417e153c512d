// Feeds arbitrary bytes, as a peer would send them, into the TCP receive path: headers with
// any magic, kind, tag and sizes, truncated streams. It must end in an error or in complete
// messages, never write outside the posted buffers, never hang.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "transport/tcp/tcp_comm.h"

using namespace squeeze::transport;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1u << 20)) return 0;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0) return 0;
  std::size_t off = 0;
  while (off < size) {  // AF_UNIX buffers hold far more than 1 MiB? not always: write what fits
    ssize_t w = write(sv[0], data + off, size - off);
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  close(sv[0]);  // the peer "dies" after its bytes
  tcp::TcpRecvComm comm(sock::Fd(sv[1]), "fuzz-peer");
  constexpr std::size_t kCap = 4096, kGuard = 64;
  std::vector<uint8_t> a(kCap + kGuard, 0xcc), b(kCap + kGuard, 0xcc);
  for (int round = 0; round < 64; ++round) {
    RecvItem items[2] = {{0, a.data(), kCap}, {1, b.data(), kCap}};
    int slot = -1;
    if (!comm.post({items, 2}, &slot).ok() || slot < 0) break;
    bool done = false;
    Received got[2];
    Status s;
    for (int spin = 0; spin < 1000 && !done && s.ok(); ++spin) s = comm.test(slot, &done, got);
    if (!s.ok() || !done) break;
    comm.release(slot);
  }
  for (std::size_t i = kCap; i < kCap + kGuard; ++i)
    if (a[i] != 0xcc || b[i] != 0xcc) __builtin_trap();  // wrote past a posted buffer
  return 0;
}
