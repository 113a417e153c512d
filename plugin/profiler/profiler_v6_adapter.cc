#include "plugin/profiler/profiler_v6_adapter.h"

#include "plugin/profiler/chain_profiler.h"

namespace squeeze::profiler {

bool to_v5(const nccl_profiler_event_descr_v6& in, nccl_profiler_event_descr_v5* out) {
  *out = {};
  out->type = in.type;
  out->parentObj = in.parentObj;
  out->rank = in.rank;
  switch (in.type) {
    case kProfileGroup:
    case kProfileProxyCtrl: return true;  // no payload
    case kProfileGroupApi: out->groupApi = in.groupApi; return true;
    case kProfileCollApi: out->collApi = in.collApi; return true;
    case kProfileP2pApi: out->p2pApi = in.p2pApi; return true;
    case kProfileKernelLaunch: out->kernelLaunch = in.kernelLaunch; return true;
    case kProfileColl: out->coll = in.coll; return true;
    case kProfileP2p: out->p2p = in.p2p; return true;
    case kProfileProxyOp: out->proxyOp = in.proxyOp; return true;
    case kProfileProxyStep: out->proxyStep = in.proxyStep; return true;
    case kProfileKernelCh: out->kernelCh = in.kernelCh; return true;
    case kProfileNetPlugin: out->netPlugin = in.netPlugin; return true;
    default: return false;  // CeColl, CeSync, CeBatch (v6), or a type NCCL adds later
  }
}

}  // namespace squeeze::profiler

using squeeze::profiler::ChainProfiler;

// As in v5, an event the profiler cannot or need not follow gets a NULL handle and success:
// NCCL checks the handle before stopping copy-engine events, and our stop ignores NULL.
extern "C" nccl_result_t squeeze_profiler_v6_start_event(void* context, void** eHandle,
                                                         nccl_profiler_event_descr_v6* eDescr) {
  try {
    if (eHandle == nullptr) return kNcclSuccess;
    *eHandle = nullptr;
    nccl_profiler_event_descr_v5 d;
    if (eDescr == nullptr || !squeeze::profiler::to_v5(*eDescr, &d)) return kNcclSuccess;
    return ChainProfiler::instance().start(context, eHandle, &d);
  } catch (...) {
    if (eHandle != nullptr) *eHandle = nullptr;
    return kNcclSuccess;
  }
}
