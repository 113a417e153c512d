// A fixed pool of threads that run codec jobs off NCCL's progress thread. Jobs are plain
// function pointers with an argument; completion is signalled by the job itself (an atomic
// in the request), so the progress thread only ever polls.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "plugin/params/params.h"

namespace squeeze::plugin {

class WorkerPool {
 public:
  using Fn = void (*)(void* arg) noexcept;
  explicit WorkerPool(int threads);  // 0: jobs run only through try_run_one()
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void submit(Fn fn, void* arg);
  // Runs one queued job on the calling thread, if any is waiting. NCCL's progress thread calls
  // this instead of spinning while the request it tests waits for codec work: on a machine
  // with few cores the spinning would otherwise take the CPU the workers need.
  bool try_run_one();
  int threads() const { return static_cast<int>(threads_.size()); }

  // Process-wide pool, sized by set_shared_threads() (the plugin's init), created on first use
  // (not at init: threads that exist when an application forks can leave allocator locks
  // held in the child).
  static WorkerPool& shared();
  static void set_shared_threads(int threads);
  // SQUEEZE_THREADS (0..kMaxThreads), else half the cores this process may run on, 1 to 8,
  // and none on a single core. With none, every job runs on a thread that waits for it
  // (try_run_one from test(), or a comm's close). Where the host's ranks (LOCAL_WORLD_SIZE
  // and its fallbacks) cannot all have cores of their own (ranks x cores > the host's), the
  // cores are this rank's share.
  static int configured_threads(const params::Settings& settings);
  static constexpr int kMaxThreads = 64;
  // Cores in this process's CPU affinity mask (a job pinned by taskset, numactl or a
  // launcher gets what it was given, not the machine's count).
  static int usable_cores();

 private:
  struct Job {
    Fn fn;
    void* arg;
  };
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace squeeze::plugin
