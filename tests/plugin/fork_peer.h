// Runs a peer in a forked child process, the way a second rank on another host would.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>

namespace squeeze::testing {

class ForkPeer {
 public:
  // body returns the child's exit code (0 = success). The child never returns to gtest.
  explicit ForkPeer(const std::function<int()>& body) {
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      // Never outlives its parent: a peer left stopped (SIGSTOP) by a parent that crashed
      // would hold ctest's output pipe open until the test's timeout.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(97);
      int code = 99;
      try {
        code = body();
      } catch (...) {
        code = 98;
      }
      _exit(code);
    }
  }
  ~ForkPeer() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  ForkPeer(const ForkPeer&) = delete;
  ForkPeer& operator=(const ForkPeer&) = delete;
  bool started() const { return pid_ > 0; }
  // Exit status of the child (128+signal when killed). A child still running after
  // timeout_s is killed, so a hung peer fails the test instead of hanging it.
  int wait(double timeout_s = 120) {
    int st = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (waitpid(pid_, &st, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &st, 0);
        break;
      }
      usleep(1000);
    }
    reaped_ = true;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

}  // namespace squeeze::testing
