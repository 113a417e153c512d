// The UCX state comms share: one ucp context and one worker (UCS_THREAD_MODE_MULTI, since
// NCCL's service thread and its progress threads all reach it), created when the first comm
// needs it and destroyed with the last one.
//
// One worker rather than one per comm: every worker carries its own interfaces (on IB a
// receive queue of thousands of registered buffers, here 4 MiB of shared memory and
// ~15 ms to create), and NCCL opens dozens of comms per process. Messages of different comms
// are kept apart by the receive comm's id in every tag (ucx_wire.h).
//
// Created on demand, not at open_transport: UCX cannot be used in a child forked while a
// context exists (its async thread state is inherited but the thread is not), and tools
// and tests fork after NCCL's init. A session used across fork() refuses to work in the child
// and leaves the parent's resources alone.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/status.h"
#include "transport/ucx/ucx_library.h"

namespace squeeze::transport::ucx {

// What an endpoint's error callback writes: it may run on whichever thread progresses the
// shared worker, and after the comm has gone (then into a retired record the session keeps).
struct EpState {
  std::atomic<ucs_status_t> failure{UCS_OK};
};

class Session {
 public:
  static Status create(std::shared_ptr<const Library> lib, std::shared_ptr<Session>* out);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Library& lib() const { return *lib_; }
  const Api& api() const { return lib_->api(); }
  ucp_worker_h worker() const { return worker_; }
  const std::vector<uint8_t>& address() const { return address_; }
  // False in a child forked while this session existed: nothing may touch UCX there.
  bool usable() const;
  uint32_t next_comm_id() { return next_comm_id_.fetch_add(1, std::memory_order_relaxed); }
  // Keeps a closed endpoint's state until the worker is gone.
  void retire(std::unique_ptr<EpState> state);
  // A comm failed because its peer stalled mid-transfer. UCX may still hold a wire-up reply
  // to that peer which it cannot send, and destroying the worker then aborts the process
  // inside UCX 1.13 (ucp_request.c:684, "got REP message", from ucp_worker_destroy), even
  // once the peer has died. So such a session leaves its worker and context, and what UCX
  // may still call into (the retired endpoint states), to the process's exit: the job gets
  // its error and can close its comms, at the cost of one worker's memory and threads.
  void keep_worker_until_exit() { keep_worker_.store(true, std::memory_order_relaxed); }

 private:
  explicit Session(std::shared_ptr<const Library> lib) : lib_(std::move(lib)) {}
  std::shared_ptr<const Library> lib_;
  pid_t pid_ = 0;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<uint8_t> address_;
  std::atomic<uint32_t> next_comm_id_{1};
  std::mutex retired_mu_;
  std::vector<std::unique_ptr<EpState>> retired_;
  std::atomic<bool> keep_worker_{false};
};

// Hands out the live session, creating one when there is none (thread-safe).
class SessionSource {
 public:
  explicit SessionSource(std::shared_ptr<const Library> lib) : lib_(std::move(lib)) {}
  Status acquire(std::shared_ptr<Session>* out);
  const Library& lib() const { return *lib_; }

 private:
  std::shared_ptr<const Library> lib_;
  std::mutex mu_;
  std::weak_ptr<Session> live_;
};

}  // namespace squeeze::transport::ucx
