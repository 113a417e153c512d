// The TCP link's busy clock: what counts as time the link was busy, limited by the reader,
// unsure, or the application's pause. Times are supplied, so each case is exact.
#include <gtest/gtest.h>

#include "transport/tcp/busy_clock.h"

namespace squeeze::transport::tcp {
namespace {

using Clock = BusyClock::Clock;
using std::chrono::microseconds;
constexpr TcpBacklog kDrained{};
constexpr TcpBacklog kUnsent{.busy = true};
constexpr TcpBacklog kReaderSlow{.busy = true, .window_full = true};

TEST(BusyClock, CountsWritingAndTimeWithBytesUnsentButNotTheWaitForAnAck) {
  const Clock::time_point t{};
  BusyClock c(t);
  c.wrote(t + microseconds(10), t + microseconds(40),
          kDrained);  // all sent: the rest is the ACK's wait
  c.poll(t + microseconds(90), kDrained);
  EXPECT_DOUBLE_EQ(c.busy_us(), 30);
  c.wrote(t + microseconds(100), t + microseconds(120),
          kUnsent);  // the network cannot take more yet
  EXPECT_TRUE(c.busy());
  c.poll(t + microseconds(170), kUnsent);
  c.poll(t + microseconds(200), kDrained);
  EXPECT_FALSE(c.busy());
  c.poll(t + microseconds(900), kDrained);
  EXPECT_DOUBLE_EQ(c.busy_us(), 30 + 20 + 80);
  EXPECT_DOUBLE_EQ(c.limited_us(), 0);
  EXPECT_DOUBLE_EQ(c.unsure_us(), 0);
}

TEST(BusyClock, AFullReceiveWindowIsBusyTimeTheReaderLimited) {
  const Clock::time_point t{};
  BusyClock c(t);
  c.wrote(t, t + microseconds(10), kReaderSlow);
  c.poll(t + microseconds(60), kUnsent);
  c.poll(t + microseconds(80), kDrained);
  EXPECT_DOUBLE_EQ(c.busy_us(), 80);
  EXPECT_DOUBLE_EQ(c.limited_us(), 50);
}

TEST(BusyClock, ALongGapAfterWhichTheBytesHadLeftIsUnsure) {
  const Clock::time_point t{};
  BusyClock c(t);
  c.wrote(t, t + microseconds(10), kUnsent);
  c.poll(t + microseconds(110), kDrained);  // a short gap: the poller was there
  EXPECT_DOUBLE_EQ(c.unsure_us(), 0);
  c.wrote(t + microseconds(200), t + microseconds(210), kUnsent);
  c.poll(t + microseconds(5210), kDrained);  // 5 ms away: they may have left at any time
  EXPECT_DOUBLE_EQ(c.unsure_us(), 5000);
  c.wrote(t + microseconds(6000), t + microseconds(6010), kUnsent);
  c.wrote(t + microseconds(9010), t + microseconds(9020),
          kUnsent);  // no look before the next write either
  EXPECT_DOUBLE_EQ(c.unsure_us(), 8000);
  c.poll(t + microseconds(12020), kUnsent);  // still unsent after the gap: busy all along
  EXPECT_DOUBLE_EQ(c.unsure_us(), 8000);
  EXPECT_DOUBLE_EQ(c.busy_us(), 10 + 100 + 10 + 5000 + 10 + 3000 + 10 + 3000);
}

TEST(BusyClock, LooksOnlyWhileTheLinkMayBeBusyAndNotTooOften) {
  const Clock::time_point t{};
  BusyClock c(t);
  EXPECT_FALSE(c.look_due(t + microseconds(500))) << "nothing written: nothing to look for";
  c.wrote(t, t + microseconds(10), kUnsent);
  EXPECT_FALSE(c.look_due(t + microseconds(15)))
      << "two system calls per test() would cost the poller";
  EXPECT_TRUE(c.look_due(t + microseconds(30)));
  EXPECT_FALSE(c.look_before_write(t + microseconds(30))) << "a short gap is not worth a look";
  EXPECT_TRUE(c.look_before_write(t + microseconds(300)))
      << "without a look this gap would be unsure";
  c.poll(t + microseconds(300), kDrained);
  EXPECT_FALSE(c.look_due(t + microseconds(900)));
  EXPECT_FALSE(c.look_before_write(t + microseconds(900)));
}

// A multi-stream connection's helper threads write without the clock seeing the write: the
// first write since a look starts a busy spell from its own time, and the looks go on until
// the sockets are seen empty. Parts handed out and not yet written are not busy.
TEST(BusyClock, AHelpersWriteStartsABusySpellFromWhenItBegan) {
  const Clock::time_point t{};
  BusyClock c(t);
  EXPECT_FALSE(c.look_due(t + microseconds(500))) << "parts handed out, none written: idle";
  c.began(t + microseconds(1000));
  EXPECT_TRUE(c.busy());
  EXPECT_TRUE(c.look_due(t + microseconds(1030))) << "the poller must look to see the end";
  c.poll(t + microseconds(1030), kUnsent);
  c.began(t + microseconds(1040));  // another write while busy: the spell goes on from 1000
  c.poll(t + microseconds(1100), kDrained);
  EXPECT_DOUBLE_EQ(c.busy_us(), 100) << "the 1000 us before the first write were the CPU's";
  EXPECT_FALSE(c.look_due(t + microseconds(1200)));
  // A write stamped before the last look, handed over after it: counts from the look.
  c.began(t + microseconds(1050));
  c.poll(t + microseconds(1150), kDrained);
  EXPECT_DOUBLE_EQ(c.busy_us(), 150);
  // The poller away for 5 ms after a helper's write, the bytes gone by then: busy, unsure.
  c.began(t + microseconds(2000));
  c.poll(t + microseconds(7000), kDrained);
  EXPECT_DOUBLE_EQ(c.busy_us(), 5150);
  EXPECT_DOUBLE_EQ(c.unsure_us(), 5000);
}

TEST(BusyClock, APauseLongerThanAMillisecondBeforeTheNextMessageIsAway) {
  const Clock::time_point t{};
  BusyClock c(t);
  c.went_idle(t);
  c.went_idle(t + microseconds(300));  // still the same wait
  c.posted(t + microseconds(500));     // a wait within a collective
  EXPECT_DOUBLE_EQ(c.away_us(), 0);
  c.went_idle(t + microseconds(1000));
  c.posted(t + microseconds(4000));  // compute between collectives
  EXPECT_DOUBLE_EQ(c.away_us(), 3000);
  c.posted(t + microseconds(9000));  // not idle in between: nothing more
  EXPECT_DOUBLE_EQ(c.away_us(), 3000);
}

}  // namespace
}  // namespace squeeze::transport::tcp
