// Decides, message by message, whether compressing pays on this link. It keeps moving
// averages of the codec's encode and decode speed and ratio (per codec) and of the speed the
// link actually achieves, and compresses when the pipelined speedup
//     min(r, W·B_encode / B_link, W·B_decode / B_link)      (W = codec worker threads)
// is above 1, with hysteresis (start above 1.15, stop below 1.0). Until the link has been
// measured it sends raw (which measures it); then it compresses `warmup` messages to measure
// the codec. While bypassing it still compresses one message in `probe_every` to keep its
// estimates fresh. A pure state machine:
// no clocks, no I/O; the engine feeds it measurements.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>

#include "compress/codec.h"

namespace squeeze::plugin {

class PaysController {
 public:
  struct Config {
    bool enabled = true;       // false: compress whenever the policy says so
    int workers = 1;
    double start_above = 1.15;
    double stop_below = 1.0;
    uint32_t warmup = 4;       // codec samples before the first judgement
    uint32_t probe_every = 32;
  };
  explicit PaysController(Config c) : cfg_(c) {}

  // True: compress this message. False: send it raw (a bypass).
  bool should_compress(compress::CodecId codec);

  void record_encode(compress::CodecId codec, uint64_t bytes_in, uint64_t bytes_out, double seconds);
  void record_decode(compress::CodecId codec, uint64_t bytes_out, double seconds);
  void record_link(uint64_t wire_bytes, double busy_seconds);
  // A rate sample; a lower bound (the sender did not fill the link) only ever raises the estimate.
  void record_link_rate(double bytes_per_s, bool lower_bound);

  struct View {
    double encode_Bps, decode_Bps, ratio, link_Bps, speedup;
    bool compressing;
    uint64_t samples;
  };
  View view(compress::CodecId codec) const;

 private:
  struct CodecState {
    double enc = 0, dec = 0, ratio = 0;  // EWMAs: bytes/s, bytes/s, in/out
    uint64_t samples = 0, dec_samples = 0;
    bool compressing = true;
    uint32_t since_probe = 0;
  };
  double speedup_locked(const CodecState& s) const;
  Config cfg_;
  mutable std::mutex mu_;
  std::array<CodecState, 8> codecs_{};
  double link_ = 0;  // bytes/s EWMA
  uint64_t link_samples_ = 0;
};

}  // namespace squeeze::plugin
