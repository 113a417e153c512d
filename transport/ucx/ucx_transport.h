// PLACEHOLDER until the ucx transport lands: open_transport() always says "not built".
#pragma once

#include <memory>
#include <string>

#include "transport/transport.h"

namespace squeeze::transport::ucx {

// Returns null with *why saying why the transport cannot be used here.
std::unique_ptr<Transport> open_transport(std::string* why);

}  // namespace squeeze::transport::ucx
