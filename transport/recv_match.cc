#include "transport/recv_match.h"

namespace squeeze::transport {

Status match_recv_item(std::span<const RecvItem> items, std::span<const bool> matched,
                       const MessageHeader& h, const std::string& peer, int* idx) {
  *idx = -1;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!matched[i] && items[i].tag == h.tag) {
      *idx = static_cast<int>(i);
      break;
    }
  }
  if (*idx < 0) {
    std::string tags;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) tags += ',';
      tags += std::to_string(items[i].tag);
    }
    return Status::Remote("message from " + peer + " has tag " + std::to_string(h.tag) +
                          " but the posted receive expects tags {" + tags + "}");
  }
  const RecvItem& it = items[static_cast<std::size_t>(*idx)];
  if (h.original_bytes > it.capacity)
    return Status::Remote("message from " + peer + " of " + std::to_string(h.original_bytes) +
                          " bytes exceeds the posted receive of " + std::to_string(it.capacity) +
                          " bytes (tag " + std::to_string(h.tag) + ")");
  return Status::Ok();
}

}  // namespace squeeze::transport
