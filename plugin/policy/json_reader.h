// Typed, error-collecting access to a parsed JSON document. Every failure is recorded as
// "policy <source>: <json-pointer>: <reason>" and parsing goes on, so a user sees all the
// problems of a file at once: the first kMaxListedErrors of them, then one line that counts
// the rest (policy_limits.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin/policy/policy_limits.h"

namespace squeeze::policy {

using Json = nlohmann::json;

// RFC 6901 pointers: child("/rules", 1) == "/rules/1"; "~" and "/" in keys are escaped.
std::string pointer_child(const std::string& ptr, std::string_view key);
std::string pointer_child(const std::string& ptr, std::size_t index);

class JsonReader {
 public:
  JsonReader(std::string_view source, std::vector<std::string>* errors)
      : source_(source), errors_(errors) {}

  void fail(const std::string& ptr, const std::string& reason);
  // fail(make_ptr(), make_reason()), where the two are built only if the error gets its own
  // line: for errors that can come by the thousand in a hostile file.
  template <typename MakePtr, typename MakeReason>
  void fail_lazily(MakePtr&& make_ptr, MakeReason&& make_reason) {
    if (count_ < kMaxListedErrors) {
      fail(make_ptr(), make_reason());
    } else {
      count_unlisted();
    }
  }
  std::size_t error_count() const { return count_; }

  // Parses text; reports invalid JSON (with line and column), NUL bytes, duplicate keys (with
  // their pointers), a text over kMaxPolicyBytes and nesting deeper than kMaxPolicyDepth.
  // Returns false on any of these. Takes time linear in the size of text.
  bool parse(std::string_view text, Json* out);

  bool is_object(const Json& v, const std::string& ptr);
  // Reports every key of obj not in `allowed`.
  void only_keys(const Json& obj, const std::string& ptr,
                 std::span<const std::string_view> allowed);
  bool get_bool(const Json& v, const std::string& ptr, bool* out);
  bool get_string(const Json& v, const std::string& ptr, std::string* out);  // non-empty
  // An integer in [lo, hi]; an integral float such as 1e6 is accepted.
  bool get_uint(const Json& v, const std::string& ptr, uint64_t lo, uint64_t hi, uint64_t* out);
  bool get_number(const Json& v, const std::string& ptr, double* out);
  // A string or a non-empty array of strings; each with its pointer.
  struct Item {
    std::string value;
    std::string ptr;
  };
  bool get_string_list(const Json& v, const std::string& ptr, std::vector<Item>* out);

 private:
  void count_unlisted();

  std::string source_;
  std::vector<std::string>* errors_;
  std::size_t count_ = 0;
  std::size_t more_line_ = 0;  // index in *errors_ of the "and N more errors" line, once there
};

// "a", "b" or "c" — for error messages that list the valid choices.
std::string quoted_list(std::span<const std::string_view> names);
std::string json_type_name(const Json& v);

}  // namespace squeeze::policy
