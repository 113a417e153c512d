#include "perf/common/cli_args.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "perf/common/traffic_gen.h"

namespace squeeze::perf {
namespace {

constexpr std::size_t kHelpColumn = 27;  // where an option's help starts in --help
constexpr std::size_t kHelpWidth = 100;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// "a, b or c"
std::string one_of(const std::vector<std::string>& v) {
  if (v.size() < 2) return join(v, "");
  return join(std::vector<std::string>(v.begin(), v.end() - 1), ", ") + " or " + v.back();
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Words of `text` wrapped to kHelpWidth, every line but the first indented to kHelpColumn.
std::string wrap(const std::string& text) {
  std::string out, line;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    if (!line.empty() && kHelpColumn + line.size() + 1 + word.size() > kHelpWidth) {
      out += line + "\n" + std::string(kHelpColumn, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

const char* kSizeAccepted =
    "a size in bytes such as 4096, 64K, 1M or 2G (K, M, G: 2^10, 2^20, 2^30)";

}  // namespace

bool parse_bytes(const std::string& s, std::size_t* out) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.')) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end == s.c_str() || !(v >= 0)) return false;
  const std::string unit = end;
  double m = 1;
  if (unit == "K" || unit == "k" || unit == "KiB")
    m = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "MiB")
    m = 1048576.0;
  else if (unit == "G" || unit == "g" || unit == "GiB")
    m = 1073741824.0;
  else if (!unit.empty() && unit != "B")
    return false;
  const double bytes = v * m;
  if (bytes > std::ldexp(1.0, 50) || bytes != std::floor(bytes)) return false;
  *out = static_cast<std::size_t>(bytes);
  return true;
}

std::string format_bytes(std::size_t bytes) {
  const char* units[] = {"G", "M", "K"};
  for (int i = 0; i < 3; ++i) {
    const std::size_t unit = std::size_t{1} << (10 * (3 - i));
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + units[i];
  }
  return std::to_string(bytes);
}

std::optional<long long> parse_long_in(const std::string& v, long long lo, long long hi) {
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > hi) return std::nullopt;
  return x;
}

std::string data_set_names() { return join(traffic_names(), ", "); }

bool known_data_set(const std::string& name, std::string* known) {
  *known = data_set_names();
  const auto& names = traffic_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

CliParser::CliParser(std::string program, std::string about)
    : program_(std::move(program)), about_(std::move(about)) {}

CliParser& CliParser::section(const std::string& title) {
  section_ = title;
  return *this;
}

CliParser& CliParser::add(const std::string& names, Kind kind, const std::string& metavar,
                          const std::string& help,
                          std::function<std::string(const std::string&)> apply, std::string dflt,
                          std::string accepted) {
  Option o;
  o.names = split(names, ',');
  for (const auto& n : o.names)
    if (o.id.empty() && n.rfind("--", 0) == 0) o.id = n;
  if (o.id.empty() && !o.names.empty()) o.id = o.names[0];
  o.kind = kind;
  o.metavar = metavar;
  o.help = help;
  o.apply = std::move(apply);
  o.dflt = std::move(dflt);
  o.accepted = accepted.empty() ? metavar : std::move(accepted);
  o.section = section_;
  options_.push_back(std::move(o));
  return *this;
}

CliParser& CliParser::flag(const std::string& names, bool* out, const std::string& help) {
  add(names, Kind::kFlag, "", help, nullptr, "", "");
  options_.back().flag = out;
  return *this;
}

CliParser& CliParser::text(const std::string& names, std::string* out, const std::string& metavar,
                           const std::string& help) {
  return add(
      names, Kind::kValue, metavar, help,
      [out](const std::string& v) {
        *out = v;
        return std::string();
      },
      *out, metavar);
}

CliParser& CliParser::bytes(const std::string& names, std::size_t* out, const std::string& help) {
  return add(
      names, Kind::kValue, "BYTES", help,
      [out](const std::string& v) {
        std::size_t b = 0;
        if (!parse_bytes(v, &b)) return std::string(kSizeAccepted);
        *out = b;
        return std::string();
      },
      format_bytes(*out), kSizeAccepted);
}

CliParser& CliParser::integer_impl(const std::string& names, long long lo, long long hi,
                                   const std::string& help, const std::string& dflt,
                                   std::function<void(long long)> store) {
  return add(
      names, Kind::kValue, "N", help,
      [lo, hi, store](const std::string& v) {
        const std::optional<long long> x = parse_long_in(v, lo, hi);
        if (!x) return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
        store(*x);
        return std::string();
      },
      dflt, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
}

CliParser& CliParser::number(const std::string& names, double* out, double lo, double hi,
                             const std::string& help) {
  char d[32];
  std::snprintf(d, sizeof d, "%g", *out);
  return add(
      names, Kind::kValue, "X", help,
      [out, lo, hi](const std::string& v) {
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(x >= lo && x <= hi)) {
          char what[96];
          std::snprintf(what, sizeof what, "a number from %g to %g", lo, hi);
          return std::string(what);
        }
        *out = x;
        return std::string();
      },
      d, "a number");
}

CliParser& CliParser::choice(const std::string& names, std::string* out,
                             const std::vector<std::string>& choices, const std::string& help) {
  add(
      names, Kind::kValue, "", help,
      [out, choices](const std::string& v) {
        if (std::find(choices.begin(), choices.end(), v) == choices.end())
          return "one of " + one_of(choices);
        *out = v;
        return std::string();
      },
      *out, "one of " + one_of(choices));
  options_.back().metavar = join(choices, "|");
  if (options_.back().metavar.size() > 24) options_.back().metavar = "NAME";
  options_.back().choices = join(choices, ", ");
  return *this;
}

CliParser& CliParser::custom(const std::string& names, const std::string& metavar,
                             const std::string& accepted, const std::string& help,
                             std::function<std::string(const std::string&)> apply) {
  return add(names, Kind::kValue, metavar, help, std::move(apply), "", accepted);
}

CliParser& CliParser::default_text(const std::string& text) {
  options_.back().dflt = text;
  return *this;
}

CliParser& CliParser::metavar(const std::string& name) {
  options_.back().metavar = name;
  return *this;
}

CliParser& CliParser::hidden() {
  options_.back().hidden = true;
  return *this;
}

const CliParser::Option* CliParser::find(const std::string& name) const {
  for (const Option& o : options_)
    if (std::find(o.names.begin(), o.names.end(), name) != o.names.end()) return &o;
  return nullptr;
}

std::string CliParser::suggest(const std::string& name) const {
  std::string best;
  std::size_t best_d = 3;  // suggest only close spellings
  for (const Option& o : options_) {
    if (o.hidden) continue;
    for (const std::string& n : o.names) {
      const std::size_t d = edit_distance(name, n);
      if (n.size() > 2 && d < best_d) best_d = d, best = n;
    }
  }
  return best;
}

bool CliParser::given(const std::string& name) const {
  const Option* o = find(name);
  if (o == nullptr) return false;
  for (const Given& g : given_)
    if (g.option == o->id) return true;
  return false;
}

CliParser::Outcome CliParser::parse(const std::vector<std::string>& args) {
  given_.clear();
  auto error = [](std::string what) { return Outcome{Outcome::Status::kError, std::move(what)}; };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") return Outcome{Outcome::Status::kHelp, ""};
    if (a.size() < 2 || a[0] != '-')
      return error("unexpected argument '" + a + "' (options start with - or --)");
    // Split "--name=value" and "-xvalue".
    std::string name = a, inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0) {
      const std::size_t eq = a.find('=');
      if (eq != std::string::npos)
        name = a.substr(0, eq), inline_value = a.substr(eq + 1), has_inline = true;
    } else if (a.size() > 2) {
      name = a.substr(0, 2), inline_value = a.substr(2), has_inline = true;
    }
    const Option* o = find(name);
    if (o == nullptr) {
      const std::string close = suggest(name);
      return error("unknown option '" + name + "'" +
                   (close.empty() ? "" : "; did you mean " + close + "?") +
                   " (--help lists the options)");
    }
    Given g{o->id, {a}};
    if (o->kind == Kind::kFlag) {
      // nccl-tests writes "-c 1": a flag may be followed by 0 or 1 (no tool takes arguments
      // that are not options, so the token cannot mean anything else).
      if (!has_inline && i + 1 < args.size() && (args[i + 1] == "0" || args[i + 1] == "1")) {
        inline_value = args[++i];
        g.tokens.push_back(inline_value);
        has_inline = true;
      }
      if (has_inline && inline_value != "0" && inline_value != "1")
        return error(name + " '" + inline_value + "': a flag takes no value, or 0 or 1");
      const bool value = !has_inline || inline_value == "1";
      *o->flag = value;
      given_.push_back(std::move(g));
      continue;
    }
    std::string value;
    if (has_inline) {
      value = inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
      g.tokens.push_back(value);
    } else {
      return error(name + " needs a value: " + o->accepted);
    }
    const std::string accepted = o->apply(value);
    if (!accepted.empty()) return error(name + " '" + value + "': expected " + accepted);
    given_.push_back(std::move(g));
  }
  return Outcome{};
}

void CliParser::parse_or_exit(int argc, char** argv) {
  const Outcome r = parse(std::vector<std::string>(argv + 1, argv + argc));
  if (r.status == Outcome::Status::kHelp) {
    std::fputs(usage().c_str(), stdout);
    std::exit(0);
  }
  if (r.status == Outcome::Status::kError) fail(r.error);
}

void CliParser::fail(const std::string& message) const {
  std::fprintf(stderr, "%s: %s\n", program_.c_str(), message.c_str());
  std::exit(2);
}

std::string CliParser::usage() const {
  std::string out = "usage: " + program_ + " [options]\n" + about_;
  if (!about_.empty() && about_.back() != '\n') out += "\n";
  std::string section = "\x01";
  for (const Option& o : options_) {
    if (o.hidden) continue;
    if (o.section != section) {
      section = o.section;
      out += "\n" + (section.empty() ? std::string("Options") : section) + ":\n";
    }
    std::string left = "  " + join(o.names, ", ");
    if (!o.metavar.empty()) left += " " + o.metavar;
    std::string help = o.help;
    if (!o.choices.empty())
      help += " (one of: " + o.choices + (o.dflt.empty() ? ")" : "; default " + o.dflt + ")");
    else if (!o.dflt.empty())
      help += " (default " + o.dflt + ")";
    if (left.size() + 1 > kHelpColumn)
      left += "\n" + std::string(kHelpColumn, ' ');
    else
      left += std::string(kHelpColumn - left.size(), ' ');
    out += left + wrap(help) + "\n";
  }
  out += "\n  -h, --help               this text\n";
  return out;
}

}  // namespace squeeze::perf
