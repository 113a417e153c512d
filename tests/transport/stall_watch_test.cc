// The stall clock's rule (transport/stall_watch.h), with explicit times: it starts at the
// first wait, only real progress (64 KiB, or a completed header, payload or part) restarts
// it, and a trickle of bytes does not.
#include "transport/stall_watch.h"

#include <gtest/gtest.h>

#include <chrono>

namespace squeeze::transport {
namespace {

using std::chrono::milliseconds;

TEST(StallWatch, StartsAtTheFirstWaitAndExpiresAtTheDeadline) {
  StallWatch w(1000);
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.running());
  EXPECT_FALSE(w.expired(t0));  // starts the clock
  EXPECT_TRUE(w.running());
  EXPECT_EQ(w.ms_left(t0), 1000);
  EXPECT_FALSE(w.expired(t0 + milliseconds(999)));
  EXPECT_EQ(w.ms_left(t0 + milliseconds(999)), 1);
  EXPECT_TRUE(w.expired(t0 + milliseconds(1000)));
  EXPECT_EQ(w.ms_left(t0 + milliseconds(5000)), 1);  // never 0 or negative while running
}

TEST(StallWatch, ATrickleDoesNotRestartTheClock) {
  StallWatch w(1000);
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.expired(t0));
  for (int k = 1; k < 10; ++k) {
    w.moved(1);
    EXPECT_FALSE(w.expired(t0 + milliseconds(100 * k)));
  }
  EXPECT_EQ(w.got(), 9u);
  EXPECT_TRUE(w.expired(t0 + milliseconds(1000)));
  EXPECT_EQ(bytes_progress(w), "9 bytes (less than 64 KiB)");
}

TEST(StallWatch, SixtyFourKibOrACompletedUnitIsProgress) {
  StallWatch w(1000);
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.expired(t0));
  w.moved(StallWatch::kProgressBytes - 1);
  EXPECT_TRUE(w.running());
  w.moved(1);  // 64 KiB since the clock started
  EXPECT_FALSE(w.running());
  EXPECT_FALSE(w.expired(t0 + milliseconds(1500)));  // starts again here
  EXPECT_TRUE(w.expired(t0 + milliseconds(2500)));
  w.completed();  // the rest of a header, payload or part, however short
  EXPECT_FALSE(w.running());
  EXPECT_FALSE(w.expired(t0 + milliseconds(2600)));
  EXPECT_EQ(bytes_progress(w), "no byte");
}

TEST(StallWatch, BytesBeforeTheWaitDoNotCount) {
  StallWatch w(1000);
  w.moved(StallWatch::kProgressBytes * 4);  // the clock was not running
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.expired(t0));
  EXPECT_EQ(w.got(), 0u);
  EXPECT_TRUE(w.expired(t0 + milliseconds(1000)));
}

TEST(StallWatch, ZeroIsOff) {
  StallWatch w(0);
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.expired(t0));
  EXPECT_FALSE(w.expired(t0 + std::chrono::hours(24)));
  EXPECT_EQ(w.ms_left(t0), -1);
}

TEST(StallWatch, TheErrorNamesPeerProgressAndWhatIsMissing) {
  const Status s = stall_error("10.0.0.2:4711", 120.04, "no byte", "22 of 32 header bytes missing");
  EXPECT_EQ(s.code(), Status::Code::kRemote);
  EXPECT_EQ(s.message(),
            "receive from 10.0.0.2:4711 stalled: no byte in 120.0 s with 22 of 32 header bytes "
            "missing (stall deadline, SQUEEZE_STALL_TIMEOUT_S)");
}

}  // namespace
}  // namespace squeeze::transport
