// Picks the transport: SQUEEZE_TRANSPORT=auto|ib|ucx|tcp. With auto: verbs when a usable
// RDMA device exists; else UCX when its libraries load and the machine has an RDMA device
// (one verbs could not use); else TCP (where UCX could only run over TCP, our TCP transport
// is the faster of the two). Every choice comes with a sentence that says why, for the INFO
// log.
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"

namespace squeeze::transport {

// `choice` is SQUEEZE_TRANSPORT's value ("" = auto). Returns null, with *why saying what is
// wrong, when an explicitly requested transport cannot be used or the value is unknown.
std::unique_ptr<Transport> open_transport(const std::string& choice, std::string* why);

}  // namespace squeeze::transport
