#include "tests/collnet/collnet_api.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "tests/plugin_path.h"

namespace squeeze::testing {

namespace {

void test_logger(int level, unsigned long, const char* file, int line, const char* fmt, ...) {
  if (level > kLogWarn && getenv("SQUEEZE_TEST_VERBOSE") == nullptr) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  fprintf(stderr, "[plugin log %d] %s:%d %s\n", level, file, line, buf);
}

std::string plugin_path() {
  setenv("SQUEEZE_SOCKET_IFNAME", "lo", 0);
  return find_plugin().path;
}

}  // namespace

CollNetApi::CollNetApi(int version, bool private_copy)
    : lib_(plugin_path(),
           private_copy ? perf::PluginLib::Load::kPrivateCopy : perf::PluginLib::Load::kShared),
      table_(std::make_unique<perf::CollNetTable>(lib_, version)) {}

CollNetApi::~CollNetApi() { finalize(); }  // the library stays loaded, as NCCL keeps it

int CollNetApi::init(uint64_t comm_id) {
  nccl_net_comm_config cfg{-1};
  if (int r = lib_.net()->init(&net_ctx_, comm_id, &cfg, test_logger, nullptr); r != 0) return r;
  return table_->init(comm_id, test_logger);
}

int CollNetApi::finalize() {
  int r = table_->finalize();
  if (net_ctx_ != nullptr) {
    const int n = lib_.net()->finalize(net_ctx_);
    if (r == 0) r = n;
  }
  net_ctx_ = nullptr;
  chain_.reset();  // the profiler's finalize
  return r;
}

int CollNetApi::net_props(int dev, CollNetProps* out) {
  nccl_net_props_v11 p{};
  const int r = lib_.net()->getProperties(dev, &p);
  if (r == 0) {
    out->name = p.name != nullptr ? p.name : "";
    out->pci_path = p.pciPath != nullptr ? p.pciPath : "";
    out->ptr_support = p.ptrSupport;
    out->max_coll = p.maxCollBytes;
  }
  return r;
}

int CollNetApi::profiler_init(uint64_t comm_id, int nranks, int rank) {
  try {
    chain_ = std::make_unique<perf::ProfChain>(lib_.profiler(), lib_.instance(), comm_id,
                                               "collnet_test", nranks, rank);
  } catch (const std::exception& e) {
    fprintf(stderr, "profiler init: %s\n", e.what());
    return 1;
  }
  return 0;
}

void CollNetApi::announce_allreduce(uint64_t seq, uint64_t count, const char* nccl_dtype,
                                    int nchannels) {
  if (chain_ == nullptr) return;
  // NCCL stops Coll events before the proxy runs them.
  chain_->stop(chain_->coll(nullptr, seq, "AllReduce", nullptr, nullptr, count, nccl_dtype,
                            "COLLNET_CHAIN", "SIMPLE", nchannels));
}

}  // namespace squeeze::testing
