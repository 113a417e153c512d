// What the plugin (or a tool or test) decides about the TCP transport's connections: how many
// sockets and helper threads carry each one, and an optional pacing cap. The plugin fills it
// from its parameter table (SQUEEZE_NSOCKS_PERTHREAD / NCCL_NSOCKS_PERTHREAD,
// SQUEEZE_SOCKET_NTHREADS / NCCL_SOCKET_NTHREADS, SQUEEZE_MAX_RATE). Nothing here reads the
// environment.
#pragma once

#include <string>

namespace squeeze::transport::tcp {

struct TcpOptions {
  static constexpr int kAuto = -1;
  // Data sockets per helper thread, and helper threads per connection; kAuto: chosen from the
  // link speed and the cores (stream_layout.h). With fewer than two data sockets in all, a
  // connection is one socket driven by the thread that tests it, as before.
  int nsocks_per_thread = kAuto;
  int nthreads = kAuto;
  // Where each of the two came from, for the line each connection logs: the variable and its
  // value as the user set it ("SQUEEZE_SOCKET_NTHREADS=2", "NCCL_NSOCKS_PERTHREAD=4"); empty
  // when unset (kAuto) or when nobody said (a tool or test that sets the numbers itself).
  std::string nsocks_per_thread_from;
  std::string nthreads_from;
  // Pacing cap of each connection in bits per second (SO_MAX_PACING_RATE, split across its
  // data sockets); 0: none.
  double max_rate_bps = 0;
};

}  // namespace squeeze::transport::tcp
