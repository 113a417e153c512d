// The policy used when SQUEEZE_POLICY is unset. It must equal config/default.json byte for
// byte (a unit test checks it): users read that file to learn what runs by default.
#include "plugin/policy/policy_load.h"

namespace squeeze::policy {

std::string_view default_policy_text() {
  static constexpr char kText[] = R"json({
  "$schema": "policy.schema.json",
  "description": "Built-in default, used when SQUEEZE_POLICY is unset: bit-exact only. Lossless coding of large SIMPLE messages of every collective; nothing lossy, so no result changes; NCCL's algorithm choice is left alone.",
  "version": 1,
  "tuner": false,
  "rules": [
    {
      "name": "large-lossless",
      "match": { "min_bytes": 65536 },
      "codec": "lossless"
    }
  ],
  "default": { "codec": "raw" }
}
)json";
  return {kText, sizeof(kText) - 1};
}

}  // namespace squeeze::policy
