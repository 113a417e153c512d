#include "plugin/engine/pays.h"

#include <algorithm>

namespace squeeze::plugin {

namespace {
constexpr double kAlpha = 0.2;
double ewma(double old, double sample, uint64_t n) {
  return n == 0 ? sample : old + kAlpha * (sample - old);
}
// A codec's first runs in a process are cold (its code, tables and buffers not yet in cache):
// measured at 10 Gbit/s, the first encode read 2.8-3.2 GB/s and the first two decodes 4.7-7 GB/s,
// where the steady ones read 5.4-6.7 and 11-17. Over its first kSeedSamples a speed is the
// best seen, which a cold run cannot drag down; the moving average goes on from there.
constexpr uint64_t kSeedSamples = 4;
double speed(double old, double sample, uint64_t n) {
  return n < kSeedSamples ? std::max(old, sample) : ewma(old, sample, n);
}
std::size_t idx(compress::CodecId c) { return static_cast<std::size_t>(c) & 7u; }
// The decode share forgets old traffic: once the two byte counts pass this, both halve.
constexpr double kShareMemoryBytes = 1024.0 * 1024 * 1024;
void count_bytes(double* add_to, double bytes, double* other) {
  *add_to += bytes;
  if (*add_to + *other <= kShareMemoryBytes) return;
  *add_to *= 0.5;
  *other *= 0.5;
}
}  // namespace

double PaysController::speedup_locked(const CodecState& s) const {
  if (link_samples_ == 0 || link_ <= 0) return 0;  // link speed unknown: not yet
  double w = std::max(1, cfg_.workers);
  double dec = s.dec_samples ? s.dec : s.enc;  // no local decodes yet: assume symmetric
  if (s.enc <= 0 || dec <= 0) return 0;
  const double cpu_seconds_per_byte = 1 / s.enc + decode_share_locked() / dec;
  const double sp = std::min({s.ratio, w / (link_ * cpu_seconds_per_byte), w * dec / link_});
  if (utilization_ < 0 || sp <= 0) return sp;
  return 1 / ((1 - utilization_) + utilization_ / sp);
}

bool PaysController::should_compress(compress::CodecId codec, std::optional<View>* switched) {
  if (!cfg_.enabled) return true;
  std::lock_guard<std::mutex> lock(mu_);
  CodecState& s = codecs_[idx(codec)];
  if (link_samples_ < cfg_.link_warmup)
    return false;  // raw until the link is measured (raw traffic measures it)
  if (s.samples < cfg_.warmup) {
    // Up to 8 messages are in flight, and a sample arrives only when its encode is done: at
    // most `warmup` encodes are outstanding (started, not yet reported), and the messages
    // beyond go raw until one reports (with a try every probe_every messages, so encodes that
    // never report cannot leave the codec unmeasured). Outstanding, not started in all: where
    // samples arrive one at a time while messages keep coming (the collective network asks for
    // a call's contribution and its result when the call is posted, up to 8 calls ahead, and
    // the result's encode reports only once the other nodes' contributions are in), waiting
    // for all `warmup` sent every call posted meanwhile raw: 14 of the first 128 pieces of a
    // 16 MiB all-reduce at 1 Gbit/s, on top of the 16 sent before the link was measured.
    if (s.started < s.samples + cfg_.warmup || probe_due(s, cfg_.probe_every)) {
      ++s.started;
      return true;
    }
    return false;
  }
  double sp = speedup_locked(s);
  const bool was = s.compressing;
  if (s.compressing && sp < cfg_.stop_below)
    s.compressing = false;
  else if (!s.compressing && sp > cfg_.start_above)
    s.compressing = true;
  if (switched != nullptr && s.compressing != was) *switched = view_locked(s);
  if (s.compressing) {
    s.probe_interval = cfg_.probe_every;
    return true;
  }
  // While bypassing, a probe keeps the codec's estimates fresh. The raw traffic keeps the link's
  // fresh by itself, and each probe costs a full encode where a raw send is nearly free (on
  // loopback one probe in 32 cost 7% of the throughput), so the interval doubles with each
  // probe while bypassing lasts, up to probe_max.
  if (!probe_due(s, s.probe_interval)) return false;
  s.probe_interval = std::min(2 * s.probe_interval, std::max(cfg_.probe_max, cfg_.probe_every));
  return true;
}

bool PaysController::probe_due(CodecState& s, uint32_t every) {
  if (++s.since_probe < every) return false;
  s.since_probe = 0;
  return true;
}

void PaysController::record_encode(compress::CodecId codec, uint64_t bytes_in, uint64_t bytes_out,
                                   double seconds) {
  if (bytes_in == 0 || seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  CodecState& s = codecs_[idx(codec)];
  double r = static_cast<double>(bytes_in) / static_cast<double>(std::max<uint64_t>(bytes_out, 1));
  s.enc = speed(s.enc, static_cast<double>(bytes_in) / seconds, s.samples);
  s.ratio = ewma(s.ratio, r, s.samples);
  ++s.samples;
}

void PaysController::record_decode(compress::CodecId codec, uint64_t bytes_out, double seconds) {
  if (bytes_out == 0 || seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  CodecState& s = codecs_[idx(codec)];
  s.dec = speed(s.dec, static_cast<double>(bytes_out) / seconds, s.dec_samples);
  ++s.dec_samples;
}

void PaysController::record_sent(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  count_bytes(&sent_, static_cast<double>(bytes), &received_);
}

void PaysController::record_received(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  count_bytes(&received_, static_cast<double>(bytes), &sent_);
}

double PaysController::decode_share_locked() const { return sent_ > 0 ? received_ / sent_ : 0; }

void PaysController::record_link(uint64_t wire_bytes, double busy_seconds) {
  if (wire_bytes == 0 || busy_seconds <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  add_saturated_locked(static_cast<double>(wire_bytes) / busy_seconds);
}

void PaysController::record_link_rate(double bytes_per_s, bool lower_bound, double utilization) {
  if (bytes_per_s <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const bool raw = std::none_of(codecs_.begin(), codecs_.end(),
                                [](const CodecState& c) { return c.compressing; });
  if (utilization >= 0 && raw) {
    utilization_ = ewma(utilization_, std::min(utilization, 1.0), utilization_samples_);
    ++utilization_samples_;
  }
  if (!lower_bound) {
    add_saturated_locked(bytes_per_s);
    return;
  }
  // An application-limited sample covers a short burst. Behind a token bucket (tc tbf, a
  // cloud NIC's policer) a burst the bucket holds crosses at the wire's speed, far above the
  // sustained rate: 3.5 GB/s samples behind a 1 Gbit/s tbf were measured. So such samples only
  // stand in while the link has never been seen saturated, and then only raise the estimate.
  if (n_saturated_ > 0) return;
  if (link_samples_ == 0 || bytes_per_s > link_) link_ = bytes_per_s;
  ++link_samples_;
}

void PaysController::add_saturated_locked(double bytes_per_s) {
  recent_[n_saturated_ % recent_.size()] = bytes_per_s;
  ++n_saturated_;
  ++link_samples_;
  // The median of the last few: one sample taken while the bucket was full (or while another
  // flow paused) moves it not at all.
  const std::size_t n = std::min<std::size_t>(n_saturated_, recent_.size());
  std::array<double, kRecentLinkSamples> v{};
  std::copy_n(recent_.begin(), n, v.begin());
  std::nth_element(v.begin(), v.begin() + n / 2, v.begin() + n);
  link_ = v[n / 2];
}

PaysController::View PaysController::view_locked(const CodecState& s) const {
  return {s.enc,
          s.dec_samples ? s.dec : s.enc,
          s.ratio,
          link_,
          speedup_locked(s),
          decode_share_locked(),
          utilization_,
          s.compressing};
}

PaysController::View PaysController::view(compress::CodecId codec) const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_locked(codecs_[idx(codec)]);
}

}  // namespace squeeze::plugin
