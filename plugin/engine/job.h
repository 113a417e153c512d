// The codec work of one request: run inline or on a worker thread, polled by the progress
// thread. The worker publishes its result with a release store of `state`; the progress
// thread reads it with acquire before it reads what the job wrote.
#pragma once

#include <atomic>
#include <string>

namespace squeeze::plugin {

enum class JobState : int { kIdle = 0, kRunning, kDone, kFailed };

struct Job {
  std::atomic<JobState> state{JobState::kIdle};
  std::string error;  // when kFailed

  JobState load() const { return state.load(std::memory_order_acquire); }
  void start() { state.store(JobState::kRunning, std::memory_order_relaxed); }
  void reset() { state.store(JobState::kIdle, std::memory_order_relaxed); }
  void finish(JobState s, std::string why = {}) {
    error = std::move(why);
    state.store(s, std::memory_order_release);
  }
};

}  // namespace squeeze::plugin
