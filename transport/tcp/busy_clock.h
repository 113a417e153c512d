// How long a connection kept its link busy, to the microsecond: the time spent writing into
// the socket, plus the time between looks while the socket held bytes the link was still busy
// with (TcpBacklog); of that, the time the receiver's window was full (a slow reader, not the
// network, held them) and the time it cannot be sure of; and the application's pauses.
// TCP_INFO's own busy time counts whole jiffies (4 ms at HZ=250) and goes on while the last
// bytes wait for a delayed ACK: on loopback each window of two jiffies read anywhere from 0.1
// to 6 GB/s on a link that carried 1.5 GB/s, and the pays controller took that noise for the
// link's speed. A pure clock: the caller supplies the times and what the socket holds.
#pragma once

#include <chrono>

#include "transport/tcp/tcp_info.h"

namespace squeeze::transport::tcp {

class BusyClock {
 public:
  using Clock = std::chrono::steady_clock;
  explicit BusyClock(Clock::time_point start) : last_(start) {}

  // A write into the socket ran from t0 to t1; `after` is what the socket held then.
  void wrote(Clock::time_point t0, Clock::time_point t1, TcpBacklog after) {
    poll(t0, TcpBacklog{});  // not looked at (look_before_write said no need, or could not)
    if (t1 > t0) busy_ += t1 - t0;
    last_ = t1;
    backlog_ = after;
  }
  // Another thread (a multi-stream connection's helper, stream_set.h) began writing into one
  // of the connection's sockets at `t`, its first write since the last look. From then on the
  // link may be busy, as after a write of our own; the next look says until when. Without this
  // a look that found the sockets empty would end the looking while a helper moved a part.
  void began(Clock::time_point t) {
    if (backlog_.busy) return;  // already counted as busy from the last look on
    if (t < last_) t = last_;   // a write the last look may already have seen the end of
    poll(t, TcpBacklog{.busy = true});
  }
  // True when a write at `now` should first look at the socket: the link may still be busy and
  // the last look is long ago, so without one the gap would be unsure.
  bool look_before_write(Clock::time_point now) const {
    return backlog_.busy && now - last_ > kLongGap;
  }
  // True when a poll at `now` should look: the link may still be busy with bytes written, and
  // the last look is not so recent that another would only cost the poller its time (two
  // system calls while it spins on test()).
  bool look_due(Clock::time_point now) const { return backlog_.busy && now - last_ >= kLookEvery; }
  bool busy() const { return backlog_.busy; }
  static constexpr Clock::duration kLookEvery = std::chrono::microseconds(20);
  // A look at the socket at `now`: the time since the last look counts as what was seen then.
  void poll(Clock::time_point now, TcpBacklog seen) {
    if (now > last_) {
      const Clock::duration dt = now - last_;
      if (backlog_.busy) busy_ += dt;
      if (backlog_.window_full) limited_ += dt;
      if (backlog_.busy && !seen.busy && dt > kLongGap) unsure_ += dt;
    }
    last_ = now;
    backlog_ = seen;
  }
  double busy_us() const { return us(busy_); }
  double limited_us() const { return us(limited_); }  // a part of busy_us
  // Also a part of busy_us: long gaps between looks, at whose end the bytes had left. When
  // the poller was descheduled they may have left at any time in the gap.
  double unsure_us() const { return us(unsure_); }
  static constexpr Clock::duration kLongGap = std::chrono::microseconds(200);

  // Nothing left to write or send at `now`: the connection waits for the application.
  void went_idle(Clock::time_point now) {
    if (!idle_) idle_since_ = now;
    idle_ = true;
  }
  // A message posted at `now`. A wait longer than kAway was the application's pause between
  // collectives (compute), not a wait within one, and does not count as time the link could
  // have been busy.
  void posted(Clock::time_point now) {
    if (idle_ && now - idle_since_ > kAway) away_ += now - idle_since_;
    idle_ = false;
  }
  double away_us() const { return us(away_); }
  static constexpr Clock::duration kAway = std::chrono::milliseconds(1);

 private:
  static double us(Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
  }
  Clock::duration busy_{}, limited_{}, unsure_{}, away_{};
  Clock::time_point last_, idle_since_;
  bool idle_ = false;
  TcpBacklog backlog_;
};

}  // namespace squeeze::transport::tcp
