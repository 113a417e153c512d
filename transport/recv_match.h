// Matching an arriving message to an item of a grouped receive, the same for every transport
// that learns the header on the receiving side (tcp, ucx): the first unmatched item with the
// message's tag, which must be large enough for the message.
#pragma once

#include <span>
#include <string>

#include "transport/status.h"
#include "transport/transport.h"

namespace squeeze::transport {

// Sets *idx to the item `h` lands in. Errors (Remote) name the peer, the tag and what was
// posted: no item with that tag, or a message larger than the item's capacity.
Status match_recv_item(std::span<const RecvItem> items, std::span<const bool> matched,
                       const MessageHeader& h, const std::string& peer, int* idx);

}  // namespace squeeze::transport
