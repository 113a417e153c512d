// The codec work of one call, runnable inline or on a worker thread. Each job
// reads and writes only its call (and the stream states the progress thread
// marked busy for it) and publishes its result through the call's Job.
#pragma once

namespace squeeze::collnet {

// Codes piece p of the input for every node p whose plan compresses
// (Call::encode).
void run_encode_job(void* call) noexcept;
// Decodes every version of this node's piece, reduces them in node order, codes
// the result once and keeps its decoded values in recvData (Call::reduce).
void run_reduce_job(void* call) noexcept;
// Decodes node p's result frame into recvData (PeerPart::decode).
void run_result_decode_job(void* part) noexcept;

}  // namespace squeeze::collnet
