#include "plugin/engine/pays.h"

#include <algorithm>

namespace squeeze::plugin {

namespace {
constexpr double kAlpha = 0.2;
double ewma(double old, double sample, uint64_t n) { return n == 0 ? sample : old + kAlpha * (sample - old); }
std::size_t idx(compress::CodecId c) { return static_cast<std::size_t>(c) & 7u; }
}  // namespace

double PaysController::speedup_locked(const CodecState& s) const {
  if (link_samples_ == 0 || link_ <= 0) return 0;  // link speed unknown: not yet
  double w = std::max(1, cfg_.workers);
  double dec = s.dec_samples ? s.dec : s.enc;  // no local decodes yet: assume symmetric
  return std::min({s.ratio, w * s.enc / link_, w * dec / link_});
}

bool PaysController::should_compress(compress::CodecId codec) {
  if (!cfg_.enabled) return true;
  std::lock_guard<std::mutex> lock(mu_);
  CodecState& s = codecs_[idx(codec)];
  if (link_samples_ == 0) return false;  // raw until the link is measured (raw traffic measures it)
  if (s.samples < cfg_.warmup) return true;
  double sp = speedup_locked(s);
  if (s.compressing && sp < cfg_.stop_below) s.compressing = false;
  else if (!s.compressing && sp > cfg_.start_above) s.compressing = true;
  if (s.compressing) return true;
  if (++s.since_probe >= cfg_.probe_every) {
    s.since_probe = 0;
    return true;
  }
  return false;
}

void PaysController::record_encode(compress::CodecId codec, uint64_t bytes_in, uint64_t bytes_out, double seconds) {
  if (bytes_in == 0 || seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  CodecState& s = codecs_[idx(codec)];
  double r = static_cast<double>(bytes_in) / static_cast<double>(std::max<uint64_t>(bytes_out, 1));
  s.enc = ewma(s.enc, static_cast<double>(bytes_in) / seconds, s.samples);
  s.ratio = ewma(s.ratio, r, s.samples);
  ++s.samples;
}

void PaysController::record_decode(compress::CodecId codec, uint64_t bytes_out, double seconds) {
  if (bytes_out == 0 || seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  CodecState& s = codecs_[idx(codec)];
  s.dec = ewma(s.dec, static_cast<double>(bytes_out) / seconds, s.dec_samples);
  ++s.dec_samples;
}

void PaysController::record_link(uint64_t wire_bytes, double busy_seconds) {
  if (wire_bytes == 0 || busy_seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  link_ = ewma(link_, static_cast<double>(wire_bytes) / busy_seconds, link_samples_);
  ++link_samples_;
}

void PaysController::record_link_rate(double bytes_per_s, bool lower_bound) {
  if (bytes_per_s <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (lower_bound && link_samples_ > 0 && bytes_per_s <= link_) return;
  link_ = ewma(link_, bytes_per_s, link_samples_);
  ++link_samples_;
}

PaysController::View PaysController::view(compress::CodecId codec) const {
  std::lock_guard<std::mutex> lock(mu_);
  const CodecState& s = codecs_[idx(codec)];
  return {s.enc, s.dec_samples ? s.dec : s.enc, s.ratio, link_, speedup_locked(s), s.compressing, s.samples};
}

}  // namespace squeeze::plugin
