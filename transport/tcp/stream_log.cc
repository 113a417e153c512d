#include "transport/tcp/stream_log.h"

namespace squeeze::transport::tcp {

namespace {

std::string shape(int nsocks, int nthreads) {
  if (nsocks < 2) return "one socket, no data sockets or helper threads";
  return std::to_string(nsocks) + " data sockets and a control socket, " +
         std::to_string(nthreads) + " helper thread" + (nthreads == 1 ? "" : "s");
}

// "SQUEEZE_SOCKET_NTHREADS=2", "NCCL_SOCKET_NTHREADS=2 (NCCL's variable)" or "auto".
std::string origin(const std::string& from, int value) {
  if (value == TcpOptions::kAuto) return "auto";
  if (from.empty()) return std::to_string(value) + " as the caller set it";
  if (from.rfind("NCCL_", 0) == 0) return from + " (NCCL's variable)";
  return from;
}

}  // namespace

std::string connect_log_line(const std::string& peer, const StreamLayout& layout,
                             const TcpOptions& o, int speed_mbps, int cores) {
  std::string line =
      "TCP connection to " + peer + ": " + shape(layout.nsocks, layout.nthreads) +
      "; sockets per thread: " + origin(o.nsocks_per_thread_from, o.nsocks_per_thread) +
      ", threads: " + origin(o.nthreads_from, o.nthreads);
  if (o.nsocks_per_thread == TcpOptions::kAuto || o.nthreads == TcpOptions::kAuto) {
    line += " (auto: " + std::string(layout.why) + "; link ";
    line += speed_mbps > 0 ? std::to_string(speed_mbps) + " Mbit/s" : "speed unknown";
    line += ", " + std::to_string(cores) + (cores == 1 ? " core)" : " cores)");
  }
  return line;
}

std::string accept_log_line(const std::string& peer, int nsocks, int nthreads) {
  return "TCP connection from " + peer + ": " + shape(nsocks, nthreads) +
         ", as the connecting end chose (its own log line says from what)";
}

}  // namespace squeeze::transport::tcp
