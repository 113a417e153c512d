// Parsing and validation of an action: the codec of a rule (or of the default) and its
// parameters. A parameter given for a codec that does not use it is an error, so a typo in
// "codec" cannot silently turn a tuned rule into something else.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "plugin/policy/names.h"
#include "plugin/policy/policy_keys.h"
#include "plugin/policy/policy_parser.h"

namespace squeeze::policy {
namespace {

using compress::CodecId;

// Which codecs use a key: the bits are 1 << CodecId; kRawBit stands for "raw".
constexpr unsigned kRawBit = 1u << 7;
constexpr unsigned bit(CodecId c) { return 1u << static_cast<unsigned>(c); }
constexpr unsigned kLossy =
    bit(CodecId::kQuantize) | bit(CodecId::kThreshold) | bit(CodecId::kCast);
constexpr unsigned kCompressed = kLossy | bit(CodecId::kLossless);

struct KeyUse {
  std::string_view key;
  unsigned codecs;
  const char* who;  // for the error message
};
constexpr std::array<KeyUse, 16> kKeyUses = {{
    {"checksum", kCompressed, "compressing codecs (quantize, threshold, cast, lossless)"},
    {"fallback", kLossy, "lossy codecs (quantize, threshold, cast)"},
    {"consistency", kLossy, "lossy codecs (quantize, threshold, cast)"},
    {"assume_dtype", kCompressed | kRawBit, ""},
    {"error_bound", bit(CodecId::kQuantize), "codec \"quantize\""},
    {"row_length", bit(CodecId::kQuantize), "codec \"quantize\""},
    {"dedupe_rows", bit(CodecId::kQuantize), "codec \"quantize\""},
    {"rice_codes", bit(CodecId::kQuantize), "codec \"quantize\""},
    {"eb_schedule", bit(CodecId::kQuantize), "codec \"quantize\""},
    {"streams", bit(CodecId::kQuantize), "codec \"quantize\""},
    {"keep", bit(CodecId::kThreshold), "codec \"threshold\""},
    {"refresh_every", bit(CodecId::kThreshold), "codec \"threshold\""},
    {"sample_size", bit(CodecId::kThreshold), "codec \"threshold\""},
    {"value_dtype", bit(CodecId::kThreshold), "codec \"threshold\""},
    {"error_feedback", bit(CodecId::kThreshold), "codec \"threshold\""},
    {"to", bit(CodecId::kCast), "codec \"cast\""},
}};

bool parse_float_dtype(std::string_view s, compress::Dtype* out) {
  if (s == "float32")
    *out = compress::Dtype::kFloat32;
  else if (s == "bfloat16")
    *out = compress::Dtype::kBfloat16;
  else if (s == "float16")
    *out = compress::Dtype::kFloat16;
  else
    return false;
  return true;
}

}  // namespace

void PolicyParser::parse_action(const Json& obj, const std::string& ptr, Action* a) {
  if (!obj.contains("codec")) {
    r_.fail(ptr + "/codec", "missing; use " + quoted_list(keys::kCodecs));
    return;
  }
  std::string codec;
  if (!r_.get_string(obj["codec"], ptr + "/codec", &codec)) return;
  unsigned codec_bit = kRawBit;
  if (codec == "raw") {
    a->raw = true;
  } else if (parse_codec_policy_name(codec, &a->params.codec)) {
    a->raw = false;
    codec_bit = bit(a->params.codec);
  } else {
    r_.fail(ptr + "/codec", "unknown codec \"" + codec + "\"; use " + quoted_list(keys::kCodecs));
    return;
  }
  for (const KeyUse& u : kKeyUses) {
    if (obj.contains(u.key) && (u.codecs & codec_bit) == 0) {
      r_.fail(pointer_child(ptr, u.key),
              std::string("applies to ") + u.who + ", not to codec \"" + codec + "\"");
    }
  }

  if (obj.contains("assume_dtype")) {
    std::string s;
    DataType d = DataType::kUnknown;
    if (r_.get_string(obj["assume_dtype"], ptr + "/assume_dtype", &s)) {
      if (!parse_dtype(s, &d) || d == DataType::kUnknown) {
        r_.fail(ptr + "/assume_dtype",
                "unknown dtype \"" + s + "\"; use a dtype name such as \"float32\"");
      } else {
        a->assume_dtype = d;
      }
    }
  }
  if (a->raw) return;

  if (obj.contains("checksum"))
    r_.get_bool(obj["checksum"], ptr + "/checksum", &a->params.checksum);
  if (obj.contains("fallback")) {
    std::string s;
    if (r_.get_string(obj["fallback"], ptr + "/fallback", &s)) {
      if (s == "raw")
        a->fallback = Fallback::kRaw;
      else if (s == "lossless")
        a->fallback = Fallback::kLossless;
      else
        r_.fail(ptr + "/fallback", "must be \"raw\" or \"lossless\", not \"" + s + "\"");
    }
  }
  if (obj.contains("consistency")) {
    std::string s;
    if (r_.get_string(obj["consistency"], ptr + "/consistency", &s)) {
      if (s == "bitwise")
        a->consistency = Consistency::kBitwise;
      else if (s == "relaxed")
        a->consistency = Consistency::kRelaxed;
      else
        r_.fail(ptr + "/consistency", "must be \"bitwise\" or \"relaxed\", not \"" + s + "\"");
    }
  }
  a->fallback_params = compress::CodecParams{};
  a->fallback_params.codec = CodecId::kLossless;
  a->fallback_params.checksum = a->params.checksum;

  switch (a->params.codec) {
    case CodecId::kQuantize: parse_quantize(obj, ptr, a); break;
    case CodecId::kThreshold: parse_threshold(obj, ptr, a); break;
    case CodecId::kCast: parse_cast(obj, ptr, a); break;
    default: break;
  }
}

void PolicyParser::parse_quantize(const Json& obj, const std::string& ptr, Action* a) {
  compress::QuantizeParams& q = a->params.quantize;
  const std::string eb_ptr = ptr + "/error_bound";
  if (!obj.contains("error_bound")) {
    r_.fail(eb_ptr,
            "missing; quantize needs {\"mode\": \"abs\" | \"rel\" | \"rel_row\", \"value\": x}");
  } else if (const Json& eb = obj["error_bound"]; r_.is_object(eb, eb_ptr)) {
    r_.only_keys(eb, eb_ptr, keys::kErrorBound);
    std::string mode;
    if (!eb.contains("mode")) {
      r_.fail(eb_ptr + "/mode", "missing; use \"abs\", \"rel\" or \"rel_row\"");
    } else if (r_.get_string(eb["mode"], eb_ptr + "/mode", &mode)) {
      if (mode == "abs")
        q.mode = compress::BoundMode::kAbs;
      else if (mode == "rel")
        q.mode = compress::BoundMode::kRel;
      else if (mode == "rel_row")
        q.mode = compress::BoundMode::kRelRow;
      else
        r_.fail(eb_ptr + "/mode", "must be \"abs\", \"rel\" or \"rel_row\", not \"" + mode + "\"");
    }
    double value = 0;
    if (!eb.contains("value")) {
      r_.fail(eb_ptr + "/value", "missing; the error bound, > 0");
    } else if (r_.get_number(eb["value"], eb_ptr + "/value", &value)) {
      if (!(value > 0)) {
        r_.fail(eb_ptr + "/value", "must be > 0, not " + eb["value"].dump());
      } else if (q.mode != compress::BoundMode::kAbs && value > 1) {
        r_.fail(eb_ptr + "/value",
                "a relative bound must be at most 1 (it is a fraction of the value range), not " +
                    eb["value"].dump());
      }
      q.error_bound = value;
    }
  }
  uint64_t x = 0;
  if (obj.contains("row_length") &&
      r_.get_uint(obj["row_length"], ptr + "/row_length", 0, UINT32_MAX, &x)) {
    q.row_length = static_cast<uint32_t>(x);
  }
  if (obj.contains("dedupe_rows") &&
      r_.get_bool(obj["dedupe_rows"], ptr + "/dedupe_rows", &q.dedupe_rows) && q.dedupe_rows &&
      q.row_length == 0) {
    r_.fail(ptr + "/dedupe_rows", "needs row_length > 0 (rows are what is deduplicated)");
  }
  if (obj.contains("rice_codes"))
    r_.get_bool(obj["rice_codes"], ptr + "/rice_codes", &q.rice_codes);
  if (q.mode == compress::BoundMode::kRelRow && q.row_length == 0 && obj.contains("error_bound")) {
    r_.fail(eb_ptr + "/mode", "\"rel_row\" needs row_length > 0");
  }
  if (obj.contains("eb_schedule"))
    parse_schedule(obj["eb_schedule"], ptr + "/eb_schedule", &a->schedule);
  if (obj.contains("streams")) parse_streams(obj["streams"], ptr + "/streams", &a->streams);
}

void PolicyParser::parse_threshold(const Json& obj, const std::string& ptr, Action* a) {
  compress::ThresholdParams& t = a->params.threshold;
  double keep = 0;
  if (!obj.contains("keep")) {
    r_.fail(ptr + "/keep", "missing; the fraction of elements kept, in (0, 1]");
  } else if (r_.get_number(obj["keep"], ptr + "/keep", &keep)) {
    if (!(keep > 0 && keep <= 1))
      r_.fail(ptr + "/keep", "must be in (0, 1], not " + obj["keep"].dump());
    t.keep = keep;
  }
  uint64_t x = 0;
  if (obj.contains("refresh_every") &&
      r_.get_uint(obj["refresh_every"], ptr + "/refresh_every", 1, UINT32_MAX, &x)) {
    t.refresh_every = static_cast<uint32_t>(x);
  }
  if (obj.contains("sample_size") &&
      r_.get_uint(obj["sample_size"], ptr + "/sample_size", 1, UINT32_MAX, &x)) {
    t.sample_size = static_cast<uint32_t>(x);
  }
  if (obj.contains("value_dtype")) {
    std::string s;
    if (r_.get_string(obj["value_dtype"], ptr + "/value_dtype", &s) &&
        !parse_float_dtype(s, &t.value_dtype)) {
      r_.fail(ptr + "/value_dtype",
              "must be \"float32\", \"bfloat16\" or \"float16\", not \"" + s + "\"");
    }
  }
  if (obj.contains("error_feedback"))
    r_.get_bool(obj["error_feedback"], ptr + "/error_feedback", &t.error_feedback);
}

void PolicyParser::parse_cast(const Json& obj, const std::string& ptr, Action* a) {
  a->params.cast.to = compress::Dtype::kBfloat16;
  if (!obj.contains("to")) return;
  std::string s;
  if (!r_.get_string(obj["to"], ptr + "/to", &s)) return;
  compress::Dtype d{};
  if (!parse_float_dtype(s, &d) || d == compress::Dtype::kFloat32) {
    r_.fail(ptr + "/to", "must be \"bfloat16\" or \"float16\", not \"" + s + "\"");
    return;
  }
  a->params.cast.to = d;
}

void PolicyParser::parse_schedule(const Json& v, const std::string& ptr, EbSchedule* s) {
  if (!r_.is_object(v, ptr)) return;
  r_.only_keys(v, ptr, keys::kEbSchedule);
  std::string kind;
  if (!v.contains("kind")) {
    r_.fail(ptr + "/kind", "missing; use \"step\", \"linear\" or \"log\"");
  } else if (r_.get_string(v["kind"], ptr + "/kind", &kind)) {
    if (kind == "step")
      s->kind = EbSchedule::Kind::kStep;
    else if (kind == "linear")
      s->kind = EbSchedule::Kind::kLinear;
    else if (kind == "log")
      s->kind = EbSchedule::Kind::kLog;
    else
      r_.fail(ptr + "/kind", "must be \"step\", \"linear\" or \"log\", not \"" + kind + "\"");
  }
  if (!v.contains("start")) {
    r_.fail(ptr + "/start", "missing; the multiplier of the error bound at the first message, > 0");
  } else if (r_.get_number(v["start"], ptr + "/start", &s->start) && !(s->start > 0)) {
    r_.fail(ptr + "/start", "must be > 0, not " + v["start"].dump());
  }
  if (!v.contains("messages")) {
    r_.fail(ptr + "/messages",
            "missing; the number of messages over which the multiplier reaches 1");
  } else {
    r_.get_uint(v["messages"], ptr + "/messages", 1, UINT64_MAX, &s->messages);
  }
}

void PolicyParser::parse_streams(const Json& v, const std::string& ptr,
                                 std::vector<StreamBound>* out) {
  if (!v.is_array()) {
    r_.fail(ptr, "must be an array of {\"count\": n, \"multiplier\": m}, not " + json_type_name(v));
    return;
  }
  std::set<uint64_t> seen;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = pointer_child(ptr, i);
    if (!r_.is_object(v[i], p)) continue;
    r_.only_keys(v[i], p, keys::kStream);
    StreamBound s;
    if (!v[i].contains("count")) {
      r_.fail(p + "/count", "missing; the element count of the call that identifies the stream");
    } else if (r_.get_uint(v[i]["count"], p + "/count", 1, UINT64_MAX, &s.count) &&
               !seen.insert(s.count).second) {
      r_.fail(p + "/count", "duplicate stream count " + std::to_string(s.count));
    }
    if (!v[i].contains("multiplier")) {
      r_.fail(p + "/multiplier", "missing; the factor applied to the error bound, > 0");
    } else if (r_.get_number(v[i]["multiplier"], p + "/multiplier", &s.multiplier) &&
               !(s.multiplier > 0)) {
      r_.fail(p + "/multiplier", "must be > 0, not " + v[i]["multiplier"].dump());
    }
    out->push_back(s);
  }
}

}  // namespace squeeze::policy
