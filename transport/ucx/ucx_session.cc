#include "transport/ucx/ucx_session.h"

#include <unistd.h>

namespace squeeze::transport::ucx {

namespace {
struct ConfigDeleter {
  const Api* api;
  void operator()(ucp_config_t* c) const { api->config_release(c); }
};

// What sessions left to the process's exit (Session::keep_worker_until_exit) keep for UCX to
// call into: reachable from a static that is never destroyed, so nothing dangles and
// LeakSanitizer counts nothing as leaked.
struct KeptUntilExit {
  std::shared_ptr<const Library> lib;
  std::vector<std::unique_ptr<EpState>> retired;
};
void keep_until_exit(KeptUntilExit kept) {
  static auto* const mu = new std::mutex;
  static auto* const all = new std::vector<KeptUntilExit>;
  std::lock_guard<std::mutex> lock(*mu);
  all->push_back(std::move(kept));
}
}  // namespace

Status Session::create(std::shared_ptr<const Library> lib, std::shared_ptr<Session>* out) {
  std::shared_ptr<Session> s(new Session(std::move(lib)));
  const Api& api = s->api();
  const std::string& version = s->lib_->version();
  s->pid_ = getpid();
  ucp_config_t* raw = nullptr;
  ucs_status_t st = api.config_read(nullptr, nullptr, &raw);  // UCX_* from the environment
  if (st != UCS_OK)
    return Status::System("UCX " + version +
                          " cannot read its configuration: " + s->lib_->status_str(st));
  std::unique_ptr<ucp_config_t, ConfigDeleter> config(raw, ConfigDeleter{&api});
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_TAG;
  params.name = "squeeze";
  st = api.init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config.get(), &s->context_);
  if (st != UCS_OK) {
    s->context_ = nullptr;
    return Status::System("ucp_init of UCX " + version + " failed: " + s->lib_->status_str(st));
  }
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_MULTI;
  st = api.worker_create(s->context_, &wp, &s->worker_);
  if (st != UCS_OK) {
    s->worker_ = nullptr;
    return Status::System("ucp_worker_create with UCX " + version +
                          " failed: " + s->lib_->status_str(st));
  }
  ucp_address_t* addr = nullptr;
  std::size_t len = 0;
  st = api.worker_get_address(s->worker_, &addr, &len);
  if (st != UCS_OK) return Status::System("ucp_worker_get_address: " + s->lib_->status_str(st));
  const auto* bytes = reinterpret_cast<const uint8_t*>(addr);
  s->address_.assign(bytes, bytes + len);
  api.worker_release_address(s->worker_, addr);
  *out = std::move(s);
  return Status::Ok();
}

bool Session::usable() const { return pid_ == getpid(); }

void Session::retire(std::unique_ptr<EpState> state) {
  std::lock_guard<std::mutex> lock(retired_mu_);
  retired_.push_back(std::move(state));
}

Session::~Session() {
  // In a forked child these are the parent's: destroying them would remove its shared
  // memory segments, so the child leaves them be.
  if (!usable()) return;
  if (keep_worker_.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(retired_mu_);
    keep_until_exit({lib_, std::move(retired_)});
    return;
  }
  if (worker_ != nullptr) api().worker_destroy(worker_);
  if (context_ != nullptr) api().cleanup(context_);
}

Status SessionSource::acquire(std::shared_ptr<Session>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (std::shared_ptr<Session> s = live_.lock()) {
    if (!s->usable())
      return Status::Usage(
          "UCX was in use when this process was forked; a forked child cannot use it");
    *out = std::move(s);
    return Status::Ok();
  }
  std::shared_ptr<Session> s;
  if (Status st = Session::create(lib_, &s); !st.ok()) return st;
  live_ = s;
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace squeeze::transport::ucx
