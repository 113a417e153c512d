// Where the running policy comes from: the file SQUEEZE_POLICY names, or the built-in
// default (config/default.json, compiled in). An invalid policy is an error that must stop the
// plugin: never run a policy the user did not mean.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "plugin/policy/policy.h"

namespace squeeze::policy {

// The built-in default policy's text (identical to config/default.json).
std::string_view default_policy_text();

// Reads and validates the policy at `path`; nullptr or "" means the built-in default. On
// failure returns nullptr and sets *error to one line per problem, each
// "policy <file>: <json-pointer>: <reason>".
std::shared_ptr<const Policy> load_policy(const char* path, std::string* error);

}  // namespace squeeze::policy
