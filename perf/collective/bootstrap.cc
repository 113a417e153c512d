#include "perf/collective/bootstrap.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace squeeze::perf {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kHelloMagic = 0x53515042;  // "SQPB"

struct Hello {
  uint32_t magic;
  int32_t rank;
  int32_t nranks;
};

std::string errno_text() { return std::strerror(errno); }

struct AddrList {
  addrinfo* head = nullptr;
  ~AddrList() {
    if (head != nullptr) freeaddrinfo(head);
  }
};

void resolve(const HostPort& hp, bool passive, AddrList* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const std::string port = std::to_string(hp.port);
  int rc = getaddrinfo(hp.host.c_str(), port.c_str(), &hints, &out->head);
  if (rc != 0 || out->head == nullptr)
    throw std::runtime_error("bootstrap: cannot resolve '" + hp.host + "': " + gai_strerror(rc));
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Waits until fd is readable (or writable) or the deadline passes.
void wait_fd(int fd, short events, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) throw std::runtime_error("bootstrap: timed out waiting for " + what);
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (rc > 0) return;
    if (rc < 0 && errno != EINTR)
      throw std::runtime_error("bootstrap: poll failed: " + errno_text());
  }
}

}  // namespace

HostPort parse_host_port(const std::string& text) {
  HostPort hp;
  std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size())
    throw std::invalid_argument("rendezvous '" + text + "': expected HOST:PORT");
  hp.host = text.substr(0, colon);
  if (hp.host.size() >= 2 && hp.host.front() == '[' && hp.host.back() == ']')
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  char* end = nullptr;
  long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 0 || port > 65535)
    throw std::invalid_argument("rendezvous '" + text + "': port must be a number in [0, 65535]");
  hp.port = static_cast<int>(port);
  return hp;
}

Fd listen_on(const HostPort& hp, int* bound_port) {
  AddrList ai;
  resolve(hp, true, &ai);
  std::string last = "no address";
  for (addrinfo* a = ai.head; a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) continue;
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), 128) != 0) {
      last = errno_text();
      continue;
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
    if (bound_port != nullptr)
      *bound_port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                                   : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    return fd;
  }
  throw std::runtime_error("bootstrap: cannot listen on " + hp.host + ":" +
                           std::to_string(hp.port) + ": " + last);
}

Bootstrap::Bootstrap(int rank, int nranks, const HostPort& where, Fd listener, double timeout_s)
    : rank_(rank), nranks_(nranks), timeout_s_(timeout_s) {
  if (nranks < 1 || rank < 0 || rank >= nranks)
    throw std::invalid_argument("bootstrap: rank " + std::to_string(rank) + " outside [0, " +
                                std::to_string(nranks) + ")");
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  if (rank == 0) {
    if (!listener.valid()) listener = listen_on(where, nullptr);
    peers_.resize(static_cast<std::size_t>(nranks));
    for (int got = 1; got < nranks;) {
      wait_fd(listener.get(), POLLIN, deadline, std::to_string(nranks - got) + " rank(s) to join");
      Fd c(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c.valid()) continue;
      set_nodelay(c.get());
      Hello h{};
      recv_blob(c.get(), &h, sizeof(h), -1);
      if (h.magic != kHelloMagic)
        throw std::runtime_error("bootstrap: a connection that is not squeeze-perf arrived");
      if (h.nranks != nranks)
        throw std::runtime_error("bootstrap: rank " + std::to_string(h.rank) + " says --nranks " +
                                 std::to_string(h.nranks) + ", rank 0 says " +
                                 std::to_string(nranks));
      if (h.rank <= 0 || h.rank >= nranks || peers_[static_cast<std::size_t>(h.rank)].valid())
        throw std::runtime_error("bootstrap: rank " + std::to_string(h.rank) +
                                 " is out of range or joined twice");
      peers_[static_cast<std::size_t>(h.rank)] = std::move(c);
      ++got;
    }
  } else {
    AddrList ai;
    resolve(where, false, &ai);
    std::string last = "no address";
    while (!root_.valid()) {
      for (addrinfo* a = ai.head; a != nullptr && !root_.valid(); a = a->ai_next) {
        Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (fd.valid() && ::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0)
          root_ = std::move(fd);
        else
          last = errno_text();
      }
      if (root_.valid()) break;
      if (Clock::now() > deadline)
        throw std::runtime_error("bootstrap: cannot reach rank 0 at " + where.host + ":" +
                                 std::to_string(where.port) + ": " + last);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    set_nodelay(root_.get());
    Hello h{kHelloMagic, rank, nranks};
    send_blob(root_.get(), &h, sizeof(h), 0);
  }
}

void Bootstrap::send_blob(int fd, const void* p, std::size_t n, int peer) {
  const auto* b = static_cast<const uint8_t*>(p);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s_));
  while (n > 0) {
    ssize_t r = ::send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r > 0) {
      b += r;
      n -= static_cast<std::size_t>(r);
    } else if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
      wait_fd(fd, POLLOUT, deadline, "rank " + std::to_string(peer) + " to take bootstrap data");
    } else {
      throw std::runtime_error("bootstrap: sending to rank " + std::to_string(peer) +
                               " failed: " + errno_text());
    }
  }
}

void Bootstrap::recv_blob(int fd, void* p, std::size_t n, int peer) {
  auto* b = static_cast<uint8_t*>(p);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s_));
  const std::string who = peer < 0 ? "a joining rank" : "rank " + std::to_string(peer);
  while (n > 0) {
    ssize_t r = ::recv(fd, b, n, MSG_DONTWAIT);
    if (r > 0) {
      b += r;
      n -= static_cast<std::size_t>(r);
    } else if (r == 0) {
      throw std::runtime_error("bootstrap: " + who +
                               " closed its connection (it exited or failed)");
    } else if (errno == EAGAIN || errno == EINTR) {
      wait_fd(fd, POLLIN, deadline, who);
    } else {
      throw std::runtime_error("bootstrap: receiving from " + who + " failed: " + errno_text());
    }
  }
}

void Bootstrap::allgather(const void* mine, void* all, std::size_t bytes) {
  auto* out = static_cast<uint8_t*>(all);
  const uint64_t len = bytes;
  if (rank_ == 0) {
    std::memcpy(out, mine, bytes);
    for (int r = 1; r < nranks_; ++r) {
      uint64_t theirs = 0;
      int fd = peers_[static_cast<std::size_t>(r)].get();
      recv_blob(fd, &theirs, sizeof(theirs), r);
      if (theirs != len)
        throw std::runtime_error("bootstrap: rank " + std::to_string(r) + " gathered " +
                                 std::to_string(theirs) + " bytes where rank 0 gathered " +
                                 std::to_string(len) + " (ranks run different options?)");
      recv_blob(fd, out + static_cast<std::size_t>(r) * bytes, bytes, r);
    }
    for (int r = 1; r < nranks_; ++r)
      send_blob(peers_[static_cast<std::size_t>(r)].get(), out,
                bytes * static_cast<std::size_t>(nranks_), r);
  } else {
    send_blob(root_.get(), &len, sizeof(len), 0);
    send_blob(root_.get(), mine, bytes, 0);
    recv_blob(root_.get(), out, bytes * static_cast<std::size_t>(nranks_), 0);
  }
}

void Bootstrap::barrier() {
  uint8_t one = 1;
  std::vector<uint8_t> all(static_cast<std::size_t>(nranks_));
  allgather(&one, all.data(), 1);
}

}  // namespace squeeze::perf
