// Helpers for the UCX transport tests: environment overrides (for UCX's own variables, which
// UCX reads), connected comm pairs on loopback, bounded waits, and a peer process that is
// SIGKILLed mid-transfer.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transport/transport.h"
#include "transport/ucx/ucx_library.h"
#include "transport/ucx/ucx_transport.h"

namespace squeeze::transport::ucx::testutil {

using Clock = std::chrono::steady_clock;

// Sets an environment variable for the scope's lifetime, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

inline std::unique_ptr<Transport> open_on_loopback(std::string* why) {
  sock::SocketOptions socket;
  socket.ifname = "lo";
  return open_transport(UcxOptions{}, socket, why);
}

struct Pair {
  std::unique_ptr<Listener> l;
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
};

inline bool connect_pair(Transport& t, Pair* p) {
  alignas(8) unsigned char handle[kHandleBytes] = {};
  if (!t.listen(0, handle, &p->l).ok()) return false;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!p->s || !p->r) {
    if (!p->s && !t.connect(0, handle, &p->s).ok()) return false;
    if (!p->r && !p->l->accept(&p->r).ok()) return false;
    if (Clock::now() > deadline) return false;
  }
  return true;
}

// Drives both ends (one thread, so both workers need progress) until the receive in rslot
// and every send in sslots are done (with wait_sends; else until the receive is, the sends
// only being progressed), or the receive fails, or `seconds` pass (an Internal error). Done
// slots are released and taken out of sslots; out gets the received messages.
inline Status exchange(Pair& p, std::vector<int>& sslots, int rslot, Received* out = nullptr,
                       bool wait_sends = true, double seconds = 20) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  Received scratch[kMaxRecvs];
  bool rdone = rslot < 0;
  while (!rdone || (wait_sends && !sslots.empty())) {
    for (std::size_t i = 0; i < sslots.size();) {
      bool done = false;
      if (Status st = p.s->test(sslots[i], &done); !st.ok()) return st;
      if (done) {
        p.s->release(sslots[i]);
        sslots.erase(sslots.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    if (!rdone) {
      std::span<Received> o =
          out != nullptr ? std::span<Received>(out, kMaxRecvs) : std::span<Received>(scratch);
      if (Status st = p.r->test(rslot, &rdone, o); !st.ok()) return st;
      if (rdone) p.r->release(rslot);
    }
    if (Clock::now() > deadline) return Status::Internal("still pending after the test's deadline");
  }
  return Status::Ok();
}

inline Status exchange(Pair& p, std::vector<int>&& sslots, int rslot, Received* out = nullptr) {
  return exchange(p, sslots, rslot, out);
}

inline int count_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

// A forked peer connects to us (peer_sends) or accepts our connection, starts a 64 MiB
// transfer, and is SIGKILLed. Returns how long our test() took to report an error after the
// kill, or -1 if it never did (within 20 s) or if the set-up failed.
inline double killed_peer_seconds(Transport& t, bool peer_sends) {
  const std::size_t z = 64u << 20;
  std::vector<uint8_t> buf(z, 7);
  int to_parent[2];
  if (pipe(to_parent) != 0) return -1;
  alignas(8) unsigned char handle[kHandleBytes] = {};
  std::unique_ptr<Listener> l;
  if (peer_sends && !t.listen(0, handle, &l).ok()) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    std::unique_ptr<SendComm> s;  // both live until the parent kills us
    std::unique_ptr<RecvComm> r;
    if (peer_sends) {
      while (!s)
        if (!t.connect(0, handle, &s).ok()) _exit(10);
      int slot = -1;
      if (!s->post({{1, PayloadKind::kRaw, z, z}, buf.data(), nullptr}, &slot).ok()) _exit(11);
      bool done = false;
      for (int i = 0; i < 50; ++i) (void)s->test(slot, &done);
    } else {
      if (!t.listen(0, handle, &l).ok()) _exit(12);
      if (write(to_parent[1], handle, sizeof(handle)) != sizeof(handle)) _exit(13);
      while (!r)
        if (!l->accept(&r).ok()) _exit(14);
    }
    char c = 1;
    if (write(to_parent[1], &c, 1) != 1) _exit(15);
    for (;;) pause();  // until the parent kills us
  }
  double result = -1;
  std::unique_ptr<SendComm> s;
  std::unique_ptr<RecvComm> r;
  int slot = -1;
  bool ok = true;
  if (peer_sends) {
    while (ok && !r) ok = l->accept(&r).ok();
    RecvItem ri{1, buf.data(), z, nullptr};
    ok = ok && r->post({&ri, 1}, &slot).ok();
  } else {
    ok = read(to_parent[0], handle, sizeof(handle)) == sizeof(handle);
    while (ok && !s) ok = t.connect(0, handle, &s).ok();
  }
  char c = 0;
  ok = ok && read(to_parent[0], &c, 1) == 1;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  auto t0 = Clock::now();
  Status st;
  if (ok && !peer_sends) st = s->post({{1, PayloadKind::kRaw, z, z}, buf.data(), nullptr}, &slot);
  bool done = false;
  Received got[1];
  while (ok && st.ok() && !done && Clock::now() - t0 < std::chrono::seconds(20))
    st = peer_sends ? r->test(slot, &done, got) : s->test(slot, &done);
  if (ok && !st.ok()) result = std::chrono::duration<double>(Clock::now() - t0).count();
  close(to_parent[0]);
  close(to_parent[1]);
  return result;
}

}  // namespace squeeze::transport::ucx::testutil
