// The lossless codec's entry in the body-codec table.
#include "compress/lossless.h"

namespace squeeze::compress {

const BodyCodec kLosslessBody = {lossless_body_bound, lossless_encode_body, lossless_decode_body};

}  // namespace squeeze::compress
