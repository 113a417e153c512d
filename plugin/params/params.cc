#include "plugin/params/params.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace squeeze::params {
namespace {

bool is_squeeze_name(const char* name) { return std::string_view(name).starts_with("SQUEEZE_"); }

std::string quoted(const char* name, const char* raw) {
  return std::string(name) + "='" + raw + "'";
}

std::string range_text(const Spec& s) {
  auto num = [](double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
    return std::to_string(v);
  };
  std::string out = "[";
  out += num(s.lo);
  out += ", ";
  out += num(s.hi);
  out += "]";
  return out;
}

std::string choices_text(const Spec& s) {
  std::string out;
  for (char c : std::string_view(s.choices))
    out += c == '|' ? std::string(", ") : std::string(1, c);
  return out;
}

bool parse_bool(const char* raw, bool* out) {
  for (const char* t : {"1", "on", "true", "yes"})
    if (strcasecmp(raw, t) == 0) return *out = true, true;
  for (const char* f : {"0", "off", "false", "no"})
    if (strcasecmp(raw, f) == 0) return *out = false, true;
  return false;
}

// The choice of s that raw names (any case), or nullptr.
bool find_choice(const Spec& s, const char* raw, std::string* out) {
  std::string_view all(s.choices);
  while (!all.empty()) {
    const std::size_t bar = all.find('|');
    const std::string_view c = all.substr(0, bar);
    if (c.size() == std::string_view(raw).size() && strncasecmp(c.data(), raw, c.size()) == 0) {
      *out = std::string(c);
      return true;
    }
    if (bar == std::string_view::npos) break;
    all.remove_prefix(bar + 1);
  }
  return false;
}

Value default_value(const Spec& s) {
  Value v;
  if (*s.value == '\0') return v;
  std::string problem = parse_value(s, s.name, s.value, &v);
  v.set = false;  // a default is not a setting
  v.from = "";
  return v;
}

}  // namespace

std::string parse_value(const Spec& s, const char* name, const char* raw, Value* out) {
  Value v;
  v.from = name;
  v.text = raw;
  switch (s.type) {
    case Type::kInt: {
      errno = 0;
      char* end = nullptr;
      const long long x = std::strtoll(raw, &end, 10);
      if (end == raw || *end != '\0' || errno == ERANGE)
        return quoted(name, raw) + " is not a whole number (expected one in " + range_text(s) + ")";
      if (static_cast<double>(x) < s.lo || static_cast<double>(x) > s.hi)
        return quoted(name, raw) + " is outside " + range_text(s);
      v.integer = x;
      v.number = static_cast<double>(x);
      break;
    }
    case Type::kNumber: {
      errno = 0;
      char* end = nullptr;
      const double x = std::strtod(raw, &end);
      if (end == raw || *end != '\0' || errno == ERANGE || !std::isfinite(x))
        return quoted(name, raw) + " is not a number (expected one in " + range_text(s) + ")";
      if (x < s.lo || x > s.hi) return quoted(name, raw) + " is outside " + range_text(s);
      v.number = x;
      break;
    }
    case Type::kBool: {
      bool b = false;
      if (!parse_bool(raw, &b))
        return quoted(name, raw) + " is not a switch (expected 0/1, off/on, false/true or no/yes)";
      v.integer = b ? 1 : 0;
      break;
    }
    case Type::kChoice:
      if (!find_choice(s, raw, &v.text))
        return quoted(name, raw) + " is not one of " + choices_text(s);
      break;
    case Type::kText: break;
  }
  v.set = true;
  *out = std::move(v);
  return "";
}

void Settings::read_entry(const Spec& s, const Lookup& lookup) {
  Value& slot = values_[index(s.id)];
  defaults_[index(s.id)] = default_value(s);
  slot = defaults_[index(s.id)];
  std::array<const char*, 5> names{s.name};
  for (std::size_t i = 0; i < s.fallbacks.size(); ++i) names[i + 1] = s.fallbacks[i];
  for (const char* name : names) {
    if (name == nullptr) continue;
    const char* raw = lookup(name);
    if (raw == nullptr || *raw == '\0') continue;
    Value v;
    std::string problem = parse_value(s, name, raw, &v);
    if (problem.empty()) {
      if (s.deprecated != nullptr && std::string_view(name) == s.deprecated)
        warnings_.push_back(std::string(name) + " is deprecated; set " + s.name + " instead");
      slot = std::move(v);
      return;
    }
    if (is_squeeze_name(name)) {
      errors_.push_back(std::move(problem));
      return;  // the default stays, but the plugin will not start
    }
    warnings_.push_back(problem + "; ignored");
  }
}

Settings Settings::from(const Lookup& lookup) {
  Settings st;
  for (const Spec& s : kSpecs) st.read_entry(s, lookup);
  return st;
}

Settings Settings::from_env() {
  return from([](const char* name) -> const char* { return std::getenv(name); });
}

Value Settings::read_env(Id id, std::string* problem) {
  Settings st;
  st.read_entry(spec(id), [](const char* name) -> const char* { return std::getenv(name); });
  if (problem != nullptr) {
    problem->clear();
    if (!st.errors_.empty())
      *problem = st.errors_.front();
    else if (!st.warnings_.empty())
      *problem = st.warnings_.front();
  }
  return st.values_[index(id)];
}

int64_t Settings::integer(Id id) const {
  const Spec& s = spec(id);
  if (s.type != Type::kInt && s.type != Type::kBool) return 0;
  return values_[index(id)].integer;
}

int Settings::integer_or(Id id, int fallback) const {
  return is_set(id) ? static_cast<int>(integer(id)) : fallback;
}

double Settings::number(Id id) const {
  const Spec& s = spec(id);
  if (s.type != Type::kNumber && s.type != Type::kInt) return 0;
  return values_[index(id)].number;
}

bool Settings::flag(Id id) const { return integer(id) != 0; }

const std::string& Settings::text(Id id) const { return values_[index(id)].text; }

std::string Settings::set(Id id, const char* raw) {
  const Spec& s = spec(id);
  Value v;
  if (std::string problem = parse_value(s, s.name, raw, &v); !problem.empty()) return problem;
  values_[index(id)] = std::move(v);
  return "";
}

std::vector<std::string> unread_variables(const char* const* env, std::string_view prefix) {
  std::vector<std::string> out;
  for (; env != nullptr && *env != nullptr; ++env) {
    const std::string_view entry(*env);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (!name.starts_with(prefix)) continue;
    bool read = false;
    for (const Spec& s : kSpecs) {
      read = read || name == s.name;
      for (const char* f : s.fallbacks) read = read || (f != nullptr && name == f);
    }
    if (!read) out.emplace_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> unread_env_variables(std::string_view prefix) {
  return unread_variables(environ, prefix);
}

std::string markdown_table() {
  std::string out = "| Variable | Default | Meaning |\n|---|---|---|\n";
  for (const Spec& s : kSpecs) {
    std::string names = std::string("`") + s.name + "`";
    for (const char* f : s.fallbacks) {
      if (f == nullptr) continue;
      names += std::string(", then `") + f + "`";
      if (s.deprecated != nullptr && std::string_view(f) == s.deprecated) names += " (deprecated)";
    }
    std::string meaning = s.meaning;
    switch (s.type) {
      case Type::kInt:
      case Type::kNumber: meaning += " Range " + range_text(s) + "."; break;
      case Type::kChoice: meaning += " One of " + choices_text(s) + "."; break;
      case Type::kBool:
      case Type::kText: break;
    }
    if (s.scope == Scope::kTools &&
        std::string_view(s.meaning).find("only") == std::string_view::npos)
      meaning = "Perf tools only. " + meaning;
    out += "| " + names + " | " + s.shown + " | " + meaning + " |\n";
  }
  return out;
}

}  // namespace squeeze::params
