// A compression policy: an ordered list of rules and a default. The first rule whose match
// accepts a message decides what happens to it. Parsing validates everything up front (see
// config/README.md for every field); decide() is then cheap: no allocation, no string
// comparison, only enum and integer tests on pre-resolved data.
#pragma once

#include <bitset>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compress/codec.h"
#include "plugin/policy/message_meta.h"

namespace squeeze::policy {

inline constexpr int kMaxRules = 256;

struct CommMatch {
  std::bitset<kMaxRules> rules;  // bit i: rule i's "comm" patterns accept this communicator
};

// Bit sets over the enums of message_meta.h.
using CollectiveSet = std::bitset<kNumCollectives>;
using DataTypeSet = std::bitset<kNumDataTypes>;
using ProtoSet = std::bitset<kNumProtos>;
using AlgoSet = std::bitset<kNumAlgos>;

struct Match {
  bool any_collective = true;
  CollectiveSet collectives;
  bool any_dtype = true;
  DataTypeSet dtypes;  // may include kUnknown
  bool any_proto = true;
  ProtoSet protos;
  bool any_algo = true;
  AlgoSet algos;  // an unknown algorithm never matches a constraint
  uint64_t min_bytes = 0;
  uint64_t max_bytes = std::numeric_limits<uint64_t>::max();
  bool any_nranks = true;
  int32_t nranks_min = 0;
  int32_t nranks_max = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> nranks_list;        // when non-empty, nranks must be one of these
  std::vector<std::string> comm_patterns;  // shell globs (fnmatch); empty = any communicator
};

// Error-bound schedule: the bound is multiplied by m(i) for the i-th message of a stream,
// moving from `start` at i = 0 to 1 at i = messages (step: start until then).
struct EbSchedule {
  enum class Kind : uint8_t { kNone, kStep, kLinear, kLog };
  Kind kind = Kind::kNone;
  double start = 1.0;
  uint64_t messages = 0;
};
double schedule_multiplier(const EbSchedule& s, uint64_t message_index);

// A per-stream multiplier of the error bound. A stream is identified by the element count of
// the call (per peer for all-to-all), which in practice names a tensor, e.g. one embedding table.
struct StreamBound {
  uint64_t count = 0;
  double multiplier = 1.0;
};

// All-reduce consistency: kBitwise keeps every rank's result bit-identical (lossy coding only
// on reduce-scatter hops, all-gather hops lossless or raw); kRelaxed lets every hop be lossy,
// so ranks may end with slightly different values.
enum class Consistency : uint8_t { kBitwise, kRelaxed };

// What to send when a lossy codec cannot apply (the dtype is not float32/bfloat16/float16).
enum class Fallback : uint8_t { kRaw, kLossless };

struct Action {
  bool raw = true;               // codec "raw": send as is, zero copy
  compress::CodecParams params;  // when !raw
  Fallback fallback = Fallback::kRaw;
  compress::CodecParams fallback_params;       // lossless with the same checksum setting
  DataType assume_dtype = DataType::kUnknown;  // used only when the dtype is unknown
  EbSchedule schedule;
  std::vector<StreamBound> streams;
  Consistency consistency = Consistency::kBitwise;
  bool lossy() const { return !raw && compress::is_lossy(params.codec); }
};

struct Rule {
  std::string name;
  std::string pointer;  // JSON pointer of the rule in its file, e.g. "/rules/1"
  Match match;
  Action action;
};

enum class RawReason : uint8_t {
  kNone = 0,  // not raw
  kPolicy,    // the rule (or the default) says raw
  kProtocol,  // LL/LL128 (or unknown protocol): never altered
  kDtype,     // a lossy codec cannot apply to this dtype and the fallback is raw
};
const char* raw_reason_name(RawReason r);

struct Decision {
  const compress::CodecParams* params = nullptr;          // nullptr = raw; points into the Policy
  compress::Dtype codec_dtype = compress::Dtype::kBytes;  // what to tell the codec
  DataType dtype = DataType::kUnknown;  // the dtype the decision assumed (assume_dtype applied)
  const Action* action = nullptr;       // the rule's (or default's) action; never nullptr
  int32_t rule = -1;                    // index of the matching rule; -1 = the default
  RawReason raw_reason = RawReason::kNone;
  bool lossy = false;
  double eb_multiplier = 1.0;  // per-stream multiplier (the schedule is the engine's)
  bool is_raw() const { return params == nullptr; }
};

class Policy {
 public:
  // Parses and validates a policy. On failure returns nullptr and fills *errors with one line
  // per problem: "policy <source>: <json-pointer>: <reason>".
  static std::shared_ptr<const Policy> parse(std::string_view text, std::string_view source,
                                             std::vector<std::string>* errors);

  Decision decide(const MessageMeta& m) const noexcept;
  CommMatch resolve_comm(std::string_view comm_name) const;
  // True when some dtype could make decide() compress a SIMPLE message with this metadata
  // (used by the tuner, which never learns the dtype). m.dtype is used when known.
  bool may_compress(const MessageMeta& m) const noexcept;

  const std::vector<Rule>& rules() const { return rules_; }
  const Action& default_action() const { return default_; }
  bool tuner_enabled() const { return tuner_; }
  const std::string& source() const { return source_; }
  // Stats slot of a decision: rules 0..n-1, the default n.
  int stats_slot(const Decision& d) const {
    return d.rule < 0 ? static_cast<int>(rules_.size()) : d.rule;
  }

 private:
  friend class PolicyParser;
  bool matches(const Rule& r, int32_t index, const MessageMeta& m,
               DataType effective) const noexcept;
  Decision apply(const Action& a, int32_t rule, const MessageMeta& m,
                 DataType effective) const noexcept;

  std::string source_;
  std::vector<Rule> rules_;
  Action default_;
  bool tuner_ = true;
};

}  // namespace squeeze::policy
