// Parsing and validation of the policy document, its rules and their match objects.
#include <algorithm>
#include <map>
#include <string>

#include "plugin/policy/names.h"
#include "plugin/policy/policy_keys.h"
#include "plugin/policy/policy_parser.h"

namespace squeeze::policy {

std::shared_ptr<const Policy> Policy::parse(std::string_view text, std::string_view source,
                                            std::vector<std::string>* errors) {
  PolicyParser parser(source, errors);
  return parser.run(text);
}

namespace {

constexpr std::array<std::string_view, 10> kCollectiveNames = {
    "allreduce",     "alltoall",  "send",   "recv",   "allgather",
    "reducescatter", "broadcast", "reduce", "gather", "scatter"};
constexpr std::array<std::string_view, 13> kDtypeNames = {
    "float32", "bfloat16", "float16", "float64", "float8e4m3", "float8e5m2", "int8",
    "uint8",   "int32",    "uint32",  "int64",   "uint64",     "unknown"};
constexpr std::array<std::string_view, 3> kProtoNames = {"simple", "ll", "ll128"};
constexpr std::array<std::string_view, 8> kAlgoNames = {
    "ring", "tree", "collnet", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};

// "collnet" names every CollNet algorithm: NCCL's two and Squeeze's collective network, whose
// messages do not say which of NCCL's two drives them.
bool parse_algo_name(std::string_view s, Algo* out) { return parse_algo(s, out); }

template <typename Set, typename Enum, typename ParseFn, std::size_t N>
void parse_enum_set(JsonReader& r, const Json& v, const std::string& ptr, const char* what,
                    const std::array<std::string_view, N>& names, ParseFn parse, Set* set) {
  std::vector<JsonReader::Item> items;
  if (!r.get_string_list(v, ptr, &items)) return;
  for (const auto& it : items) {
    Enum e{};
    if (!parse(it.value, &e)) {
      r.fail(it.ptr,
             std::string("unknown ") + what + " \"" + it.value + "\"; use " + quoted_list(names));
      continue;
    }
    set->set(static_cast<std::size_t>(e));
  }
}

}  // namespace

std::shared_ptr<const Policy> PolicyParser::run(std::string_view text) {
  Json doc;
  if (!r_.parse(text, &doc)) return nullptr;
  if (!r_.is_object(doc, "")) return nullptr;
  r_.only_keys(doc, "", keys::kTop);

  auto p = std::make_shared<Policy>();
  p->source_ = source_;
  if (!doc.contains("version")) {
    r_.fail("/version", "missing; write \"version\": 1");
  } else {
    uint64_t version = 0;
    if (r_.get_uint(doc["version"], "/version", 0, UINT64_MAX, &version) && version != 1) {
      r_.fail("/version",
              "unsupported version " + std::to_string(version) + "; this plugin reads version 1");
    }
  }
  if (doc.contains("$schema") && !doc["$schema"].is_string())
    r_.fail("/$schema", "must be a string");
  if (doc.contains("description") && !doc["description"].is_string())
    r_.fail("/description", "must be a string");
  if (doc.contains("tuner")) r_.get_bool(doc["tuner"], "/tuner", &p->tuner_);
  if (!doc.contains("rules")) {
    r_.fail("/rules", "missing; write \"rules\": [] for a policy that only has a default");
  } else {
    parse_rules(doc["rules"], p.get());
  }
  if (doc.contains("default")) {
    const Json& d = doc["default"];
    if (r_.is_object(d, "/default")) {
      r_.only_keys(d, "/default", keys::kAction);
      parse_action(d, "/default", &p->default_);
    }
  }
  if (r_.error_count() > 0) return nullptr;
  return p;
}

void PolicyParser::parse_rules(const Json& v, Policy* p) {
  if (!v.is_array()) {
    r_.fail("/rules", "must be an array of rules, not " + json_type_name(v));
    return;
  }
  if (v.size() > static_cast<std::size_t>(kMaxRules)) {
    r_.fail("/rules", "has " + std::to_string(v.size()) + " rules; at most " +
                          std::to_string(kMaxRules) + " are allowed");
    return;
  }
  std::map<std::string, std::string> names;  // name -> pointer of its first use
  for (std::size_t i = 0; i < v.size(); ++i) {
    Rule rule;
    rule.pointer = pointer_child("/rules", i);
    rule.name = "rule" + std::to_string(i);
    std::size_t before = r_.error_count();
    parse_rule(v[i], rule.pointer, &rule);
    if (r_.error_count() == before) check_rule(v[i], rule);
    auto [it, fresh] = names.emplace(rule.name, rule.pointer);
    if (!fresh) {
      r_.fail(rule.pointer + "/name", "duplicate rule name \"" + rule.name + "\" (also " +
                                          it->second + "); names identify rules in statistics");
    }
    p->rules_.push_back(std::move(rule));
  }
  check_reachability(v, *p);
}

void PolicyParser::parse_rule(const Json& v, const std::string& ptr, Rule* rule) {
  if (!r_.is_object(v, ptr)) return;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& k = it.key();
    bool known =
        std::find(keys::kRuleOnly.begin(), keys::kRuleOnly.end(), k) != keys::kRuleOnly.end() ||
        std::find(keys::kAction.begin(), keys::kAction.end(), k) != keys::kAction.end();
    if (!known) {
      std::vector<std::string_view> all(keys::kRuleOnly.begin(), keys::kRuleOnly.end());
      all.insert(all.end(), keys::kAction.begin(), keys::kAction.end());
      r_.fail(pointer_child(ptr, k), "unknown key; allowed in a rule: " + quoted_list(all));
    }
  }
  if (v.contains("name")) r_.get_string(v["name"], ptr + "/name", &rule->name);
  if (v.contains("description") && !v["description"].is_string())
    r_.fail(ptr + "/description", "must be a string");
  if (v.contains("match")) parse_match(v["match"], ptr + "/match", &rule->match);
  parse_action(v, ptr, &rule->action);
}

void PolicyParser::parse_match(const Json& v, const std::string& ptr, Match* m) {
  if (!r_.is_object(v, ptr)) return;
  r_.only_keys(v, ptr, keys::kMatch);
  if (v.contains("collective")) {
    m->any_collective = false;
    parse_enum_set<CollectiveSet, Collective>(r_, v["collective"], ptr + "/collective",
                                              "collective", kCollectiveNames, parse_collective,
                                              &m->collectives);
  }
  if (v.contains("dtype")) {
    m->any_dtype = false;
    parse_enum_set<DataTypeSet, DataType>(
        r_, v["dtype"], ptr + "/dtype", "dtype", kDtypeNames,
        static_cast<bool (*)(std::string_view, DataType*)>(parse_dtype), &m->dtypes);
  }
  if (v.contains("proto")) {
    m->any_proto = false;
    parse_enum_set<ProtoSet, Proto>(r_, v["proto"], ptr + "/proto", "protocol", kProtoNames,
                                    parse_proto, &m->protos);
  }
  if (v.contains("algo")) {
    m->any_algo = false;
    parse_enum_set<AlgoSet, Algo>(r_, v["algo"], ptr + "/algo", "algorithm", kAlgoNames,
                                  parse_algo_name, &m->algos);
    if (m->algos.test(static_cast<std::size_t>(Algo::kCollNet))) {
      m->algos.set(static_cast<std::size_t>(Algo::kCollNetDirect));
      m->algos.set(static_cast<std::size_t>(Algo::kCollNetChain));
    }
  }
  if (v.contains("min_bytes"))
    r_.get_uint(v["min_bytes"], ptr + "/min_bytes", 0, UINT64_MAX, &m->min_bytes);
  if (v.contains("max_bytes"))
    r_.get_uint(v["max_bytes"], ptr + "/max_bytes", 0, UINT64_MAX, &m->max_bytes);
  if (m->min_bytes > m->max_bytes) {
    r_.fail(ptr + "/max_bytes", "is " + std::to_string(m->max_bytes) + ", below min_bytes " +
                                    std::to_string(m->min_bytes) +
                                    ": the rule would match nothing");
  }
  if (v.contains("nranks")) parse_nranks(v["nranks"], ptr + "/nranks", m);
  if (v.contains("comm")) {
    std::vector<JsonReader::Item> items;
    if (r_.get_string_list(v["comm"], ptr + "/comm", &items)) {
      for (auto& it : items) m->comm_patterns.push_back(std::move(it.value));
    }
  }
}

void PolicyParser::parse_nranks(const Json& v, const std::string& ptr, Match* m) {
  constexpr uint64_t kMax = static_cast<uint64_t>(INT32_MAX);
  m->any_nranks = false;
  uint64_t x = 0;
  if (v.is_number()) {
    if (r_.get_uint(v, ptr, 1, kMax, &x)) m->nranks_list.push_back(static_cast<int32_t>(x));
  } else if (v.is_array()) {
    if (v.empty()) r_.fail(ptr, "must not be an empty array (it would match nothing)");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (r_.get_uint(v[i], pointer_child(ptr, i), 1, kMax, &x))
        m->nranks_list.push_back(static_cast<int32_t>(x));
    }
  } else if (v.is_object()) {
    r_.only_keys(v, ptr, keys::kNranksRange);
    if (!v.contains("min") && !v.contains("max")) r_.fail(ptr, "needs \"min\", \"max\" or both");
    if (v.contains("min") && r_.get_uint(v["min"], ptr + "/min", 1, kMax, &x))
      m->nranks_min = static_cast<int32_t>(x);
    if (v.contains("max") && r_.get_uint(v["max"], ptr + "/max", 1, kMax, &x))
      m->nranks_max = static_cast<int32_t>(x);
    if (m->nranks_min > m->nranks_max)
      r_.fail(ptr + "/max", "is below min: the rule would match nothing");
  } else {
    r_.fail(ptr, "must be a number of ranks, an array of them, or {\"min\": a, \"max\": b}, not " +
                     json_type_name(v));
  }
}

void PolicyParser::check_rule(const Json& v, const Rule& rule) {
  const Match& m = rule.match;
  const Action& a = rule.action;
  const std::string& ptr = rule.pointer;
  if (a.assume_dtype != DataType::kUnknown && !m.any_dtype) {
    if (!m.dtypes.test(static_cast<std::size_t>(a.assume_dtype))) {
      r_.fail(ptr + "/assume_dtype",
              std::string("\"") + dtype_name(a.assume_dtype) +
                  "\" is not in match.dtype, so messages of unknown dtype would never match");
    }
    if (m.dtypes.test(static_cast<std::size_t>(DataType::kUnknown))) {
      r_.fail(ptr + "/match/dtype",
              "lists \"unknown\", but with assume_dtype a message of unknown dtype is matched as " +
                  std::string(dtype_name(a.assume_dtype)));
    }
  }
  if (a.lossy()) {
    // Which dtypes can this rule see? A lossy codec needs one it can code.
    bool can_apply = false;
    for (int d = 0; d < kNumDataTypes; ++d) {
      auto dt = static_cast<DataType>(d);
      bool seen = m.any_dtype || m.dtypes.test(static_cast<std::size_t>(d));
      if (dt == DataType::kUnknown) continue;  // unknown data is never coded lossily
      bool codable =
          a.params.codec == compress::CodecId::kCast ? dt == DataType::kFloat32 : lossy_capable(dt);
      can_apply = can_apply || (seen && codable);
    }
    if (!can_apply) {
      std::string listed;
      for (int d = 0; d < kNumDataTypes; ++d) {
        if (m.dtypes.test(static_cast<std::size_t>(d))) {
          listed += std::string(listed.empty() ? "" : ", ") + dtype_name(static_cast<DataType>(d));
        }
      }
      r_.fail(ptr + "/codec",
              std::string("lossy codec \"") + codec_policy_name(a.params.codec) +
                  "\" can never apply: the rule matches only dtype " + listed +
                  ", and this codec needs " +
                  (a.params.codec == compress::CodecId::kCast ? "float32"
                                                              : "float32, bfloat16 or float16") +
                  "; use \"lossless\" or \"raw\", or add assume_dtype for data of unknown dtype");
    }
    if (v.contains("consistency") && !m.any_collective &&
        !m.collectives.test(static_cast<std::size_t>(Collective::kAllReduce))) {
      r_.fail(ptr + "/consistency", "applies to all-reduce, which this rule never matches");
    }
  }
  if (!a.raw && !m.any_proto && !m.protos.test(static_cast<std::size_t>(Proto::kSimple))) {
    r_.fail(
        ptr + "/match/proto",
        "matches only LL/LL128, which are never compressed; use codec \"raw\" or add \"simple\"");
  }
}

void PolicyParser::check_reachability(const Json& rules, const Policy& p) {
  for (std::size_t i = 0; i < p.rules_.size(); ++i) {
    const Json& rv = rules[i];
    bool catch_all = rv.is_object() &&
                     (!rv.contains("match") || (rv["match"].is_object() && rv["match"].empty()));
    if (catch_all && i + 1 < p.rules_.size()) {
      r_.fail(p.rules_[i + 1].pointer,
              "can never match: " + p.rules_[i].pointer +
                  " before it matches every message (move it last or give it a match)");
      return;
    }
  }
}

}  // namespace squeeze::policy
