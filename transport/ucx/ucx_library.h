// libucp reached at run time: dlopen("libucp.so.0", or UcxOptions::library) and a table of
// the ucp_* / ucs_* functions this transport calls, resolved with dlsym. The plugin never
// links UCX, so it loads on machines without it. The UCX context itself lives in a Session
// (ucx_session.h), only while comms exist.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <memory>
#include <string>

#include "transport/ucx/ucx_options.h"

namespace squeeze::transport::ucx {

// The functions we call, as (member, exported symbol). Names that ucp.h defines as inline
// wrappers (ucp_init -> ucp_init_version) are listed by their real exported symbol.
#define SQUEEZE_UCX_FUNCTIONS(X)                        \
  X(get_version, ucp_get_version)                       \
  X(config_read, ucp_config_read)                       \
  X(config_release, ucp_config_release)                 \
  X(init_version, ucp_init_version)                     \
  X(cleanup, ucp_cleanup)                               \
  X(worker_create, ucp_worker_create)                   \
  X(worker_destroy, ucp_worker_destroy)                 \
  X(worker_get_address, ucp_worker_get_address)         \
  X(worker_release_address, ucp_worker_release_address) \
  X(worker_progress, ucp_worker_progress)               \
  X(ep_flush_nbx, ucp_ep_flush_nbx)                     \
  X(ep_create, ucp_ep_create)                           \
  X(ep_close_nbx, ucp_ep_close_nbx)                     \
  X(tag_send_nbx, ucp_tag_send_nbx)                     \
  X(tag_recv_nbx, ucp_tag_recv_nbx)                     \
  X(request_check_status, ucp_request_check_status)     \
  X(request_cancel, ucp_request_cancel)                 \
  X(request_free, ucp_request_free)                     \
  X(status_string, ucs_status_string)

struct Api {
#define SQUEEZE_UCX_MEMBER(member, symbol) decltype(&::symbol) member = nullptr;
  SQUEEZE_UCX_FUNCTIONS(SQUEEZE_UCX_MEMBER)
#undef SQUEEZE_UCX_MEMBER
};

class Library {
 public:
  // Loads `path` (empty: kDefaultLibrary) and resolves every function. Null with *why (one
  // sentence) when either fails.
  static std::shared_ptr<const Library> open(const std::string& path, std::string* why);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const Api& api() const { return api_; }
  const std::string& version() const { return version_; }
  std::string status_str(ucs_status_t s) const { return api_.status_string(s); }
  // Set once a peer that UCX reaches without error handling could not be reached with it
  // (UCX 1.13's shared-memory transports lack it), so later endpoints skip the try.
  bool peer_errors_unsupported() const { return no_peer_errors_.load(std::memory_order_relaxed); }
  void note_peer_errors_unsupported() const {
    no_peer_errors_.store(true, std::memory_order_relaxed);
  }

 private:
  Library() = default;
  void* handle_ = nullptr;
  Api api_;
  std::string version_;
  mutable std::atomic<bool> no_peer_errors_{false};
};

}  // namespace squeeze::transport::ucx
