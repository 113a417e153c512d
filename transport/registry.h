// Picks the transport that Options::name (the plugin's SQUEEZE_TRANSPORT) asks for:
// auto|ib|ucx|tcp. With auto: verbs when a usable RDMA device exists; else UCX when its
// libraries load and the machine has an RDMA device (one verbs could not use); else TCP
// (where UCX could only run over TCP, our TCP transport is the faster of the two). Every
// choice comes with a sentence that says why, for the INFO log.
#pragma once

#include <memory>
#include <string>

#include "transport/options.h"
#include "transport/transport.h"

namespace squeeze::transport {

// Opens the transport o.name asks for ("" = auto), with the rest of `o`. Returns null, with
// *why saying what is wrong, when an explicitly requested transport cannot be used or the
// name is unknown.
std::unique_ptr<Transport> open_transport(const Options& o, std::string* why);

}  // namespace squeeze::transport
