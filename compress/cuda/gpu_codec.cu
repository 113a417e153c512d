// gpu::Codec: host-side checks, per-chunk dispatch to the GPU encoders and decoders, the
// device-side frame header parse, and the results.
#include <string>

#include "compress/cuda/gpu_internal.cuh"
#include "compress/quantize.h"

namespace squeeze::compress::gpu {
namespace {

__global__ void parse_frame_kernel(const uint8_t* f, uint64_t size, uint64_t cap,
                                   const uint32_t* crc_table, bool body_twins, DecodeState* d) {
  *d = DecodeState{};
  d->fs.err = kNoError;
  auto fail = [&](uint64_t off, uint32_t field, uint64_t value) {
    d->fs.err = (off << 8) | field;
    d->fs.err_value = value;
  };
  if (size < kFrameHeaderBytes) return fail(0, kFieldFrameSize, size);
  if (dget32(f) != kFrameMagic) return fail(0, kFieldMagic, dget32(f));
  if (f[4] != kFrameVersion) return fail(4, kFieldVersion, f[4]);
  if (dget32(f + 36) != ~crc_update(0xffffffffu, f, 36, crc_table))
    return fail(36, kFieldHeaderCrc, dget32(f + 36));
  const uint32_t codec = f[5], dtype = f[6], flags = f[7];
  if (codec > static_cast<uint32_t>(CodecId::kCast)) return fail(5, kFieldCodec, codec);
  if (dtype > static_cast<uint32_t>(Dtype::kFloat16)) return fail(6, kFieldDtype, dtype);
  if (flags & ~1u) return fail(7, kFieldFlags, flags);
  if (!(flags & 1u) && dget32(f + 32) != 0) return fail(32, kFieldBodyCrcUnset, dget32(f + 32));
  const uint64_t count = dget64(f + 8), original = dget64(f + 16), body = dget64(f + 24);
  const uint64_t es = dsize(dtype);
  if (__umul64hi(count, es) != 0 || count * es != original)
    return fail(16, kFieldOriginalBytes, original);
  if (body > size - kFrameHeaderBytes) return fail(24, kFieldBodyTruncated, body);
  if (body < size - kFrameHeaderBytes)
    return fail(24, kFieldBodyTrailing, size - kFrameHeaderBytes - body);
  if (cap < original) return fail(16, kFieldDstTooSmall, original);
  if (!body_twins && (codec == static_cast<uint32_t>(CodecId::kThreshold) ||
                      codec == static_cast<uint32_t>(CodecId::kLossless))) {
    return fail(5, kFieldUnsupportedCodec, codec);  // their decoders need the header on the host
  }
  const uint8_t* b = f + kFrameHeaderBytes;
  if (codec == static_cast<uint32_t>(CodecId::kStored) && body != original)
    return fail(24, kFieldStoredSize, body);
  if (codec == static_cast<uint32_t>(CodecId::kCast)) {
    if (dtype != static_cast<uint32_t>(Dtype::kFloat32)) return fail(6, kFieldCastDtype, dtype);
    if (body < 4) return fail(40, kFieldCastHeader, body);
    if ((b[0] != 2 && b[0] != 3) || b[1] || b[2] || b[3]) return fail(40, kFieldCastHeader, b[0]);
    if ((body - 4) / 2 != count || (body - 4) % 2) return fail(44, kFieldCastSize, body - 4);
  }
  d->codec = codec;
  d->dtype = dtype;
  d->has_checksum = flags & 1u;
  d->count = count;
  d->original = original;
  d->body_bytes = body;
  d->crc_len = (flags & 1u) ? body : 0;  // the body CRC kernels only read what this allows
}

__global__ void check_crc_kernel(const uint8_t* f, DecodeState* d) {
  if (d->fs.err == kNoError && d->has_checksum && dget32(f + 32) != d->fs.body_crc) {
    report(&d->fs.err, 32, kFieldBodyCrc);
    d->fs.err_value = d->fs.body_crc;
  }
}

__global__ void decode_result_kernel(const DecodeState* d, ChunkResult* r) {
  const unsigned long long e = d->fs.err;
  r->bytes = e == kNoError ? d->original : 0;
  r->field = e == kNoError ? kFieldNone : static_cast<uint32_t>(e & 0xff);
  r->offset = e == kNoError ? 0 : e >> 8;
  r->value = e == kNoError ? 0 : d->fs.err_value;
  r->code = 0;
  if (e == kNoError) return;
  switch (r->field) {
    case kFieldFrameSize:
    case kFieldBodyTruncated:
    case kFieldQuantizeSection: r->code = static_cast<uint32_t>(Status::Code::kTruncated); break;
    case kFieldVersion:
    case kFieldCodec:
    case kFieldDtype:
    case kFieldUnsupportedCodec: r->code = static_cast<uint32_t>(Status::Code::kUnsupported); break;
    case kFieldDstTooSmall: r->code = static_cast<uint32_t>(Status::Code::kInvalidArgument); break;
    case kFieldBody: r->code = static_cast<uint32_t>(d->fs.err_value); break;
    default: r->code = static_cast<uint32_t>(Status::Code::kCorrupt); break;
  }
}

const char* field_name(uint32_t f) {
  static const char* const kNames[] = {
      "none",
      "frame size",
      "magic",
      "version",
      "header checksum",
      "codec",
      "dtype",
      "flags",
      "body checksum (flag clear)",
      "original_bytes",
      "body_bytes (truncated)",
      "body_bytes (trailing bytes)",
      "destination size",
      "body checksum",
      "stored body size",
      "cast header",
      "cast body size",
      "cast frame dtype",
      "quantize header field",
      "quantize section",
      "row map",
      "row parameters",
      "block width",
      "escape index",
      "padding code",
      "trailing bytes",
      "codec (give DecodeChunk::host_header to decode it on the GPU)",
      "body"};
  return f < sizeof kNames / sizeof kNames[0] ? kNames[f] : "unknown field";
}

Status check_encode(const EncodeChunk& c) {
  const CodecParams defaults;
  const CodecParams& p = c.params ? *c.params : defaults;
  if (dtype_size(c.dtype) == 0) return {Status::Code::kInvalidArgument, "gpu: unknown dtype"};
  if (c.count > (~0ull - kFrameHeaderBytes) / dtype_size(c.dtype)) {
    return {Status::Code::kInvalidArgument, "gpu: count " + std::to_string(c.count) + " overflows"};
  }
  if (c.src == nullptr && c.count > 0) return {Status::Code::kInvalidArgument, "gpu: src is null"};
  const std::size_t need = kFrameHeaderBytes + c.count * dtype_size(c.dtype);
  if (c.dst == nullptr || c.dst_capacity < need) {
    return {Status::Code::kNoSpace, "gpu: dst holds " + std::to_string(c.dst_capacity) +
                                        " bytes, frames may need " + std::to_string(need)};
  }
  switch (p.codec) {
    case CodecId::kStored: return Status::Ok();
    case CodecId::kCast:
      if (c.dtype != Dtype::kFloat32) {
        return {Status::Code::kInvalidArgument,
                std::string("cast: input must be float32, got ") + dtype_name(c.dtype)};
      }
      if (p.cast.to != Dtype::kBfloat16 && p.cast.to != Dtype::kFloat16) {
        return {Status::Code::kInvalidArgument, "cast: target must be bfloat16 or float16"};
      }
      return Status::Ok();
    case CodecId::kQuantize: {
      const QuantizeParams& q = p.quantize;
      if (!is_float(c.dtype))
        return {Status::Code::kInvalidArgument, "quantize: input must be a float dtype"};
      if (!(q.error_bound > 0 && q.error_bound < 1.8e308)) {
        return {Status::Code::kInvalidArgument, "quantize: error_bound must be finite and > 0"};
      }
      if (static_cast<unsigned>(q.mode) > 2)
        return {Status::Code::kInvalidArgument, "quantize: unknown bound mode"};
      if ((q.mode == BoundMode::kRelRow || q.dedupe_rows) && q.row_length == 0) {
        return {Status::Code::kInvalidArgument,
                "quantize: rel-row mode and row dedupe need row_length > 0"};
      }
      if (c.count > 0xffffffffull)
        return {Status::Code::kInvalidArgument, "quantize: count exceeds 2^32-1 elements"};
      if (q.rice_codes || q.reference_range != 0) {
        return {Status::Code::kUnsupported,
                "quantize: Rice-coded codes and a reference range are CPU-only (the collective "
                "network's frames); the GPU encoder does not write them"};
      }
      return Status::Ok();
    }
    case CodecId::kThreshold:
      if (!is_float(c.dtype))
        return {Status::Code::kInvalidArgument, "threshold: input must be a float dtype"};
      return Status::Ok();
    case CodecId::kLossless: return Status::Ok();
  }
  return {Status::Code::kUnsupported,
          std::string("gpu: no GPU encoder for codec ") + codec_name(p.codec)};
}

}  // namespace

struct Codec::Impl {
  const uint32_t* crc_table = nullptr;
};

Codec::Codec() : impl_(std::make_unique<Impl>()) {}
Codec::~Codec() = default;

bool device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why)
      *why = e != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e)
                              : "no CUDA device";
    return false;
  }
  return true;
}

Status result_status(const ChunkResult& r) {
  if (r.code == 0) return Status::Ok();
  return {static_cast<Status::Code>(r.code),
          std::string("gpu frame: ") + field_name(r.field) + " at offset " +
              std::to_string(r.offset) + " is invalid (value " + std::to_string(r.value) + ")"};
}

Status Codec::encode(std::span<const EncodeChunk> chunks, cudaStream_t stream,
                     ChunkResult* results) {
  for (const EncodeChunk& c : chunks) {
    Status st = check_encode(c);
    if (!st.ok()) return st;
  }
  Scratch scratch(stream);
  FrameState* states = nullptr;
  ChunkResult* res_dev = nullptr;
  if (!scratch.alloc(&states, chunks.size()) || !scratch.alloc(&res_dev, chunks.size())) {
    return {Status::Code::kNoSpace, "gpu: out of device memory"};
  }
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const EncodeChunk& c = chunks[i];
    const CodecId id = c.params ? c.params->codec : CodecId::kStored;
    Status st;
    if (id == CodecId::kCast && c.count > 0) {
      st = enqueue_cast_encode(c, &states[i], &res_dev[i], stream, &scratch);
    } else if (id == CodecId::kQuantize && c.count > 0) {
      st = enqueue_quantize_encode(c, &states[i], &res_dev[i], stream, &scratch);
    } else if ((id == CodecId::kThreshold || id == CodecId::kLossless) && c.count > 0) {
      st = enqueue_body_codec_encode(c, &states[i], &res_dev[i], stream, &scratch);
    } else {
      st = enqueue_stored_encode(c, &states[i], &res_dev[i], stream, &scratch);
    }
    if (!st.ok()) return st;
  }
  SQUEEZE_CUDA_TRY(cudaMemcpyAsync(results, res_dev, chunks.size() * sizeof(ChunkResult),
                                   cudaMemcpyDeviceToHost, stream));
  return Status::Ok();
}

Status Codec::decode(std::span<const DecodeChunk> chunks, cudaStream_t stream,
                     ChunkResult* results) {
  if (impl_->crc_table == nullptr) impl_->crc_table = device_crc_table();
  if (impl_->crc_table == nullptr)
    return {Status::Code::kUnsupported, "gpu: CRC table unavailable"};
  Scratch scratch(stream);
  DecodeState* states = nullptr;
  ChunkResult* res_dev = nullptr;
  if (!scratch.alloc(&states, chunks.size()) || !scratch.alloc(&res_dev, chunks.size())) {
    return {Status::Code::kNoSpace, "gpu: out of device memory"};
  }
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const DecodeChunk& c = chunks[i];
    if (c.frame == nullptr || (c.dst == nullptr && c.dst_capacity > 0)) {
      return {Status::Code::kInvalidArgument, "gpu: null frame or destination"};
    }
    const auto* frame = static_cast<const uint8_t*>(c.frame);
    DecodeState* d = &states[i];
    FrameInfo info{};
    const bool host_ok =
        c.host_header != nullptr &&
        peek_frame(std::span(static_cast<const uint8_t*>(c.host_header), kFrameHeaderBytes), &info)
            .ok();
    if (host_ok && info.frame_bytes != c.frame_bytes) {
      return {Status::Code::kInvalidArgument,
              "gpu: host_header describes a " + std::to_string(info.frame_bytes) +
                  "-byte frame, the chunk has " + std::to_string(c.frame_bytes)};
    }
    parse_frame_kernel<<<1, 1, 0, stream>>>(frame, c.frame_bytes, c.dst_capacity, impl_->crc_table,
                                            host_ok, d);
    const std::size_t max_body =
        c.frame_bytes > kFrameHeaderBytes ? c.frame_bytes - kFrameHeaderBytes : 0;
    Status st = enqueue_body_crc(frame, &d->crc_len, max_body, &d->fs.body_crc, stream, &scratch);
    if (!st.ok()) return st;
    check_crc_kernel<<<1, 1, 0, stream>>>(frame, d);
    st = enqueue_quantize_decode(c, d, stream,
                                 &scratch);  // validates first; writes only if all is well
    if (!st.ok()) return st;
    st = enqueue_simple_decode(c, d, stream);
    if (!st.ok()) return st;
    if (host_ok && info.original_bytes <= c.dst_capacity) {
      st = enqueue_body_codec_decode(c, info, d, stream, &scratch);
      if (!st.ok()) return st;
    }
    decode_result_kernel<<<1, 1, 0, stream>>>(d, &res_dev[i]);
  }
  SQUEEZE_CUDA_TRY(cudaGetLastError());
  SQUEEZE_CUDA_TRY(cudaMemcpyAsync(results, res_dev, chunks.size() * sizeof(ChunkResult),
                                   cudaMemcpyDeviceToHost, stream));
  return Status::Ok();
}

}  // namespace squeeze::compress::gpu
