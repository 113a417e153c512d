// The emulator's out-of-band channel between ranks (what NCCL's bootstrap does): rank 0
// listens on HOST:PORT, every other rank connects to it, and small blobs (plugin listen
// handles, results, hashes, timings) are gathered through rank 0 and sent back to all.
// Every wait is bounded, so a rank that died becomes a clear error instead of a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "perf/collective/fd.h"

namespace squeeze::perf {

struct HostPort {
  std::string host;
  int port = 0;
};
// "HOST:PORT" or "[V6ADDR]:PORT". Throws std::invalid_argument naming the text on error.
HostPort parse_host_port(const std::string& text);

// A listening TCP socket on host:port (port 0 = ephemeral). Throws on failure.
Fd listen_on(const HostPort& hp, int* bound_port);

class Bootstrap {
 public:
  // Rank 0 adopts `listener` (already bound, see listen_on) or binds `where` itself; other
  // ranks connect to `where`, retrying until timeout_s. Throws std::runtime_error.
  Bootstrap(int rank, int nranks, const HostPort& where, Fd listener, double timeout_s);

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  // all[r*bytes .. (r+1)*bytes) receives rank r's `mine`. Every rank passes the same bytes.
  void allgather(const void* mine, void* all, std::size_t bytes);
  template <typename T>
  std::vector<T> allgather(const T& mine) {
    std::vector<T> all(static_cast<std::size_t>(nranks_));
    allgather(&mine, all.data(), sizeof(T));
    return all;
  }
  void barrier();

 private:
  void send_blob(int fd, const void* p, std::size_t n, int peer);
  void recv_blob(int fd, void* p, std::size_t n, int peer);

  int rank_, nranks_;
  double timeout_s_;
  std::vector<Fd> peers_;  // rank 0: peers_[r] is rank r's connection
  Fd root_;                // other ranks: the connection to rank 0
};

}  // namespace squeeze::perf
