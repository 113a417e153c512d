// What the stall-deadline tests (issue 27) require of a receive whose peer stalled, on every
// transport (TCP, multi-stream TCP, UCX, verbs): an error, not a hang, of code kRemote, that
// came within the window the deadline allows, whose message says "stalled" and names what is
// missing, and, where the test asks, a comm that stays failed.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "transport/status.h"

namespace squeeze::transport {

// The seconds, from when the clock could start, within which the error must come: from the
// deadline (less 10 ms of clock grain) to before the deadline plus the slack a loaded machine
// needs.
struct StallWindow {
  double earliest_s = 0;
  double latest_s = 0;
};

// `s`: the receive's status once the test stopped waiting, `took` the seconds it waited.
// `says`: what the message must contain besides "stalled" (the peer, the bytes or parts
// missing). `again`, when given, tests the comm once more: it must fail again, not hang.
// Without an error the ASSERT returns from this function only: where what follows must not
// run then, call it in ASSERT_NO_FATAL_FAILURE.
inline void expect_stall_error(const Status& s, double took, StallWindow window,
                               std::initializer_list<std::string_view> says,
                               const std::function<Status()>& again = {}) {
  ASSERT_FALSE(s.ok()) << "no error after " << took << " s";
  EXPECT_EQ(s.code(), Status::Code::kRemote);
  EXPECT_GE(took, window.earliest_s);
  EXPECT_LT(took, window.latest_s) << "later than the deadline's slack";
  EXPECT_NE(s.message().find("stalled"), std::string::npos) << s.message();
  for (std::string_view what : says)
    EXPECT_NE(s.message().find(what), std::string::npos)
        << "no \"" << what << "\" in " << s.message();
  if (again) {
    EXPECT_FALSE(again().ok()) << "the comm should stay failed";
  }
}

}  // namespace squeeze::transport
