#include "plugin/policy/json_reader.h"

#include <cmath>
#include <limits>
#include <utility>

#include "plugin/policy/json_dom_builder.h"

namespace squeeze::policy {

std::string pointer_child(const std::string& ptr, std::string_view key) {
  std::string out = ptr;
  out.push_back('/');
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string pointer_child(const std::string& ptr, std::size_t index) {
  return ptr + "/" + std::to_string(index);
}

std::string quoted_list(std::span<const std::string_view> names) {
  std::string out;
  std::size_t i = 0;
  for (std::string_view n : names) {
    if (i > 0) out += (i + 1 == names.size()) ? " or " : ", ";
    out += '"';
    out += n;
    out += '"';
    ++i;
  }
  return out;
}

std::string json_type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

void JsonReader::fail(const std::string& ptr, const std::string& reason) {
  if (count_ >= kMaxListedErrors) {
    count_unlisted();
    return;
  }
  ++count_;
  if (errors_ != nullptr) {
    errors_->push_back("policy " + source_ + ": " +
                       (ptr.empty() ? std::string("(document)") : ptr) + ": " + reason);
  }
}

void JsonReader::count_unlisted() {
  ++count_;
  if (errors_ == nullptr) return;
  const std::size_t more = count_ - kMaxListedErrors;
  std::string line = "policy " + source_ + ": and " + std::to_string(more) +
                     (more == 1 ? " more error" : " more errors") + " (only the first " +
                     std::to_string(kMaxListedErrors) + " are listed)";
  if (more == 1) {
    more_line_ = errors_->size();
    errors_->push_back(std::move(line));
  } else {
    (*errors_)[more_line_] = std::move(line);
  }
}

bool JsonReader::parse(std::string_view text, Json* out) {
  if (text.size() > kMaxPolicyBytes) {
    fail("", policy_too_large(std::to_string(text.size()) + " bytes"));
    return false;
  }
  // nlohmann's lexer stops at a NUL byte and would ignore whatever follows it.
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    fail("",
         "contains a NUL byte at offset " + std::to_string(nul) + "; a policy is UTF-8 JSON text");
    return false;
  }
  const std::size_t errors_before = count_;
  Json doc;
  JsonDomBuilder builder(&doc, this);
  try {
    if (!Json::sax_parse(text.begin(), text.end(), &builder)) {  // stopped by the builder
      fail(builder.too_deep_at().value_or(""), "arrays and objects nested more than " +
                                                   std::to_string(kMaxPolicyDepth) +
                                                   " levels deep; a policy needs far fewer");
      return false;
    }
  } catch (const Json::parse_error& e) {
    std::size_t pos = e.byte > 0 ? e.byte - 1 : 0;
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    auto colon = what.rfind(": ");
    fail("", "not valid JSON at line " + std::to_string(line) + ", column " + std::to_string(col) +
                 ": " + (colon == std::string::npos ? what : what.substr(colon + 2)));
    return false;
  } catch (const Json::exception& e) {
    // Other parser errors, e.g. out_of_range 406 for a number that overflows every JSON type
    // (found by the policy fuzzer): the message names the offending token.
    std::string what = e.what();
    auto bracket = what.find("] ");
    fail("", "not valid JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2)));
    return false;
  }
  // A duplicate key makes the document ambiguous: report only that, not what follows from
  // whichever copy the parser kept.
  if (count_ != errors_before) return false;
  *out = std::move(doc);
  return true;
}

bool JsonReader::is_object(const Json& v, const std::string& ptr) {
  if (v.is_object()) return true;
  fail(ptr, "must be an object, not " + json_type_name(v));
  return false;
}

void JsonReader::only_keys(const Json& obj, const std::string& ptr,
                           std::span<const std::string_view> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (std::string_view a : allowed) known = known || it.key() == a;
    if (!known)
      fail(pointer_child(ptr, it.key()), "unknown key; allowed here: " + quoted_list(allowed));
  }
}

bool JsonReader::get_bool(const Json& v, const std::string& ptr, bool* out) {
  if (!v.is_boolean()) {
    fail(ptr, "must be true or false, not " + json_type_name(v));
    return false;
  }
  *out = v.get<bool>();
  return true;
}

bool JsonReader::get_string(const Json& v, const std::string& ptr, std::string* out) {
  if (!v.is_string()) {
    fail(ptr, "must be a string, not " + json_type_name(v));
    return false;
  }
  *out = v.get<std::string>();
  if (out->empty()) {
    fail(ptr, "must not be empty");
    return false;
  }
  return true;
}

bool JsonReader::get_uint(const Json& v, const std::string& ptr, uint64_t lo, uint64_t hi,
                          uint64_t* out) {
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  uint64_t x = 0;
  if (v.is_number_unsigned()) {
    x = v.get<uint64_t>();
  } else if (v.is_number_integer()) {
    fail(ptr, "must be " + range + ", not " + std::to_string(v.get<int64_t>()));
    return false;
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (!(d >= 0.0) || d != std::floor(d) || d >= 18446744073709551616.0) {
      fail(ptr, "must be " + range + ", not " + v.dump());
      return false;
    }
    x = static_cast<uint64_t>(d);
  } else {
    fail(ptr, "must be " + range + ", not " + json_type_name(v));
    return false;
  }
  if (x < lo || x > hi) {
    fail(ptr, "must be " + range + ", not " + std::to_string(x));
    return false;
  }
  *out = x;
  return true;
}

bool JsonReader::get_number(const Json& v, const std::string& ptr, double* out) {
  if (!v.is_number()) {
    fail(ptr, "must be a number, not " + json_type_name(v));
    return false;
  }
  *out = v.get<double>();
  if (!std::isfinite(*out)) {
    fail(ptr, "must be a finite number");
    return false;
  }
  return true;
}

bool JsonReader::get_string_list(const Json& v, const std::string& ptr, std::vector<Item>* out) {
  out->clear();
  if (v.is_string()) {
    std::string s;
    if (!get_string(v, ptr, &s)) return false;
    out->push_back({std::move(s), ptr});
    return true;
  }
  if (!v.is_array()) {
    fail(ptr, "must be a string or an array of strings, not " + json_type_name(v));
    return false;
  }
  if (v.empty()) {
    fail(ptr,
         "must not be an empty array (it would match nothing); remove the key to match everything");
    return false;
  }
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string s;
    std::string p = pointer_child(ptr, i);
    if (get_string(v[i], p, &s)) {
      out->push_back({std::move(s), std::move(p)});
    } else {
      ok = false;
    }
  }
  return ok;
}

}  // namespace squeeze::policy
