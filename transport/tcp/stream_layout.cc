#include "transport/tcp/stream_layout.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace squeeze::transport::tcp {

namespace {
uint64_t part_bytes(uint64_t bytes, int nsocks) {
  const auto n = static_cast<uint64_t>(std::max(1, nsocks));
  return std::max(kMinPartBytes, (bytes + n - 1) / n);
}
}  // namespace

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

StreamLayout choose_streams(const TcpOptions& o, int speed_mbps, int cores) {
  StreamLayout l;
  int per = o.nsocks_per_thread, threads = o.nthreads;
  const bool auto_any = per == TcpOptions::kAuto || threads == TcpOptions::kAuto;
  if (auto_any) {
    int want = 1;  // data sockets the link calls for
    if (speed_mbps >= 25000 && cores >= 4)
      want = std::min(kMaxDataStreams, (speed_mbps + 12499) / 12500);
    const int auto_threads =
        want > 1 ? std::clamp(cores / 2, 1, std::min(want, kMaxStreamThreads)) : 0;
    if (threads == TcpOptions::kAuto) threads = auto_threads;
    if (per == TcpOptions::kAuto)
      per = threads > 0 ? std::max(1, (want + threads - 1) / threads) : 1;
    l.why = want > 1 ? "from the link speed and the cores"
                     : "one socket keeps up with this link or these cores";
  } else {
    l.why = "as set";
  }
  threads = std::clamp(threads, 0, kMaxStreamThreads);
  per = std::max(per, 0);
  if (threads > 0 && per * threads > kMaxDataStreams) per = kMaxDataStreams / threads;
  const int total = threads * per;
  if (total < 2) return StreamLayout{0, 0, l.why};
  l.nthreads = threads;
  l.nsocks = total;
  return l;
}

int part_count(uint64_t bytes, int nsocks) {
  if (bytes == 0) return 0;
  const uint64_t p = part_bytes(bytes, nsocks);
  return static_cast<int>((bytes + p - 1) / p);
}

Part part_at(uint64_t bytes, int nsocks, int i) {
  const uint64_t p = part_bytes(bytes, nsocks);
  Part part;
  part.offset = p * static_cast<uint64_t>(i);
  part.bytes = part.offset >= bytes ? 0 : std::min(p, bytes - part.offset);
  return part;
}

}  // namespace squeeze::transport::tcp
