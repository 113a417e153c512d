// What the plugin (or a tool or test) decides about the TCP transport's connections: how many
// sockets and helper threads carry each one, and an optional pacing cap. The plugin fills it
// from its parameter table (SQUEEZE_NSOCKS_PERTHREAD / NCCL_NSOCKS_PERTHREAD,
// SQUEEZE_SOCKET_NTHREADS / NCCL_SOCKET_NTHREADS, SQUEEZE_MAX_RATE). Nothing here reads the
// environment.
#pragma once

namespace squeeze::transport::tcp {

struct TcpOptions {
  static constexpr int kAuto = -1;
  // Data sockets per helper thread, and helper threads per connection; kAuto: chosen from the
  // link speed and the cores (stream_layout.h). With fewer than two data sockets in all, a
  // connection is one socket driven by the thread that tests it, as before.
  int nsocks_per_thread = kAuto;
  int nthreads = kAuto;
  // Pacing cap of each connection in bits per second (SO_MAX_PACING_RATE, split across its
  // data sockets); 0: none.
  double max_rate_bps = 0;
};

}  // namespace squeeze::transport::tcp
