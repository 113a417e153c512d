#include "transport/ib/hca_filter.h"

#include <charconv>

namespace squeeze::transport::ib {

std::string HcaFilter::parse(std::string_view spec, HcaFilter* out) {
  HcaFilter f;
  if (spec.starts_with('^')) {
    f.exclude_ = true;
    spec.remove_prefix(1);
  }
  if (spec.starts_with('=')) {
    f.exact_ = true;
    spec.remove_prefix(1);
  }
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec.remove_prefix(comma == std::string_view::npos ? spec.size() : comma + 1);
    const std::size_t colon = item.find(':');
    Entry e;
    e.name = std::string(item.substr(0, colon));
    if (colon != std::string_view::npos) {
      const std::string_view port = item.substr(colon + 1);
      int p = 0;
      const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
      if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 255)
        return "entry '" + std::string(item) + "' has no port number in [1, 255] after ':'";
      e.port = p;
    }
    if (!e.name.empty()) f.entries_.push_back(std::move(e));
  }
  *out = std::move(f);
  return "";
}

bool HcaFilter::selects(std::string_view device, int port) const {
  bool hit = entries_.empty();
  for (const Entry& e : entries_) {
    const bool name = exact_ ? device == e.name : device.starts_with(e.name);
    if (name && (e.port < 0 || e.port == port)) {
      hit = true;
      break;
    }
  }
  return hit != exclude_;
}

}  // namespace squeeze::transport::ib
