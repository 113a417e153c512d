#include "perf/collective/collnet_comm.h"

#include <stdexcept>
#include <vector>

#include "perf/common/nccl_result.h"
#include "perf/common/plugin_log.h"

namespace squeeze::perf {

namespace {

constexpr std::size_t kHandleBytes = 128;  // NCCL_NET_HANDLE_MAXSIZE

}  // namespace

CollNetComm::CollNetComm(const PluginLib& lib, Bootstrap& boot, const CollNetSpec& spec)
    : lib_(lib), spec_(spec), rank_(boot.rank()), nranks_(boot.nranks()) {
  try {
    chain_ = std::make_unique<ProfChain>(spec.chain ? lib.profiler() : nullptr, lib.instance(),
                                         spec.comm_id, spec.name, nranks_, rank_);
    nccl_net_comm_config cfg{-1};
    check_nccl(lib.net()->init(&net_ctx_, spec.comm_id, &cfg, perf_logger,
                               ProfChain::callback(lib.instance())),
               "init");
    table_ = std::make_unique<CollNetTable>(lib, CollNetTable::kNcclVersion);
    check_nccl(table_->init(spec.comm_id, perf_logger), "collective network init");
    alignas(8) unsigned char handle[kHandleBytes] = {};
    void* listen = nullptr;
    check_nccl(table_->listen(spec.dev, handle, &listen), "collective network listen");
    std::vector<unsigned char> all(kHandleBytes * static_cast<std::size_t>(nranks_));
    boot.allgather(handle, all.data(), kHandleBytes);
    std::vector<void*> handles;
    for (int r = 0; r < nranks_; ++r)
      handles.push_back(all.data() + kHandleBytes * static_cast<std::size_t>(r));
    // One rank per node: the node count and index are the rank count and rank.
    const int rc = table_->connect(handles.data(), nranks_, rank_, listen, &coll_);
    table_->close_listen(listen);  // NCCL closes it right after the connect
    check_nccl(rc, "collective network connect");
    if (coll_ == nullptr)
      throw std::runtime_error("plugin collective network connect returned no comm");
    proxy_ = std::make_unique<ChainProxy>(*table_, coll_, spec.channels);
    if (proxy_->setup() != 0) throw std::runtime_error("collective network " + proxy_->error());
  } catch (...) {
    release();  // the destructor does not run for a constructor that throws
    throw;
  }
}

CollNetComm::~CollNetComm() { release(); }

void CollNetComm::release() noexcept {
  proxy_.reset();  // deregMr
  if (coll_ != nullptr) table_->close_coll(coll_);
  coll_ = nullptr;
  if (table_ != nullptr) table_->finalize();
  table_.reset();
  if (net_ctx_ != nullptr && lib_.net()->finalize != nullptr) lib_.net()->finalize(net_ctx_);
  net_ctx_ = nullptr;
  chain_.reset();
}

bool CollNetComm::supports(int nccl_dtype, int nccl_op) {
  int yes = 0;
  check_nccl(table_->reduce_support(nccl_dtype, nccl_op, &yes), "collective network reduceSupport");
  return yes == 1;
}

void CollNetComm::allreduce(const uint8_t* in, uint8_t* out, uint64_t count, int nccl_dtype,
                            std::size_t elem, const char* nccl_dtype_name, int nccl_op) {
  // What NCCL's launch reports before the proxy runs the collective: the API call and the
  // collective on CollNetChain, both stopped once the proxy is kicked.
  void* api = chain_->coll_api("AllReduce", count, nccl_dtype_name);
  void* coll = chain_->coll(api, seq_++, "AllReduce", in, out, count, nccl_dtype_name,
                            "COLLNET_CHAIN", "SIMPLE", spec_.channels);
  chain_->stop(api);
  chain_->stop(coll);
  const int rc = proxy_->allreduce(in, out, count, nccl_dtype, elem, nccl_op, spec_.timeout_s);
  if (rc != 0)
    throw std::runtime_error("rank " + std::to_string(rank_) + ": collective network all-reduce " +
                             std::to_string(seq_ - 1) + ": " + proxy_->error());
}

}  // namespace squeeze::perf
