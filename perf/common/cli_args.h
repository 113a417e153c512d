// The one command-line parser of the perf tools. Each tool declares its options once (names,
// value kind, help, bounds or choices); the parser reads argv the same way everywhere and
// writes --help from the declarations, with every choice list and default.
//
// Syntax: long options `--name VALUE` or `--name=VALUE`, short ones `-x VALUE` or `-xVALUE`;
// flags take no value, or 0 or 1 (`--flag 1`, `-c 0`, `--flag=0`). Sizes take K/M/G suffixes,
// binary (1M = 2^20 bytes). A bad command line is one line on stderr naming the option, the value
// and what is accepted, and exit code 2; only --help prints the usage (on stdout, exit 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace squeeze::perf {

// "4096", "64K", "1M", "1MiB", "2G", "1.5K", "512B" (also k/m/g): a whole number of bytes.
// False for anything else, negative, not whole, or beyond 2^50 bytes.
bool parse_bytes(const std::string& s, std::size_t* out);
// The shortest way to write `bytes` that parse_bytes reads back: "16M", "512K", "1000".
std::string format_bytes(std::size_t bytes);

// A decimal integer in [lo, hi]; nullopt when `v` is anything else.
std::optional<long long> parse_long_in(const std::string& v, long long lo, long long hi);

// The data set names of perf/common/traffic_gen.h, comma-separated, for help and errors.
std::string data_set_names();
// True when `name` is a data set; else false with *known = data_set_names().
bool known_data_set(const std::string& name, std::string* known);

class CliParser {
 public:
  // `program` starts every error line; `about` is the text under the usage line of --help.
  CliParser(std::string program, std::string about);

  // A heading in --help for the options declared after it.
  CliParser& section(const std::string& title);

  // `names`: the option's spellings, comma-separated, e.g. "-b,--minbytes,--min"; the first
  // long one names it in errors. The default shown in --help is the bound variable's value
  // at declaration (override with default_text()).
  CliParser& flag(const std::string& names, bool* out, const std::string& help);
  CliParser& text(const std::string& names, std::string* out, const std::string& metavar,
                  const std::string& help);
  CliParser& bytes(const std::string& names, std::size_t* out, const std::string& help);
  // A decimal integer in [lo, hi].
  template <typename T>
  requires std::is_integral_v<T> CliParser& integer(const std::string& names, T* out, long long lo,
                                                    long long hi, const std::string& help) {
    return integer_impl(names, lo, hi, help, std::to_string(*out),
                        [out](long long v) { *out = static_cast<T>(v); });
  }
  CliParser& number(const std::string& names, double* out, double lo, double hi,
                    const std::string& help);
  // One of `choices`; *out gets the choice as written.
  CliParser& choice(const std::string& names, std::string* out,
                    const std::vector<std::string>& choices, const std::string& help);
  // Anything else: `apply` checks and stores the value and returns "" when it accepts it,
  // else what is accepted ("a comma list of device numbers"); `accepted` says it when the
  // value is missing.
  CliParser& custom(const std::string& names, const std::string& metavar,
                    const std::string& accepted, const std::string& help,
                    std::function<std::string(const std::string&)> apply);

  // Modifiers of the option declared last.
  CliParser& default_text(const std::string& text);  // "" shows no default
  CliParser& metavar(const std::string& name);       // the value's name in --help ("R")
  CliParser& hidden();                               // parsed, but not listed in --help

  struct Outcome {
    enum class Status { kOk, kHelp, kError } status = Status::kOk;
    std::string error;  // kError: the one line, without the program name
  };
  // Parses args (argv without argv[0]). Does not exit; --help is kHelp.
  Outcome parse(const std::vector<std::string>& args);
  // parse() on argv: --help prints usage() on stdout and exits 0; an error exits via fail().
  void parse_or_exit(int argc, char** argv);
  // "<program>: <message>" on stderr, exit 2. For checks that involve several options.
  [[noreturn]] void fail(const std::string& message) const;

  std::string usage() const;
  // Whether any spelling of the option named `name` (any of its names) was given.
  bool given(const std::string& name) const;

  // Each option as given, in order: its first long name and the argv tokens it took.
  struct Given {
    std::string option;
    std::vector<std::string> tokens;
  };
  const std::vector<Given>& given_options() const { return given_; }

 private:
  enum class Kind { kFlag, kValue };
  struct Option {
    std::vector<std::string> names;
    std::string id;  // the first long name (or the first name)
    Kind kind = Kind::kValue;
    std::string metavar, help, dflt, section;
    std::string accepted;  // for "needs a value"
    std::string choices;   // choice(): "a, b, c" for --help
    bool hidden = false;
    std::function<std::string(const std::string&)> apply;  // kValue: "" or what is accepted
    bool* flag = nullptr;
  };
  CliParser& integer_impl(const std::string& names, long long lo, long long hi,
                          const std::string& help, const std::string& dflt,
                          std::function<void(long long)> store);
  CliParser& add(const std::string& names, Kind kind, const std::string& metavar,
                 const std::string& help, std::function<std::string(const std::string&)> apply,
                 std::string dflt, std::string accepted);
  const Option* find(const std::string& name) const;
  std::string suggest(const std::string& name) const;

  std::string program_, about_, section_;
  std::vector<Option> options_;
  std::vector<Given> given_;
};

}  // namespace squeeze::perf
