// Internal: the parser and validator behind Policy::parse(). Split across policy_parse.cc
// (document, rules, match) and parse_action.cc (codecs and their parameters).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/policy/json_reader.h"
#include "plugin/policy/policy.h"

namespace squeeze::policy {

class PolicyParser {
 public:
  PolicyParser(std::string_view source, std::vector<std::string>* errors)
      : r_(source, errors), source_(source) {}
  std::shared_ptr<const Policy> run(std::string_view text);

 private:
  void parse_rules(const Json& v, Policy* p);
  void parse_rule(const Json& v, const std::string& ptr, Rule* rule);
  void parse_match(const Json& v, const std::string& ptr, Match* m);
  void parse_nranks(const Json& v, const std::string& ptr, Match* m);
  // Checks that only make sense once a whole rule is known (lossy on integer-only data ...).
  void check_rule(const Json& v, const Rule& rule);
  void check_reachability(const Json& rules, const Policy& p);

  // parse_action.cc: reads the action keys of obj (a rule or the default).
  void parse_action(const Json& obj, const std::string& ptr, Action* a);
  void parse_quantize(const Json& obj, const std::string& ptr, Action* a);
  void parse_threshold(const Json& obj, const std::string& ptr, Action* a);
  void parse_cast(const Json& obj, const std::string& ptr, Action* a);
  void parse_schedule(const Json& v, const std::string& ptr, EbSchedule* s);
  void parse_streams(const Json& v, const std::string& ptr, std::vector<StreamBound>* out);

  JsonReader r_;
  std::string source_;
};

}  // namespace squeeze::policy
