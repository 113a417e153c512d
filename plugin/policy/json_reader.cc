#include "plugin/policy/json_reader.h"

#include <cmath>
#include <limits>
#include <set>
#include <utility>

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

std::string pointer_child(const std::string& ptr, std::size_t index) { return ptr + "/" + std::to_string(index); }

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
  ++count_;
  if (errors_ != nullptr) {
    errors_->push_back("policy " + source_ + ": " + (ptr.empty() ? std::string("(document)") : ptr) + ": " + reason);
  }
}

namespace {

// Tracks where the parser is, so a duplicate key can be reported with its pointer.
class DuplicateKeyFinder {
 public:
  explicit DuplicateKeyFinder(JsonReader* reader) : reader_(reader) {}

  bool on_event(Json::parse_event_t event, const Json& parsed) {
    using E = Json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        element_begins();
        frames_.push_back(Frame{event == E::array_start, -1, {}, {}});
        break;
      case E::object_end:
      case E::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case E::key: {
        if (frames_.empty()) break;
        Frame& f = frames_.back();
        f.key = parsed.is_string() ? parsed.get<std::string>() : std::string();
        if (!f.keys.insert(f.key).second) {
          reader_->fail(path(), "duplicate key \"" + f.key + "\" (JSON keeps only one of them; remove the other)");
        }
        break;
      }
      case E::value:
        element_begins();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    long index;
    std::set<std::string> keys;
    std::string key;
  };
  void element_begins() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      p = f.array ? pointer_child(p, static_cast<std::size_t>(f.index < 0 ? 0 : f.index)) : pointer_child(p, f.key);
    }
    return p;
  }
  JsonReader* reader_;
  std::vector<Frame> frames_;
};

}  // namespace

bool JsonReader::parse(std::string_view text, Json* out) {
  // nlohmann's lexer stops at a NUL byte and would ignore whatever follows it.
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    fail("", "contains a NUL byte at offset " + std::to_string(nul) + "; a policy is UTF-8 JSON text");
    return false;
  }
  const std::size_t errors_before = count_;
  DuplicateKeyFinder finder(this);
  try {
    *out = Json::parse(text.begin(), text.end(),
                       [&finder](int, Json::parse_event_t e, Json& parsed) { return finder.on_event(e, parsed); });
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
    fail("", "not valid JSON at line " + std::to_string(line) + ", column " + std::to_string(col) + ": " +
                 (colon == std::string::npos ? what : what.substr(colon + 2)));
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
  return count_ == errors_before;
}

bool JsonReader::is_object(const Json& v, const std::string& ptr) {
  if (v.is_object()) return true;
  fail(ptr, "must be an object, not " + json_type_name(v));
  return false;
}

void JsonReader::only_keys(const Json& obj, const std::string& ptr, std::span<const std::string_view> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (std::string_view a : allowed) known = known || it.key() == a;
    if (!known) fail(pointer_child(ptr, it.key()), "unknown key; allowed here: " + quoted_list(allowed));
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

bool JsonReader::get_uint(const Json& v, const std::string& ptr, uint64_t lo, uint64_t hi, uint64_t* out) {
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
    fail(ptr, "must not be an empty array (it would match nothing); remove the key to match everything");
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
