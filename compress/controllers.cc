#include "compress/controllers.h"

#include <cmath>

namespace squeeze::compress {
namespace {

bool valid_multiplier(double m) { return std::isfinite(m) && m > 0.0; }

}  // namespace

void ThresholdRefresh::record(bool searched) {
  ++messages_;
  if (searched) {
    ++searches_;
    searched_ = true;
    since_search_ = 1;
  } else {
    ++since_search_;
  }
}

void ThresholdRefresh::observe_kept(uint64_t kept, uint64_t count, double keep) {
  const double target = keep * static_cast<double>(count);
  if (!(target >= 32.0)) return;  // too few to tell drift from noise
  const auto k = static_cast<double>(kept);
  if (k > 2.0 * target || k < 0.5 * target) invalidate();
}

const char* schedule_kind_name(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::kConstant: return "constant";
    case ScheduleKind::kStep: return "step";
    case ScheduleKind::kLinear: return "linear";
    case ScheduleKind::kLog: return "log";
  }
  return "unknown";
}

bool parse_schedule_kind(std::string_view s, ScheduleKind* out) {
  for (ScheduleKind k :
       {ScheduleKind::kConstant, ScheduleKind::kStep, ScheduleKind::kLinear, ScheduleKind::kLog}) {
    if (s == schedule_kind_name(k)) {
      *out = k;
      return true;
    }
  }
  return false;
}

bool ErrorBoundSchedule::valid() const { return valid_multiplier(start_multiplier); }

double ErrorBoundSchedule::multiplier(uint64_t message_index) const {
  if (!valid() || message_index >= decay_messages) return 1.0;
  const double m = start_multiplier;
  const double t = static_cast<double>(message_index) / static_cast<double>(decay_messages);
  switch (kind) {
    case ScheduleKind::kConstant: return 1.0;
    case ScheduleKind::kStep: return m;
    case ScheduleKind::kLinear: return m + (1.0 - m) * t;
    case ScheduleKind::kLog: return std::pow(m, 1.0 - t);
  }
  return 1.0;
}

StreamBounds::StreamBounds(double default_multiplier)
    : default_(valid_multiplier(default_multiplier) ? default_multiplier : 1.0) {}

bool StreamBounds::set(uint64_t stream, double multiplier) {
  if (!valid_multiplier(multiplier)) return false;
  by_stream_[stream] = multiplier;
  return true;
}

bool StreamBounds::set_default(double multiplier) {
  if (!valid_multiplier(multiplier)) return false;
  default_ = multiplier;
  return true;
}

double StreamBounds::multiplier(uint64_t stream) const {
  auto it = by_stream_.find(stream);
  return it == by_stream_.end() ? default_ : it->second;
}

}  // namespace squeeze::compress
