// Internal to the CUDA codecs: the device-side decode state and the per-codec enqueue
// functions that compress/cuda/gpu_codec.cu dispatches to.
#pragma once

#include "compress/cuda/gpu_util.cuh"

namespace squeeze::compress::gpu {

// A quantize body's layout as the device parsed it (offsets are from the body start).
struct QuantizeLayoutDev {
  uint32_t mode, dedupe, row_length, n_escapes, n_unique, map_bits;
  double offset;
  float step;
  uint64_t n_full_rows, tail, n_stream, n_param_rows, n_blocks;
  uint64_t off_map, off_params, off_widths, off_payload, payload_bytes, off_esc_idx, off_esc_val;
};

struct DecodeState {
  FrameState fs;  // fs.err: first failure (smallest offset) or kNoError
  uint32_t codec, dtype, has_checksum, pad;
  uint64_t count, original, body_bytes;
  uint64_t crc_len;  // bytes the body CRC covers: body_bytes once the header is valid and flagged
  QuantizeLayoutDev q;
};

// Encoders: each enqueues its whole frame, ending with enqueue_encode_finish().
Status enqueue_stored_encode(const EncodeChunk& c, FrameState* state, ChunkResult* result,
                             cudaStream_t s, Scratch* scratch);
Status enqueue_cast_encode(const EncodeChunk& c, FrameState* state, ChunkResult* result,
                           cudaStream_t s, Scratch* scratch);
Status enqueue_quantize_encode(const EncodeChunk& c, FrameState* state, ChunkResult* result,
                               cudaStream_t s, Scratch* scratch);

// Threshold and lossless frames through the body twins of gpu_bodies.h.
Status enqueue_body_codec_encode(const EncodeChunk& c, FrameState* state, ChunkResult* result,
                                 cudaStream_t s, Scratch* scratch);
// Needs the header on the host (info, from DecodeChunk::host_header); writes dst only if the
// device-side frame checks in *d and the body's own checks all pass.
Status enqueue_body_codec_decode(const DecodeChunk& c, const FrameInfo& info, DecodeState* d,
                                 cudaStream_t s, Scratch* scratch);

// Decoders: run after the frame header was parsed into *d; each does nothing unless the frame
// is its codec and no check failed.
Status enqueue_simple_decode(const DecodeChunk& c, const DecodeState* d, cudaStream_t s);
// Validates the quantize body (adding failures to d->fs.err), then decodes it.
Status enqueue_quantize_decode(const DecodeChunk& c, DecodeState* d, cudaStream_t s,
                               Scratch* scratch);

}  // namespace squeeze::compress::gpu
