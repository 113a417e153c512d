// Plain-language descriptions of policies and decisions, for the squeeze-policy CLI and for
// the plugin's INFO log.
#pragma once

#include <string>

#include "plugin/policy/policy.h"

namespace squeeze::policy {

std::string describe_match(const Match& m);    // "alltoall; dtype float32|bfloat16; >= 64 KiB"
std::string describe_action(const Action& a);  // "quantize, error bound rel 0.01, rows of 128"
// One or more lines: what `squeeze-policy check` prints for a valid policy.
std::string describe_policy(const Policy& p);
std::string describe_meta(const MessageMeta& m);
// What happens to the message and which rule made it so.
std::string describe_decision(const Policy& p, const Decision& d);
std::string format_bytes(uint64_t b);  // "64 KiB", "1.5 MiB", "100 B"

}  // namespace squeeze::policy
