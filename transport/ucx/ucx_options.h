// What the plugin (or a tool or test) decides about the UCX transport. The defaults are what
// Squeeze uses when nothing is set; the plugin fills the struct from its parameter table
// (SQUEEZE_UCX_LIBRARY, and UCX_TLS, which UCX itself reads: Squeeze only names it). Nothing
// here reads the environment, and no UCX header is needed to fill it.
#pragma once

#include <string>

namespace squeeze::transport::ucx {

constexpr const char* kDefaultLibrary = "libucp.so.0";

struct UcxOptions {
  // The libucp to dlopen (a name the dynamic loader searches for, or a path).
  std::string library = kDefaultLibrary;
  // UCX_TLS as UCX will read it, only to describe the device in the log; empty: unset, so
  // UCX picks among all its transports.
  std::string tls;
};

}  // namespace squeeze::transport::ucx
