// The public face of the codec library: dtypes, codec ids and parameters, status, and the
// frame API. Knows nothing of NCCL or transports. See compress/FORMAT.md for the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace squeeze::compress {

enum class Dtype : uint8_t { kBytes = 0, kFloat32 = 1, kBfloat16 = 2, kFloat16 = 3 };
std::size_t dtype_size(Dtype d);  // 1 for kBytes
const char* dtype_name(Dtype d);  // "bytes", "float32", "bfloat16", "float16"
bool parse_dtype(std::string_view s, Dtype* out);
inline bool is_float(Dtype d) { return d != Dtype::kBytes; }

enum class CodecId : uint8_t {
  kStored = 0,
  kQuantize = 1,
  kThreshold = 2,
  kLossless = 3,
  kCast = 4
};
const char* codec_name(CodecId c);  // "stored", "quantize", "threshold", "lossless", "cast"
bool parse_codec(std::string_view s, CodecId* out);

// What the layers above need to know of a codec, so that they never branch on its id.
struct CodecTraits {
  bool lossy = false;          // changes values, within a bound its parameters state
  bool stateful = false;       // keeps per-stream state between messages (ThresholdState):
                               // a stream's encodes must run one at a time, in order
  bool row_dedupe = false;     // may send each distinct row once (QuantizeParams::dedupe_rows)
  bool float32_only = false;   // applies to float32 data only (cast narrows float32)
  bool sparsifying = false;    // drops values (they decode as 0) with no bound on the change:
                               // meaningful in a sum (the dropped mass can be fed back
                               // later), never in a min or max
  uint8_t bytes_as_words = 0;  // data of unknown type is coded as words of this many bytes when
                               // they divide it (lossless: float byte planes, exact for any
                               // bytes); 0: as bytes
};
// The traits of c (all false for an id this build does not know).
const CodecTraits& codec_traits(CodecId c);
inline bool is_lossy(CodecId c) { return codec_traits(c).lossy; }

enum class BoundMode : uint8_t {
  kAbs = 0,
  kRel = 1,
  kRelRow = 2
};  // rel: to the message's value range

struct QuantizeParams {
  BoundMode mode = BoundMode::kRel;
  double error_bound = 1e-2;  // absolute, or relative to the value range (of message or row)
  uint32_t row_length = 0;    // elements per row; 0 = no rows
  bool dedupe_rows = false;   // send each distinct row once (needs row_length)
  // CPU only (the collective network, plugin/collnet): the codes are Rice-coded per block
  // instead of bit-packed (quantize body flag 0x02, compress/FORMAT.md). The CUDA codecs
  // neither write nor read such bodies: they refuse these parameters and such frames.
  bool rice_codes = false;
  // kRel only, CPU only: the range the bound is relative to is max(the message's own value
  // range, reference_range), for a caller whose bound is relative to a larger whole the
  // message is part of (the collective network's call). 0: the message's own range.
  double reference_range = 0;
};

struct ThresholdParams {
  double keep = 0.01;                   // fraction of elements kept, in (0, 1]
  uint32_t refresh_every = 1000;        // messages of one stream between threshold searches
  uint32_t sample_size = 65536;         // elements sampled to estimate the quantile
  Dtype value_dtype = Dtype::kFloat32;  // kept values narrowed to bf16/fp16 optionally
  bool error_feedback = false;          // add the stream's residual back before thresholding
};

struct CastParams {
  Dtype to = Dtype::kBfloat16;  // float32 -> bfloat16 or float16
};

struct CodecParams {
  CodecId codec = CodecId::kStored;
  QuantizeParams quantize;
  ThresholdParams threshold;
  CastParams cast;
  bool checksum = false;  // CRC32C over the body
};

class Status {
 public:
  enum class Code : uint8_t {
    kOk = 0,
    kInvalidArgument,
    kCorrupt,
    kTruncated,
    kUnsupported,
    kNoSpace
  };
  Status() = default;
  Status(Code c, std::string msg) : code_(c), message_(std::move(msg)) {}
  static Status Ok() { return {}; }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Per-stream adaptive state for the threshold codec (tau, refresh counter, residual).
// Defined in compress/threshold.h. A null pointer means "search tau for this message".
class ThresholdState;

// What an encoder found that a caller may adapt to (filled when EncodeRequest::report is set).
struct EncodeReport {
  uint64_t dedupe_rows =
      0;  // full rows the quantize codec's row dedupe looked at (0: it did not run)
  uint64_t dedupe_unique = 0;  // of those, the distinct ones (each sent once)
};

struct EncodeRequest {
  Dtype dtype = Dtype::kBytes;
  const void* src = nullptr;
  uint64_t count = 0;  // elements (bytes for kBytes)
  const CodecParams* params = nullptr;
  ThresholdState* threshold_state = nullptr;
  EncodeReport* report = nullptr;  // optional; reset by encode_frame
};

// Every frame starts with this fixed header (layout in compress/FORMAT.md); a transport may
// read exactly this many bytes, call peek_frame() on them and learn the frame's full size.
inline constexpr std::size_t kFrameHeaderBytes = 40;
inline constexpr uint32_t kFrameMagic = 0x465A5153u;  // "SQZF" as little-endian bytes
inline constexpr uint8_t kFrameVersion = 1;

struct FrameInfo {
  CodecId codec;
  Dtype dtype;
  uint64_t count;           // elements
  uint64_t original_bytes;  // bytes after decoding
  uint64_t body_bytes;
  uint64_t frame_bytes;  // header + body
  bool has_checksum;
};

// Largest frame encode_frame() can produce for this request: exactly kFrameHeaderBytes plus
// the stored size, because a body that would not be smaller than the input is replaced by a
// stored body. A dst of this size never fails with kNoSpace.
std::size_t max_frame_bytes(const EncodeRequest& req);
// Encodes into dst. Falls back to a stored frame when the codec would expand the input.
Status encode_frame(const EncodeRequest& req, std::span<uint8_t> dst, std::size_t* frame_bytes);
// Validates the header (and nothing after it) and describes the frame.
Status peek_frame(std::span<const uint8_t> frame, FrameInfo* info);
// Whether the CUDA decoder (compress/cuda) reads this frame: kUnsupported, naming the
// feature, for a frame only the CPU decodes (a quantize body with Rice-coded codes);
// otherwise whatever peek_frame says. Reads the header and the first bytes of the body only.
Status gpu_decodable(std::span<const uint8_t> frame);
// Validates everything before writing; never writes outside dst; dst.size() must be >=
// original_bytes.
Status decode_frame(std::span<const uint8_t> frame, std::span<uint8_t> dst, std::size_t* written);

}  // namespace squeeze::compress
