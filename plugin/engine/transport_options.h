// The transports' options, filled from the parameter table: the one place where the
// transport-related variables (SQUEEZE_TRANSPORT, the socket, UCX and SQUEEZE_IB_* entries of
// plugin/params/param_table.h) become transport::Options. Validation already happened when
// the Settings were read, so this only copies.
#pragma once

#include "plugin/params/params.h"
#include "transport/options.h"

namespace squeeze::plugin {

transport::Options transport_options(const params::Settings& st);

}  // namespace squeeze::plugin
