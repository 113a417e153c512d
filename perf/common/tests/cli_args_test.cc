// The perf tools' one option parser: what a user types is read the same way in every tool,
// a mistake is one line naming the option, the value and what is accepted, and --help lists
// every option with its choices and default.
#include "perf/common/cli_args.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace squeeze::perf {
namespace {

using Status = CliParser::Outcome::Status;

TEST(ParseBytes, SuffixesAreBinary) {
  std::size_t b = 0;
  ASSERT_TRUE(parse_bytes("1M", &b));
  EXPECT_EQ(b, 1u << 20);
  ASSERT_TRUE(parse_bytes("64K", &b));
  EXPECT_EQ(b, 64u << 10);
  ASSERT_TRUE(parse_bytes("2G", &b));
  EXPECT_EQ(b, std::size_t{2} << 30);
  ASSERT_TRUE(parse_bytes("1MiB", &b));
  EXPECT_EQ(b, 1u << 20);
  ASSERT_TRUE(parse_bytes("4m", &b));
  EXPECT_EQ(b, 4u << 20);
  ASSERT_TRUE(parse_bytes("1.5K", &b));
  EXPECT_EQ(b, 1536u);
  ASSERT_TRUE(parse_bytes("4096", &b));
  EXPECT_EQ(b, 4096u);
  ASSERT_TRUE(parse_bytes("0", &b));
  EXPECT_EQ(b, 0u);
}

TEST(ParseBytes, RejectsWhatIsNotAWholeByteCount) {
  std::size_t b = 7;
  for (const char* bad :
       {"", "abc", "1X", "-1", "-1M", "1.5", "1e300", "nan", "inf", "M", " 1M", "1M ", "1TB"})
    EXPECT_FALSE(parse_bytes(bad, &b)) << bad;
  EXPECT_EQ(b, 7u) << "a rejected value leaves the output alone";
}

TEST(FormatBytes, ShortestFormThatReadsBack) {
  EXPECT_EQ(format_bytes(16u << 20), "16M");
  EXPECT_EQ(format_bytes(512u << 10), "512K");
  EXPECT_EQ(format_bytes(std::size_t{1} << 30), "1G");
  EXPECT_EQ(format_bytes(1000), "1000");
  EXPECT_EQ(format_bytes(0), "0");
  for (std::size_t v :
       {std::size_t{1}, std::size_t{4096}, std::size_t{3} << 20, std::size_t{12345}}) {
    std::size_t back = 0;
    ASSERT_TRUE(parse_bytes(format_bytes(v), &back));
    EXPECT_EQ(back, v);
  }
}

struct Tool {
  std::size_t size = 1u << 20;
  int iters = 5;
  uint64_t seed = 1;
  double tol = 0.5;
  bool json = false, check = false;
  std::string codec = "quantize", label;
  std::vector<int> gpus = {0};
  CliParser p{"tool", "Does things."};
  Tool() {
    p.section("Work")
        .bytes("-b,--size,--min", &size, "message size")
        .integer("-n,--iters", &iters, 1, 1000, "timed iterations")
        .integer("--seed", &seed, 0, 1000000, "input seed")
        .number("--tol", &tol, 0, 1, "tolerance")
        .choice("--codec", &codec, {"raw", "quantize", "cast"}, "the codec")
        .custom("--gpus", "LIST", "a comma list of device numbers", "devices",
                [this](const std::string& v) {
                  if (v.empty() || v.find_first_not_of("0123456789,") != std::string::npos)
                    return std::string("a comma list of device numbers");
                  gpus.clear();
                  for (char c : v)
                    if (c != ',') gpus.push_back(c - '0');
                  return std::string();
                })
        .default_text("0")
        .section("Output")
        .flag("--json", &json, "JSON lines")
        .flag("-c,--check", &check, "check results")
        .text("--label", &label, "TEXT", "a label")
        .text("--secret", &label, "X", "internal")
        .hidden();
  }
  CliParser::Outcome parse(const std::vector<std::string>& args) { return p.parse(args); }
};

TEST(CliParser, LongShortAttachedAndEqualsFormsAllWork) {
  Tool t;
  ASSERT_EQ(t.parse({"--size", "4M", "-n", "7", "--seed=9", "--tol", "0.25", "--codec=cast",
                     "--json", "-c"})
                .status,
            Status::kOk);
  EXPECT_EQ(t.size, 4u << 20);
  EXPECT_EQ(t.iters, 7);
  EXPECT_EQ(t.seed, 9u);
  EXPECT_DOUBLE_EQ(t.tol, 0.25);
  EXPECT_EQ(t.codec, "cast");
  EXPECT_TRUE(t.json);
  EXPECT_TRUE(t.check);
  Tool u;
  ASSERT_EQ(
      u.parse({"-b64K", "-n3", "--min", "2K", "--gpus", "1,2", "--check=0", "--json", "1"}).status,
      Status::kOk);
  EXPECT_EQ(u.size, 2u << 10) << "the last of several spellings wins";
  EXPECT_EQ(u.iters, 3);
  EXPECT_EQ(u.gpus, (std::vector<int>{1, 2}));
  EXPECT_FALSE(u.check);
  EXPECT_TRUE(u.json);
  Tool v;  // nccl-tests' "-c 0" / "-c 1"
  ASSERT_EQ(v.parse({"-c", "1", "-n", "2"}).status, Status::kOk);
  EXPECT_TRUE(v.check);
  ASSERT_EQ(v.parse({"-c", "0"}).status, Status::kOk);
  EXPECT_FALSE(v.check);
  EXPECT_EQ(v.p.given_options()[0].tokens, (std::vector<std::string>{"-c", "0"}));
}

TEST(CliParser, NothingGivenKeepsTheDefaults) {
  Tool t;
  ASSERT_EQ(t.parse({}).status, Status::kOk);
  EXPECT_EQ(t.size, 1u << 20);
  EXPECT_EQ(t.codec, "quantize");
  EXPECT_FALSE(t.p.given("--size"));
}

TEST(CliParser, GivenKnowsEverySpellingAndRecordsTheTokens) {
  Tool t;
  ASSERT_EQ(t.parse({"-b", "1K", "--json", "--label=x"}).status, Status::kOk);
  EXPECT_TRUE(t.p.given("--min"));
  EXPECT_TRUE(t.p.given("-b"));
  EXPECT_TRUE(t.p.given("--json"));
  EXPECT_FALSE(t.p.given("--iters"));
  ASSERT_EQ(t.p.given_options().size(), 3u);
  EXPECT_EQ(t.p.given_options()[0].option, "--size");
  EXPECT_EQ(t.p.given_options()[0].tokens, (std::vector<std::string>{"-b", "1K"}));
  EXPECT_EQ(t.p.given_options()[2].tokens, (std::vector<std::string>{"--label=x"}));
}

// Each error is one line that names the option, the value and what is accepted.
void expect_error(const std::vector<std::string>& args, const std::vector<std::string>& parts) {
  Tool t;
  const CliParser::Outcome r = t.parse(args);
  ASSERT_EQ(r.status, Status::kError) << args[0];
  EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
  for (const auto& part : parts)
    EXPECT_NE(r.error.find(part), std::string::npos) << r.error << " lacks " << part;
}

TEST(CliParser, BadValuesNameTheOptionTheValueAndWhatIsAccepted) {
  expect_error({"--size", "abc"}, {"--size 'abc'", "64K", "1M"});
  expect_error({"-b", "1X"}, {"-b '1X'", "a size in bytes"});
  expect_error({"--iters", "0"}, {"--iters '0'", "an integer from 1 to 1000"});
  expect_error({"-n", "5x"}, {"-n '5x'", "integer"});
  expect_error({"--seed", "-1"}, {"--seed '-1'", "from 0 to 1000000"});
  expect_error({"--tol", "2"}, {"--tol '2'", "a number from 0 to 1"});
  expect_error({"--codec", "bogus"}, {"--codec 'bogus'", "one of raw, quantize or cast"});
  expect_error({"--gpus", "a"}, {"--gpus 'a'", "a comma list of device numbers"});
  expect_error({"--json=yes"}, {"--json 'yes'", "0 or 1"});
  expect_error({"--json", "2"}, {"unexpected argument '2'"});
  expect_error({"--size"}, {"--size needs a value", "a size in bytes"});
  expect_error({"--codec"}, {"--codec needs a value", "one of raw"});
}

TEST(CliParser, UnknownOptionsAndStrayArgumentsAreNamed) {
  expect_error({"--bogus"}, {"unknown option '--bogus'", "--help"});
  expect_error({"--sise", "1M"}, {"unknown option '--sise'", "did you mean --size?"});
  expect_error({"-x"}, {"unknown option '-x'"});
  expect_error({"stray"}, {"unexpected argument 'stray'"});
}

TEST(CliParser, HelpListsOptionsChoicesAndDefaultsButNotHiddenOnes) {
  Tool t;
  EXPECT_EQ(t.parse({"--json", "--help"}).status, Status::kHelp);
  EXPECT_EQ(t.parse({"-h"}).status, Status::kHelp);
  const std::string u = t.p.usage();
  for (const char* part : {"usage: tool [options]", "Does things.", "Work:", "Output:",
                           "-b, --size, --min BYTES", "(default 1M)", "(default 5)",
                           "(default 0.5)", "(one of: raw, quantize, cast; default quantize)",
                           "--gpus LIST", "(default 0)", "-c, --check", "-h, --help"})
    EXPECT_NE(u.find(part), std::string::npos) << "usage lacks '" << part << "':\n" << u;
  EXPECT_EQ(u.find("--secret"), std::string::npos) << u;
  for (std::size_t at = 0, nl; (nl = u.find('\n', at)) != std::string::npos; at = nl + 1)
    EXPECT_LE(nl - at, 100u) << u.substr(at, nl - at);
}

TEST(CliParser, HiddenOptionsStillParse) {
  Tool t;
  ASSERT_EQ(t.parse({"--secret", "s"}).status, Status::kOk);
  EXPECT_EQ(t.label, "s");
}

// parse_or_exit() on argv, as the tools call it.
void run_tool(const std::vector<std::string>& args) {
  Tool t;
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  t.p.parse_or_exit(static_cast<int>(argv.size()), argv.data());
  std::exit(9);  // parsed: not what these tests give it
}

TEST(CliParser, ParseOrExitExitsTwoWithOneLineAndZeroOnHelp) {
  EXPECT_EXIT(run_tool({"tool", "--size", "abc"}), ::testing::ExitedWithCode(2),
              "^tool: --size 'abc': expected a size in bytes[^\n]*\n$");
  EXPECT_EXIT(run_tool({"tool", "--help"}), ::testing::ExitedWithCode(0), "^$");
}

TEST(DataSets, NamesAreListed) {
  std::string known;
  EXPECT_TRUE(known_data_set("embeddings", &known));
  EXPECT_FALSE(known_data_set("bogus", &known));
  EXPECT_NE(known.find("gradients"), std::string::npos);
  EXPECT_EQ(known, data_set_names());
}

}  // namespace
}  // namespace squeeze::perf
