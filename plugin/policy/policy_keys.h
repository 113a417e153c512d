// Every key a policy file may use, by the object it appears in. The parser rejects any other
// key, and a unit test checks that config/policy.schema.json lists exactly these, so the
// schema, the README and the parser cannot drift apart.
#pragma once

#include <array>
#include <string_view>

namespace squeeze::policy::keys {

inline constexpr std::array<std::string_view, 6> kTop = {"$schema", "description", "version",
                                                         "tuner",   "rules",       "default"};
// A rule is a name, a description, a match, and the keys of an action.
inline constexpr std::array<std::string_view, 3> kRuleOnly = {"name", "description", "match"};
inline constexpr std::array<std::string_view, 17> kAction = {
    "codec",         "checksum",    "fallback",    "assume_dtype",   "error_bound", "row_length",
    "dedupe_rows",   "rice_codes",  "eb_schedule", "streams",        "consistency", "keep",
    "refresh_every", "sample_size", "value_dtype", "error_feedback", "to"};
inline constexpr std::array<std::string_view, 8> kMatch = {
    "collective", "dtype", "proto", "algo", "min_bytes", "max_bytes", "nranks", "comm"};
inline constexpr std::array<std::string_view, 2> kErrorBound = {"mode", "value"};
inline constexpr std::array<std::string_view, 3> kEbSchedule = {"kind", "start", "messages"};
inline constexpr std::array<std::string_view, 2> kStream = {"count", "multiplier"};
inline constexpr std::array<std::string_view, 2> kNranksRange = {"min", "max"};

inline constexpr std::array<std::string_view, 5> kCodecs = {"raw", "quantize", "threshold",
                                                            "lossless", "cast"};

}  // namespace squeeze::policy::keys
