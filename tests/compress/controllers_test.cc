#include "compress/controllers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace squeeze::compress {
namespace {

TEST(ThresholdRefresh, SearchesFirstMessageThenEveryN) {
  ThresholdRefresh r(4);
  std::vector<bool> due;
  for (int i = 0; i < 10; ++i) {
    bool d = r.search_due();
    due.push_back(d);
    r.record(d);
  }
  std::vector<bool> want = {true, false, false, false, true, false, false, false, true, false};
  EXPECT_EQ(due, want);
  EXPECT_EQ(r.messages(), 10u);
  EXPECT_EQ(r.searches(), 3u);
}

TEST(ThresholdRefresh, ZeroAndOneMeanEveryMessage) {
  for (uint32_t every : {0u, 1u}) {
    ThresholdRefresh r(every);
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(r.search_due()) << "every=" << every << " message " << i;
      r.record(true);
    }
  }
}

TEST(ThresholdRefresh, InvalidateForcesNextSearchAndRestartsThePeriod) {
  ThresholdRefresh r(3);
  r.record(r.search_due());  // message 0 searches
  EXPECT_FALSE(r.search_due());
  r.invalidate();
  EXPECT_TRUE(r.search_due());
  r.record(true);
  EXPECT_FALSE(r.search_due());
  r.record(false);
  EXPECT_FALSE(r.search_due());
  r.record(false);
  EXPECT_TRUE(r.search_due());
}

TEST(ThresholdRefresh, ANotSearchedMessageBeforeFirstSearchKeepsItDue) {
  ThresholdRefresh r(10);
  r.record(false);  // the caller chose not to search (e.g. empty message)
  EXPECT_TRUE(r.search_due());
}

TEST(ThresholdRefresh, KeptCountOutsideTheBandForcesASearch) {
  ThresholdRefresh r(100);
  r.record(true);
  r.observe_kept(1000, 100000, 0.01);  // on target
  EXPECT_FALSE(r.search_due());
  r.observe_kept(2000, 100000, 0.01);  // exactly 2x is still inside
  r.observe_kept(500, 100000, 0.01);   // exactly 1/2 too
  EXPECT_FALSE(r.search_due());
  r.observe_kept(2001, 100000, 0.01);
  EXPECT_TRUE(r.search_due());
  r.record(true);
  r.observe_kept(499, 100000, 0.01);
  EXPECT_TRUE(r.search_due());
  r.record(true);
  r.observe_kept(1000, 1000, 0.01);  // target 10 < 32: too small to judge
  EXPECT_FALSE(r.search_due());
}

TEST(ScheduleKind, NamesRoundTrip) {
  for (ScheduleKind k :
       {ScheduleKind::kConstant, ScheduleKind::kStep, ScheduleKind::kLinear, ScheduleKind::kLog}) {
    ScheduleKind back{};
    ASSERT_TRUE(parse_schedule_kind(schedule_kind_name(k), &back));
    EXPECT_EQ(back, k);
  }
  ScheduleKind out = ScheduleKind::kStep;
  EXPECT_FALSE(parse_schedule_kind("exponential", &out));
  EXPECT_FALSE(parse_schedule_kind("", &out));
  EXPECT_EQ(out, ScheduleKind::kStep);
}

TEST(ErrorBoundSchedule, StepHoldsThenDrops) {
  ErrorBoundSchedule s{ScheduleKind::kStep, 8.0, 100};
  EXPECT_DOUBLE_EQ(s.multiplier(0), 8.0);
  EXPECT_DOUBLE_EQ(s.multiplier(99), 8.0);
  EXPECT_DOUBLE_EQ(s.multiplier(100), 1.0);
  EXPECT_DOUBLE_EQ(s.multiplier(UINT64_MAX), 1.0);
}

TEST(ErrorBoundSchedule, LinearInterpolates) {
  ErrorBoundSchedule s{ScheduleKind::kLinear, 5.0, 4};
  EXPECT_DOUBLE_EQ(s.multiplier(0), 5.0);
  EXPECT_DOUBLE_EQ(s.multiplier(1), 4.0);
  EXPECT_DOUBLE_EQ(s.multiplier(2), 3.0);
  EXPECT_DOUBLE_EQ(s.multiplier(3), 2.0);
  EXPECT_DOUBLE_EQ(s.multiplier(4), 1.0);
}

TEST(ErrorBoundSchedule, LogIsGeometric) {
  ErrorBoundSchedule s{ScheduleKind::kLog, 16.0, 4};
  EXPECT_DOUBLE_EQ(s.multiplier(0), 16.0);
  EXPECT_NEAR(s.multiplier(1), 8.0, 1e-12);
  EXPECT_NEAR(s.multiplier(2), 4.0, 1e-12);
  EXPECT_NEAR(s.multiplier(3), 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.multiplier(4), 1.0);
}

TEST(ErrorBoundSchedule, StartingTighterRisesToOne) {
  ErrorBoundSchedule lin{ScheduleKind::kLinear, 0.5, 2};
  EXPECT_DOUBLE_EQ(lin.multiplier(0), 0.5);
  EXPECT_DOUBLE_EQ(lin.multiplier(1), 0.75);
  ErrorBoundSchedule lg{ScheduleKind::kLog, 0.25, 2};
  EXPECT_NEAR(lg.multiplier(1), 0.5, 1e-12);
}

TEST(ErrorBoundSchedule, MonotoneForEveryKind) {
  for (ScheduleKind k : {ScheduleKind::kStep, ScheduleKind::kLinear, ScheduleKind::kLog}) {
    ErrorBoundSchedule s{k, 10.0, 1000};
    double prev = s.multiplier(0);
    for (uint64_t i = 1; i <= 1100; ++i) {
      double m = s.multiplier(i);
      ASSERT_LE(m, prev) << schedule_kind_name(k) << " at " << i;
      ASSERT_GE(m, 1.0);
      prev = m;
    }
  }
}

TEST(ErrorBoundSchedule, ConstantZeroLengthAndInvalidAreOne) {
  EXPECT_DOUBLE_EQ((ErrorBoundSchedule{ScheduleKind::kConstant, 9.0, 10}).multiplier(0), 1.0);
  EXPECT_DOUBLE_EQ((ErrorBoundSchedule{ScheduleKind::kStep, 9.0, 0}).multiplier(0), 1.0);
  for (double bad : {0.0, -2.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    ErrorBoundSchedule s{ScheduleKind::kLinear, bad, 10};
    EXPECT_FALSE(s.valid());
    EXPECT_DOUBLE_EQ(s.multiplier(3), 1.0);
  }
}

TEST(StreamBounds, DefaultAndOverrides) {
  StreamBounds b(2.0);
  EXPECT_DOUBLE_EQ(b.multiplier(7), 2.0);
  EXPECT_TRUE(b.set(7, 0.5));
  EXPECT_DOUBLE_EQ(b.multiplier(7), 0.5);
  EXPECT_DOUBLE_EQ(b.multiplier(8), 2.0);
  EXPECT_TRUE(b.set_default(3.0));
  EXPECT_DOUBLE_EQ(b.multiplier(8), 3.0);
  EXPECT_DOUBLE_EQ(b.multiplier(7), 0.5);
  b.erase(7);
  EXPECT_DOUBLE_EQ(b.multiplier(7), 3.0);
  EXPECT_EQ(b.size(), 0u);
}

TEST(StreamBounds, RejectsInvalidMultipliers) {
  StreamBounds b;
  EXPECT_FALSE(b.set(1, 0.0));
  EXPECT_FALSE(b.set(1, -1.0));
  EXPECT_FALSE(b.set(1, std::nan("")));
  EXPECT_FALSE(b.set_default(std::numeric_limits<double>::infinity()));
  EXPECT_DOUBLE_EQ(b.multiplier(1), 1.0);
  EXPECT_EQ(b.size(), 0u);
  StreamBounds bad_default(-4.0);
  EXPECT_DOUBLE_EQ(bad_default.default_multiplier(), 1.0);
}

TEST(AdaptiveErrorBound, CombinesStreamAndIteration) {
  AdaptiveErrorBound a;
  a.streams.set(42, 4.0);
  a.schedule = {ScheduleKind::kStep, 10.0, 5};
  EXPECT_DOUBLE_EQ(a.effective_error_bound(1e-3, 42, 0), 1e-3 * 4.0 * 10.0);
  EXPECT_DOUBLE_EQ(a.effective_error_bound(1e-3, 42, 5), 1e-3 * 4.0);
  EXPECT_DOUBLE_EQ(a.effective_error_bound(1e-3, 1, 5), 1e-3);
  EXPECT_DOUBLE_EQ(a.effective_error_bound(1e-3, 1, 0), 1e-2);
}

}  // namespace
}  // namespace squeeze::compress
