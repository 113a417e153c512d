// Sets an environment variable for the life of a scope and puts the old value back. The
// emulator uses it to give a second plugin instance (--baseline) its own SQUEEZE_POLICY and
// SQUEEZE_STATS while that instance reads them. Not thread-safe, like setenv: only the rank's
// main thread calls it, and the plugins read these variables only inside init and finalize.
#pragma once

#include <cstdlib>
#include <string>

namespace squeeze::perf {

class ScopedEnv {
 public:
  // An empty value leaves the variable as it is.
  ScopedEnv(const char* name, const std::string& value) : name_(name), active_(!value.empty()) {
    if (!active_) return;
    const char* old = std::getenv(name);
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (!active_) return;
    if (had_old_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool active_ = false, had_old_ = false;
  std::string old_;
};

}  // namespace squeeze::perf
