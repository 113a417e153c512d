// How many sockets and helper threads carry one TCP connection, and how a large payload is cut
// into parts across them. Pure functions: both ends compute the same cut from the stream count
// the connecting side announced in its hello and the payload size in the message header.
#pragma once

#include <cstdint>

#include "transport/tcp/tcp_options.h"

namespace squeeze::transport::tcp {

// NCCL's Socket transport caps a connection at 64 sockets and 16 helper threads.
constexpr int kMaxDataStreams = 64;
constexpr int kMaxStreamThreads = 16;
// A payload of at least this many bytes goes on the data sockets; a smaller one goes on the
// control socket right behind its header, as on a single-socket connection. NCCL's proxy posts
// its data in chunks of 128 KiB (all-to-all, NCCL_P2P_NET_CHUNKSIZE) to 512 KiB (ring slices),
// so anything higher would leave NCCL's traffic on one socket: measured on an H100 under NCCL
// 2.28.9, a 256 KiB threshold left all-to-all at one socket's busbw while NCCL's Socket
// transport with the same 4x2 sockets doubled it. Payloads of one part still spread: each goes
// on the socket after the last payload's.
constexpr uint64_t kStripeMinBytes = 64 * 1024;
// No part is smaller than this (NCCL_SOCKET_MIN_TASKSIZE's default in NCCL's Socket transport).
constexpr uint64_t kMinPartBytes = 64 * 1024;

struct StreamLayout {
  int nthreads = 0;  // helper threads; 0: none, the connection is its control socket alone
  int nsocks = 0;    // data sockets in all (nthreads * per thread); 0 or >= 2
  const char* why = "";
};

// `speed_mbps`: the interface's link speed (<= 0 unknown); `cores`: usable cores. Explicit
// values win; kAuto picks one data socket per 12.5 Gbit/s of link speed, at most one helper
// thread per two cores, and none below 25 Gbit/s or 4 cores, where one socket keeps up and
// helper threads would take the cores the proxy and the codecs need.
StreamLayout choose_streams(const TcpOptions& o, int speed_mbps, int cores);

// The cores this process may run on.
int usable_cores();

// Part `i` of a striped payload of `bytes` over `nsocks` data sockets: its offset and length.
// Parts are max(kMinPartBytes, ceil(bytes / nsocks)) long (the last one shorter), so a payload
// has at most nsocks parts.
struct Part {
  uint64_t offset = 0, bytes = 0;
};
int part_count(uint64_t bytes, int nsocks);
Part part_at(uint64_t bytes, int nsocks, int i);

}  // namespace squeeze::transport::tcp
