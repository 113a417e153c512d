// Decides, message by message, whether compressing pays on this link. It keeps moving
// averages of the codec's encode and decode speed and ratio (per codec; a speed starts as the
// best of the codec's first four runs, as cold runs read slow) and of the speed the link
// actually achieves, and compresses when the pipelined speedup
//     min(r, W / (B_link·(1/B_encode + s/B_decode)), W·B_decode / B_link)
// is above 1, with hysteresis (start above 1.5, stop below 1.0), capped by the share u of the
// time the link was busy while raw traffic had messages to move: 1 / ((1 - u) + u / speedup),
// for compressing shortens only the link's part (record_link_rate). W is the number of codec
// worker threads, and s the bytes this process receives per byte it sends (into host memory,
// over the messages the controller judges). In an all-to-all or a ring a rank receives as
// much as it sends (s ≈ 1), and when compressing pays for its sends it pays for its peers'
// sends too, so the same threads encode what it sends and decode what it receives: the
// codec's CPU time per byte is the sum of both. Received bytes count whether or not the peer
// compressed them, so every rank of a symmetric collective judges alike, and one rank's
// choice cannot talk the other out of its own. A rank that only sends has s = 0; the last
// term is then the peer's decoder. Until the link has been measured (link_warmup samples) it
// sends raw, which measures it; then it compresses to measure the codec, with at most `warmup`
// of those encodes outstanding (not yet reported) at a time, until `warmup` have reported.
// While bypassing it still compresses a probe now and then to keep its estimates fresh: after
// probe_every messages, then twice as long each time. A pure state machine: no clocks, no
// I/O; the engine feeds it measurements.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>

#include "compress/codec.h"

namespace squeeze::plugin {

class PaysController {
 public:
  struct Config {
    bool enabled = true;  // false: compress whenever the policy says so
    int workers = 1;
    // The model counts the codec threads' own time but not the CPU that the network stack and
    // the application take from them, so it flatters compression; a wrong start costs far
    // more (0.5x on loopback) than a missed marginal gain.
    double start_above = 1.5;
    double stop_below = 1.0;
    uint32_t warmup = 2;        // codec samples before the first judgement
    uint32_t probe_every = 32;  // the first probe interval of a bypass; it doubles per probe
    uint32_t probe_max = 1024;  // up to this
    // Link samples before the first judgement. TCP's each average 5 ms of busy time (a few
    // iterations of a small all-to-all at 1 Gbit/s), so one is a measurement.
    uint32_t link_warmup = 1;
  };
  explicit PaysController(Config c) : cfg_(c) {
    for (CodecState& s : codecs_) s.probe_interval = cfg_.probe_every;
  }

  struct View {
    double encode_Bps, decode_Bps, ratio, link_Bps, speedup;
    double decode_share;  // bytes received per byte sent (s above)
    double utilization;   // of the link while raw (< 0: not measured)
    bool compressing;
  };

  // True: compress this message. False: send it raw (a bypass). When this call switched the
  // codec between compressing and bypassing, *switched (if given) receives the estimates
  // that decided it, so the caller can log them.
  bool should_compress(compress::CodecId codec, std::optional<View>* switched = nullptr);

  void record_encode(compress::CodecId codec, uint64_t bytes_in, uint64_t bytes_out,
                     double seconds);
  void record_decode(compress::CodecId codec, uint64_t bytes_out, double seconds);
  // Traffic for the decode share s: a message the controller judged (raw or compressed), and a
  // message received into host memory (raw or a frame).
  void record_sent(uint64_t bytes);
  void record_received(uint64_t bytes);
  void record_link(uint64_t wire_bytes, double busy_seconds);
  // A rate sample. The estimate is the median of the last saturated samples. A lower bound (the
  // sender did not fill the link) counts only until the first saturated sample, and then only
  // to raise the estimate.
  // `utilization` (< 0: unknown) is the share of the time with messages to move that the link
  // was busy. Compressing shortens only that share (Amdahl), so the speedup is capped at
  // 1 / ((1 - u) + u / speedup), with u the average over samples taken while every codec sent
  // raw: under compression the link idles more by design, which says nothing of raw traffic.
  // On loopback the link (a kernel copy) keeps up with raw traffic: busy 50-90% of the time
  // it had messages to move, so compressing there gains at most 1 / (1 - u), not the ratio.
  void record_link_rate(double bytes_per_s, bool lower_bound, double utilization = -1);

  View view(compress::CodecId codec) const;

 private:
  struct CodecState {
    double enc = 0, dec = 0, ratio = 0;  // EWMAs: bytes/s, bytes/s, in/out
    uint64_t samples = 0, dec_samples = 0;
    bool compressing =
        false;  // until a judgement finds it pays (start_above): lossless at ratio 1.02 never does
    uint32_t since_probe = 0;
    uint32_t started = 0;  // encodes started while measuring the codec (samples: reported)
    uint32_t probe_interval =
        0;  // messages between probes in this bypass (probe_every at its start)
  };
  double speedup_locked(const CodecState& s) const;
  double decode_share_locked() const;
  View view_locked(const CodecState& s) const;
  // Counts a message sent raw; true (and the count restarts) when it is the `every`-th.
  static bool probe_due(CodecState& s, uint32_t every);
  Config cfg_;
  mutable std::mutex mu_;
  std::array<CodecState, 8> codecs_{};
  void add_saturated_locked(double bytes_per_s);
  static constexpr std::size_t kRecentLinkSamples = 9;
  double sent_ = 0, received_ = 0;  // bytes, halved together now and then (pays.cc)
  double link_ = 0;  // bytes/s: the median of recent_, or the best lower bound before any
  uint64_t link_samples_ = 0;
  double utilization_ = -1;  // EWMA over raw-time samples; < 0 until one
  uint64_t utilization_samples_ = 0;
  uint64_t n_saturated_ = 0;  // samples taken while the sender kept the link busy
  std::array<double, kRecentLinkSamples> recent_{};  // the last saturated samples, a ring
};

}  // namespace squeeze::plugin
