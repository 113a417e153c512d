#include "plugin/engine/worker_pool.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "plugin/log.h"

namespace squeeze::plugin {

static_assert(params::spec(params::Id::kThreads).hi == WorkerPool::kMaxThreads);

WorkerPool::WorkerPool(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::submit(Fn fn, void* arg) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back({fn, arg});
  }
  cv_.notify_one();
}

bool WorkerPool::try_run_one() {
  Job job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (jobs_.empty()) return false;
    job = jobs_.front();
    jobs_.pop_front();
  }
  job.fn(job.arg);
  return true;
}

void WorkerPool::run() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = jobs_.front();
      jobs_.pop_front();
    }
    job.fn(job.arg);
  }
}

int WorkerPool::usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int WorkerPool::configured_threads(const params::Settings& settings) {
  if (settings.is_set(params::Id::kThreads))
    return static_cast<int>(settings.integer(params::Id::kThreads));
  int cores = usable_cores();
  // Ranks of one host that no launcher bound to cores of their own (torchrun's default) each
  // see every core. Masks that cannot be disjoint, ranks x cores above the host's count,
  // must overlap: each rank then counts its share, lest R ranks start R times the workers
  // the host has room for (two ranks on two cores, one worker each: 1.58x at 10 Gbit/s
  // instead of 2.15x, perf/RESULTS.md).
  const auto ranks = static_cast<int>(settings.integer(params::Id::kLocalRanks));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (ranks > 1 && online > 0 && static_cast<long>(cores) * ranks > online)
    cores = std::max(1, cores / ranks);
  // One core: a worker could only take turns with the progress thread on it, and each turn
  // costs a futex wake and two context switches; the progress thread runs the jobs itself.
  if (cores <= 1) return 0;
  return std::clamp(cores / 2, 1, 8);
}

namespace {
std::atomic<int> g_shared_threads{-1};  // -1: not set; the table's defaults decide
}  // namespace

void WorkerPool::set_shared_threads(int threads) { g_shared_threads.store(threads); }

WorkerPool& WorkerPool::shared() {
  // Never destroyed: jobs may still reference comms while the process exits. A child made
  // by fork() inherits the object but none of its threads, so it gets a pool of its own
  // (the parent's copy is abandoned: its mutex may have been held at the fork).
  static std::atomic<WorkerPool*> pool{nullptr};
  static std::atomic<pid_t> owner{0};
  static std::mutex create_mu;
  WorkerPool* p = pool.load(std::memory_order_acquire);
  if (p != nullptr && owner.load(std::memory_order_relaxed) == getpid()) return *p;
  std::lock_guard<std::mutex> lock(create_mu);
  p = pool.load(std::memory_order_acquire);
  if (p == nullptr || owner.load() != getpid()) {
    const int n = g_shared_threads.load();
    p = new WorkerPool(n >= 0 ? n
                              : configured_threads(params::Settings::from(
                                    [](const char*) -> const char* { return nullptr; })));
    owner.store(getpid());
    pool.store(p, std::memory_order_release);
  }
  return *p;
}

}  // namespace squeeze::plugin
