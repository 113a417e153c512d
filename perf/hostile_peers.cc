// squeeze-hostile-peers: the experiments of issue 27, against the real TcpTransport on
// loopback. The hostile peers run in a child process, so that the listener's process counts
// only its own descriptors and its own open-file limit.
//
//   squeeze-hostile-peers fds N SECONDS     N silent connections; the listener's open
//                                           descriptors after 1 s and after SECONDS of accept()
//   squeeze-hostile-peers emfile LIMIT N    open-file limit LIMIT in the listener, N silent
//                                           connections, then a genuine one: accepted, or the
//                                           error accept() returned
//   squeeze-hostile-peers nonce N [GAP_US]  N wrong-nonce hellos, then a genuine connection, all
//                                           queued before the listener calls accept(), GAP_US
//                                           apart: the calls and time until it returns the genuine
//   squeeze-hostile-peers stall CASE SECS   a genuine connection whose peer stops (CASE: hello:
//                                           never says hello; header: 10 header bytes; payload:
//                                           a header and 1000 of 1,114,112 payload bytes;
//                                           trickle: the same, then one byte every
//                                           HOSTILE_TRICKLE_MS, default 1000); how the listener
//                                           or the receive ends, within SECS
//
// Optional environment for builds that have the deadlines (issue 27): HOSTILE_HANDSHAKE_MS,
// HOSTILE_STALL_MS set the listener's handshake and stall deadlines (default: Squeeze's own).
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compress/byte_io.h"
#include "transport/socket/interfaces.h"
#include "transport/socket/socket.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/tcp/wire.h"

using namespace squeeze::transport;
using Clock = std::chrono::steady_clock;

namespace {

double now_s() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n - 1;  // the directory stream itself
}

sock::SockAddr handle_addr(const uint8_t* h) {
  sock::SockAddr a;
  a.len = squeeze::compress::load_le32(h + 36);
  std::memcpy(&a.storage, h + 8, a.len);
  return a;
}
uint64_t handle_nonce(const uint8_t* h) { return squeeze::compress::load_le64(h + 40); }

int dial(const sock::SockAddr& a) {
  int fd = ::socket(a.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&a.storage), a.len) != 0) {
    std::perror("hostile peer: connect");
    std::exit(3);
  }
  return fd;
}
void send_all(int fd, const void* p, std::size_t n) {
  if (::send(fd, p, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) std::perror("hostile peer: send");
}

struct Listening {
  std::unique_ptr<tcp::TcpTransport> t;
  std::unique_ptr<Listener> l;
  alignas(8) uint8_t handle[kHandleBytes] = {};
};

Listening listen_on_loopback() {
  sock::SocketOptions o;
#if __has_include("transport/socket/pending_set.h")
  if (const char* v = std::getenv("HOSTILE_HANDSHAKE_MS")) o.handshake_timeout_ms = std::atoi(v);
  if (const char* v = std::getenv("HOSTILE_STALL_MS")) o.stall_timeout_ms = std::atoi(v);
#endif
  Listening L;
  L.t = std::make_unique<tcp::TcpTransport>(sock::find_interfaces("lo", AF_INET), o);
  Status s = L.t->listen(0, L.handle, &L.l);
  if (!s.ok()) {
    std::fprintf(stderr, "listen: %s\n", s.message().c_str());
    std::exit(2);
  }
  return L;
}

// Forks the hostile peers; they run `peers` then hold their sockets until killed.
pid_t spawn(const std::function<void()>& peers) {
  pid_t pid = fork();
  if (pid == 0) {
    peers();
    for (;;) pause();
  }
  return pid;
}
void reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// A genuine connection through TcpTransport::connect; writes the time it completed to `pipe`.
void genuine_connect(Listening& L, int pipe_fd) {
  tcp::TcpTransport t(sock::find_interfaces("lo", AF_INET));
  std::unique_ptr<SendComm> s;
  while (!s) {
    Status st = t.connect(0, L.handle, &s);
    if (!st.ok()) {
      std::fprintf(stderr, "genuine connect: %s\n", st.message().c_str());
      std::exit(4);
    }
  }
  const double at = now_s();
  if (write(pipe_fd, &at, sizeof at) != sizeof at) std::exit(5);
  std::this_thread::sleep_for(std::chrono::hours(1));
}

int run_fds(int n, double seconds) {
  Listening L = listen_on_loopback();
  const int base = open_fds();
  pid_t pid = spawn([&] {
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) fds.push_back(dial(handle_addr(L.handle)));
  });
  const double t0 = now_s();
  bool printed = false;
  std::unique_ptr<RecvComm> r;
  while (now_s() - t0 < seconds) {
    Status s = L.l->accept(&r);
    if (!s.ok()) std::printf("accept: %s\n", s.message().c_str());
    if (!printed && now_s() - t0 >= 1) {
      std::printf(
          "fds: %d silent connections; listener process holds %d descriptors after 1 s (%d "
          "before)\n",
          n, open_fds(), base);
      printed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::printf("fds: after %.0f s of accept(): %d descriptors (%d before)\n", seconds, open_fds(),
              base);
  reap(pid);
  return 0;
}

int run_emfile(int limit, int n) {
  Listening L = listen_on_loopback();
  int p[2];
  if (pipe(p) != 0) return 2;
  pid_t pid = spawn([&] {
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) fds.push_back(dial(handle_addr(L.handle)));
    genuine_connect(L, p[1]);
  });
  rlimit rl{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = static_cast<rlim_t>(limit);
  setrlimit(RLIMIT_NOFILE, &rl);
  const double t0 = now_s();
  std::unique_ptr<RecvComm> r;
  int rc = 1;
  while (now_s() - t0 < 20) {
    Status s = L.l->accept(&r);
    if (!s.ok()) {
      std::printf("emfile: limit %d, %d silent: accept() failed after %.3f s: %s\n", limit, n,
                  now_s() - t0, s.message().c_str());
      break;
    }
    if (r) {
      std::printf("emfile: limit %d, %d silent: genuine connection accepted after %.3f s\n", limit,
                  n, now_s() - t0);
      rc = 0;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (rc && now_s() - t0 >= 20)
    std::printf("emfile: limit %d, %d silent: nothing accepted in 20 s\n", limit, n);
  reap(pid);
  return rc;
}

// The listener starts calling accept() once the genuine peer has connected (it was busy, as a
// rank is between NCCL calls); gap_us: pause between accept() calls, as a progress loop
// with other work to do makes.
int run_nonce(int n, int gap_us) {
  Listening L = listen_on_loopback();
  int p[2];
  if (pipe(p) != 0) return 2;
  pid_t pid = spawn([&] {
    std::vector<int> fds;
    uint8_t hello[tcp::kHelloBytes];
    tcp::encode_hello(handle_nonce(L.handle) ^ 0x5a5a, tcp::StreamHello{}, hello);
    for (int i = 0; i < n; ++i) {
      fds.push_back(dial(handle_addr(L.handle)));
      send_all(fds.back(), hello, sizeof hello);
    }
    genuine_connect(L, p[1]);
  });
  std::unique_ptr<RecvComm> r;
  int calls = 0;
  double connected = 0;
  if (read(p[0], &connected, sizeof connected) != sizeof connected) return 2;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the hellos are all in
  const double t0 = now_s();
  while (!r && now_s() - t0 < 60) {
    Status s = L.l->accept(&r);
    ++calls;
    if (!s.ok()) {
      std::printf("nonce: accept failed: %s\n", s.message().c_str());
      reap(pid);
      return 1;
    }
    if (!r && gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
  }
  const double got = now_s();
  if (!r) {
    std::printf("nonce: genuine connection not accepted in 60 s\n");
    reap(pid);
    return 1;
  }
  std::printf(
      "nonce: %d wrong-nonce hellos queued; genuine accepted after %d accept() calls, %.3f s after "
      "the first (%d us between calls)\n",
      n, calls, got - t0, gap_us);
  reap(pid);
  return 0;
}

int run_stall(const std::string& what, double seconds) {
  Listening L = listen_on_loopback();
  constexpr uint64_t kPayload = 1114112;
  pid_t pid = spawn([&] {
    int fd = dial(handle_addr(L.handle));
    if (what == "hello") return;
    uint8_t hello[tcp::kHelloBytes];
    tcp::encode_hello(handle_nonce(L.handle), tcp::StreamHello{}, hello);
    send_all(fd, hello, sizeof hello);
    uint8_t hdr[kWireHeaderBytes];
    encode_header(MessageHeader{1, PayloadKind::kRaw, kPayload, kPayload}, hdr);
    if (what == "header") {
      send_all(fd, hdr, 10);
      return;
    }
    send_all(fd, hdr, sizeof hdr);
    std::vector<uint8_t> some(1000, 0x42);
    send_all(fd, some.data(), some.size());
    if (what != "trickle") return;
    const char* gap = std::getenv("HOSTILE_TRICKLE_MS");
    const int gap_ms = gap != nullptr ? std::atoi(gap) : 1000;
    for (;;) {  // until reaped
      std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
      send_all(fd, some.data(), 1);
    }
  });
  const int base = open_fds();
  const double t0 = now_s();
  std::unique_ptr<RecvComm> r;
  std::vector<uint8_t> dst(kPayload);
  int slot = -1;
  bool held = false;  // the listener has taken the silent connection
  while (now_s() - t0 < seconds) {
    if (!r) {
      Status s = L.l->accept(&r);
      if (!s.ok()) {
        std::printf("stall %s: accept failed after %.2f s: %s\n", what.c_str(), now_s() - t0,
                    s.message().c_str());
        break;
      }
      held = held || open_fds() > base;
      if (what == "hello" && held && open_fds() <= base) {
        std::printf("stall hello: the silent connection was closed after %.2f s\n", now_s() - t0);
        break;
      }
      if (r) {
        RecvItem it{1, dst.data(), dst.size()};
        if (!r->post({&it, 1}, &slot).ok() || slot < 0) return 2;
      }
    } else {
      bool done = false;
      Received out[1];
      Status s = r->test(slot, &done, out);
      if (!s.ok()) {
        std::printf("stall %s: receive failed after %.2f s: %s\n", what.c_str(), now_s() - t0,
                    s.message().c_str());
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (now_s() - t0 >= seconds)
    std::printf("stall %s: no error and nothing closed after %.0f s (accepted: %s)\n", what.c_str(),
                seconds, r ? "yes" : "no");
  reap(pid);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "fds" && argc == 4) return run_fds(std::atoi(argv[2]), std::atof(argv[3]));
  if (cmd == "emfile" && argc == 4) return run_emfile(std::atoi(argv[2]), std::atoi(argv[3]));
  if (cmd == "nonce" && (argc == 3 || argc == 4))
    return run_nonce(std::atoi(argv[2]), argc == 4 ? std::atoi(argv[3]) : 0);
  if (cmd == "stall" && argc == 4) return run_stall(argv[2], std::atof(argv[3]));
  std::fprintf(stderr,
               "usage: squeeze-hostile-peers fds N SECONDS | emfile LIMIT N | nonce N [GAP_US] | "
               "stall hello|header|payload|trickle "
               "SECONDS\n");
  return 2;
}
