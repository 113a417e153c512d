// The SAX handler behind JsonReader::parse(): builds the document as nlohmann's DOM parser
// does and, on the way, reports each duplicate key with its JSON pointer and stops at the
// first array or object nested deeper than kMaxPolicyDepth.
//
// It takes time linear in the input, where nlohmann's callback parser (used before) does not:
// that one scans the parent container at each object's end, so an array of n objects costs
// O(n^2). Here a key is looked up among the keys of its own object only, in a std::set rather
// than a hash table so that keys chosen to collide cost O(log n) comparisons, and the pointer
// of a duplicate is built only if its error is listed.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugin/policy/json_reader.h"

namespace squeeze::policy {

class JsonDomBuilder {
 public:
  // Builds into *root; reports duplicate keys through *reader.
  JsonDomBuilder(Json* root, JsonReader* reader) : root_(root), reader_(reader) {}

  // Where the parse stopped for nesting too deep: the pointer of the array or object that
  // would have been level kMaxPolicyDepth + 1. Empty when it did not.
  const std::optional<std::string>& too_deep_at() const { return too_deep_at_; }

  // nlohmann's SAX interface; a false return stops the parse.
  bool null() { return value(Json(nullptr)); }
  bool boolean(bool v) { return value(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return value(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return value(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& /*text*/) {
    return value(Json(v));
  }
  bool string(Json::string_t& v) { return value(Json(v)); }
  bool binary(Json::binary_t& v) { return value(Json(v)); }
  bool start_object(std::size_t /*size, unknown in JSON*/) { return open(Json::value_t::object); }
  bool key(Json::string_t& k);
  bool end_object() { return close(); }
  bool start_array(std::size_t /*size, unknown in JSON*/) { return open(Json::value_t::array); }
  bool end_array() { return close(); }
  // The parser's own error, rethrown as nlohmann's DOM parser does, with its type.
  template <typename Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Exception& e) {
    throw e;
  }

 private:
  // An array or object being parsed.
  struct Level {
    Json* value;
    bool array;
    long index;                  // arrays: index of the element being parsed, -1 before the first
    std::set<std::string> keys;  // objects: the keys seen so far
    std::string key;             // objects: the key of the member being parsed
  };

  bool value(Json&& v);
  bool open(Json::value_t type);
  bool close();
  // Counts an element in the array being parsed, if that is where it is.
  void element_begins();
  // Puts v where the parse is (the root, the array's end or the object's current key).
  Json* place(Json&& v);
  // The JSON pointer of the element being parsed.
  std::string pointer() const;

  Json* root_;
  JsonReader* reader_;
  std::vector<Level> levels_;
  Json* member_ = nullptr;  // the object member that the next value fills
  std::optional<std::string> too_deep_at_;
};

}  // namespace squeeze::policy
