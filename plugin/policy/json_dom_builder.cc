#include "plugin/policy/json_dom_builder.h"

#include <utility>

namespace squeeze::policy {

bool JsonDomBuilder::key(Json::string_t& k) {
  Level& level = levels_.back();  // the parser sends keys inside objects only
  level.key = k;
  member_ = &(*level.value)[k];
  if (!level.keys.insert(k).second) {
    reader_->fail_lazily([this] { return pointer(); },
                         [&level] {
                           return "duplicate key \"" + level.key +
                                  "\" (JSON keeps only one of them; remove the other)";
                         });
  }
  return true;
}

bool JsonDomBuilder::value(Json&& v) {
  element_begins();
  place(std::move(v));
  return true;
}

bool JsonDomBuilder::open(Json::value_t type) {
  element_begins();
  if (levels_.size() >= static_cast<std::size_t>(kMaxPolicyDepth)) {
    too_deep_at_ = pointer();
    return false;
  }
  Json* container = place(Json(type));
  levels_.push_back(Level{container, type == Json::value_t::array, -1, {}, {}});
  return true;
}

bool JsonDomBuilder::close() {
  levels_.pop_back();
  return true;
}

void JsonDomBuilder::element_begins() {
  if (!levels_.empty() && levels_.back().array) ++levels_.back().index;
}

Json* JsonDomBuilder::place(Json&& v) {
  if (levels_.empty()) {
    *root_ = std::move(v);
    return root_;
  }
  // A container's address is stable while it is open: its parent grows only after it closes.
  Level& level = levels_.back();
  if (level.array) {
    auto& elements = level.value->get_ref<Json::array_t&>();
    elements.push_back(std::move(v));
    return &elements.back();
  }
  *member_ = std::move(v);
  return member_;
}

std::string JsonDomBuilder::pointer() const {
  std::string p;  // appended to, not rebuilt per level: a pointer can be most of the input
  for (const Level& level : levels_) {
    p += level.array
             ? pointer_child({}, static_cast<std::size_t>(level.index < 0 ? 0 : level.index))
             : pointer_child({}, level.key);
  }
  return p;
}

}  // namespace squeeze::policy
