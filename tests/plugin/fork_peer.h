// Runs a peer in a forked child process, the way a second rank on another host would.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace squeeze::testing {

class ForkPeer {
 public:
  // body returns the child's exit code (0 = success). The child never returns to gtest.
  explicit ForkPeer(const std::function<int()>& body) {
    pid_ = fork();
    if (pid_ == 0) {
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
  // Exit status of the child (128+signal when killed).
  int wait() {
    int st = 0;
    waitpid(pid_, &st, 0);
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
