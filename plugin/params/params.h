// Reading the variables of param_table.h. A Settings object holds one validated value per
// table entry; it is built once from the environment (the plugin does so at its first init)
// or from a lookup function (tests), and then passed to whoever needs a setting.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/params/param_table.h"

namespace squeeze::params {

// Where values come from: returns the variable's value, or nullptr when it is unset.
using Lookup = std::function<const char*(const char* name)>;

// One entry's value after validation.
struct Value {
  bool set = false;       // a valid value was given (else the default applies)
  const char* from = "";  // the variable that supplied it (name or a fallback)
  std::string text;       // as given (kText, kChoice: the choice as the table spells it)
  int64_t integer = 0;    // kInt; kBool: 0 or 1
  double number = 0;      // kNumber
};

// Parses `raw` as the entry's type. Returns "" or what is wrong, in words that name the
// variable `name`, the value and what is accepted.
std::string parse_value(const Spec& s, const char* name, const char* raw, Value* out);

class Settings {
 public:
  // Every entry from the environment: the one place that calls getenv.
  static Settings from_env();
  // Every entry from `lookup` (tests, tools that fake an environment).
  static Settings from(const Lookup& lookup);
  // Only one entry, from the environment; its problems are in *problem ("" when none).
  // For code that runs before any Settings exists (the logger's static level).
  static Value read_env(Id id, std::string* problem);

  // Problems found while reading: errors (bad SQUEEZE_* values) stop the plugin; warnings
  // (bad NCCL_* or launcher values, skipped) are only logged.
  const std::vector<std::string>& errors() const { return errors_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  bool ok() const { return errors_.empty(); }

  bool is_set(Id id) const { return values_[index(id)].set; }
  const char* source(Id id) const { return values_[index(id)].from; }
  // The value, or the table's default when unset. Asking for the wrong type is a bug and
  // returns the type's zero value.
  int64_t integer(Id id) const;
  int integer_or(Id id, int fallback) const;  // the value when set, else `fallback`
  double number(Id id) const;
  bool flag(Id id) const;
  const std::string& text(Id id) const;  // kText and kChoice; "" when unset without default

  // Overrides one entry, as if the variable held `raw` (tests, tools with flags that mirror a
  // variable). Returns "" or the problem; on a problem the entry is unchanged.
  std::string set(Id id, const char* raw);

 private:
  static std::size_t index(Id id) { return static_cast<std::size_t>(id); }
  void read_entry(const Spec& s, const Lookup& lookup);
  std::vector<Value> values_ = std::vector<Value>(kNumParams);
  std::vector<Value> defaults_ = std::vector<Value>(kNumParams);
  std::vector<std::string> errors_, warnings_;
};

// The names in `env` (a NULL-terminated "NAME=value" array, as environ) that start with
// `prefix` and that no table entry reads, sorted: a fleet's NCCL_IB_* settings that apply to
// NCCL's own transport but not to Squeeze's.
std::vector<std::string> unread_variables(const char* const* env, std::string_view prefix);
// The same over this process's environment.
std::vector<std::string> unread_env_variables(std::string_view prefix);

// The README's variable table (markdown), generated from kSpecs.
std::string markdown_table();

}  // namespace squeeze::params
