// The connections a listener has accepted but not yet handed to NCCL, shared by the tcp, ucx
// and verbs listeners so that none of them can be exhausted by strays:
// - at most SocketOptions::max_pending wait; one more closes the oldest that has not shown
//   the listener's nonce;
// - each must complete its handshake within SocketOptions::handshake_timeout_ms of its accept;
// - every accept() call takes what the kernel has queued and steps every waiting connection,
//   so a thousand strays cost one call, not a thousand;
// - running out of descriptors or memory in accept4 (EMFILE, ENFILE, ENOBUFS, ENOMEM) first
//   closes the oldest stray to make room, else backs off (10 ms doubling to 1 s) and retries
//   on a later call; it is logged once, never returned to NCCL.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "transport/socket/socket.h"
#include "transport/socket/socket_options.h"
#include "transport/status.h"

namespace squeeze::transport::sock {

// What one accept4 gave.
enum class AcceptResult {
  kConnection,  // *fd and *peer are set
  kEmpty,       // nothing queued
  kShort,       // out of descriptors or memory (*err says which): make room or back off
  kFatal,       // the listening socket itself is broken (*err)
};
AcceptResult accept_one(int listen_fd, Fd* fd, SockAddr* peer, int* err);

// What a listener's step made of one pending connection.
struct Verdict {
  enum Kind {
    kWait,     // nothing conclusive yet
    kGenuine,  // showed the listener's nonce; the handshake goes on
    kReady,    // handshake complete: hand it to NCCL
    kDrop,     // a stray, stale or vanished connection: close it
  } kind = kWait;
  const char* why = "";  // for kDrop
};

// P is the listener's per-connection state; it owns the socket. The listener makes one
// from an accepted socket (make(Fd, SockAddr) -> std::unique_ptr<P>) and steps it
// (step(P&, Verdict*) -> Status; a non-ok Status fails the accept() call: a genuine peer
// that cannot be served, e.g. one speaking another wire version).
template <class P>
class PendingSet {
 public:
  using Clock = std::chrono::steady_clock;
  PendingSet(std::string where, const SocketOptions& options)
      : where_(std::move(where)), options_(options) {}

  // One accept() call. *ready gets a connection whose handshake is complete, if any.
  template <class Make, class Step>
  Status poll(int listen_fd, Make&& make, Step&& step, std::unique_ptr<P>* ready) {
    const Clock::time_point now = Clock::now();
    Tally tally;
    expire(now, &tally);
    Status st = take_queued(listen_fd, now, make, step, &tally);
    for (std::size_t i = 0; st.ok() && i < waiting_.size();) {
      Status s = step_one(waiting_[i], step, &tally);
      if (!s.ok()) st = std::move(s);
      if (!waiting_[i].p) {
        waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    report(tally);
    if (!st.ok()) return st;
    if (!ready_.empty()) {
      *ready = std::move(ready_.front());
      ready_.pop_front();
    }
    return Status::Ok();
  }

  std::size_t waiting() const { return waiting_.size(); }

 private:
  struct Entry {
    std::unique_ptr<P> p;
    Clock::time_point born;
    bool genuine = false;
    std::string peer;
  };
  struct Tally {
    int dropped = 0;
    std::string last_peer;
    const char* last_why = "";
  };

  void expire(Clock::time_point now, Tally* tally) {
    const auto limit = std::chrono::milliseconds(options_.handshake_timeout_ms);
    for (std::size_t i = 0; i < waiting_.size();) {
      if (now - waiting_[i].born < limit) {
        ++i;
        continue;
      }
      if (waiting_[i].genuine) {
        log_to(options_, true,
               where_ + ": connection from " + waiting_[i].peer + " showed the nonce but did not " +
                   "complete its handshake within " +
                   std::to_string(options_.handshake_timeout_ms) + " ms; closed it");
      } else {
        count(tally, waiting_[i].peer, "no hello within the handshake deadline");
      }
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  // Closes the oldest connection that has not shown the nonce; false if there is none.
  bool evict_stray(Tally* tally, const char* why) {
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if (it->genuine) continue;
      count(tally, it->peer, why);
      waiting_.erase(it);
      return true;
    }
    return false;
  }

  template <class Make, class Step>
  Status take_queued(int listen_fd, Clock::time_point now, Make& make, Step& step, Tally* tally) {
    if (now < retry_at_) return Status::Ok();
    // Bounded, so that a host that keeps connecting cannot hold one accept() call forever.
    const int budget = std::max(1024, 4 * options_.max_pending);
    for (int taken = 0; taken < budget; ++taken) {
      Fd fd;
      SockAddr peer;
      int err = 0;
      AcceptResult r = accept_one(listen_fd, &fd, &peer, &err);
      if (r == AcceptResult::kEmpty) break;
      if (r == AcceptResult::kFatal)
        return Status::System("accept on " + where_ + ": " + errno_str(err));
      if (r == AcceptResult::kShort) {
        if (evict_stray(tally, "closed to make room: accept ran out of descriptors or memory"))
          continue;
        back_off(now, err);
        return Status::Ok();
      }
      backoff_ = std::chrono::milliseconds(0);
      if (Status s = configure_data_socket(fd.get(), options_); !s.ok()) {
        count(tally, peer.str(), "could not configure its socket");
        continue;
      }
      if (static_cast<int>(waiting_.size()) >= options_.max_pending &&
          !evict_stray(tally, "closed to make room: too many connections waiting for a hello")) {
        count(tally, peer.str(), "too many genuine connections mid-handshake");
        continue;
      }
      waiting_.push_back(Entry{make(std::move(fd), peer), now, false, peer.str()});
      // A genuine peer's hello is usually there already: look now, so that it is known to be
      // genuine before more strays push it towards the front.
      if (Status s = step_one(waiting_.back(), step, tally); !s.ok()) {
        waiting_.pop_back();
        return s;
      }
      if (!waiting_.back().p) waiting_.pop_back();
    }
    return Status::Ok();
  }

  // Steps one entry; leaves its p null when it was dropped or moved to ready_.
  template <class Step>
  Status step_one(Entry& e, Step& step, Tally* tally) {
    Verdict v;
    Status s = step(*e.p, &v);
    if (!s.ok()) {
      e.p.reset();
      return s;
    }
    switch (v.kind) {
      case Verdict::kWait: break;
      case Verdict::kGenuine: e.genuine = true; break;
      case Verdict::kReady: ready_.push_back(std::move(e.p)); break;
      case Verdict::kDrop:
        if (e.genuine) {
          log_to(options_, true, where_ + ": connection from " + e.peer + " closed: " + v.why);
        } else {
          count(tally, e.peer, v.why);
        }
        e.p.reset();
        break;
    }
    return Status::Ok();
  }

  void back_off(Clock::time_point now, int err) {
    using std::chrono::milliseconds;
    backoff_ =
        backoff_.count() == 0 ? milliseconds(10) : std::min(backoff_ * 2, milliseconds(1000));
    retry_at_ = now + backoff_;
    const std::string msg =
        where_ + ": accept: " + errno_str(err) + " with " + std::to_string(waiting_.size()) +
        " connections mid-handshake; retrying in " + std::to_string(backoff_.count()) + " ms";
    log_to(options_, !warned_short_, msg);  // a warning the first time, then info
    warned_short_ = true;
  }

  static void count(Tally* tally, const std::string& peer, const char* why) {
    ++tally->dropped;
    tally->last_peer = peer;
    tally->last_why = why;
  }

  void report(const Tally& tally) {
    if (tally.dropped == 0) return;
    log_to(options_, false,
           where_ + ": closed " + std::to_string(tally.dropped) +
               " stray connection(s); the last from " + tally.last_peer + ": " + tally.last_why);
  }

  std::string where_;
  SocketOptions options_;
  std::deque<Entry> waiting_;  // oldest first
  std::deque<std::unique_ptr<P>> ready_;
  Clock::time_point retry_at_{};
  std::chrono::milliseconds backoff_{0};
  bool warned_short_ = false;
};

}  // namespace squeeze::transport::sock
