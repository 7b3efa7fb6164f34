#pragma once
// The length a sliding window (a convolution's or a pooling's) gives along one spatial dim: one rule for the
// op catalogue's shape inference and for the importers (Keras' and ONNX's padding words become the same
// numbers here), so a model's shapes do not depend on which door it came in by.
#include <cstdint>
#include <optional>

namespace prenet::ops {

// A window of `span` elements (the dilated kernel: dilation x (kernel - 1) + 1) moving by `stride` over `in`
// elements padded with `pad_total` in all (both ends): floor((in + pad_total - span) / stride) + 1 windows, or,
// with `ceil_mode`, the ceiling, less a last window that would start past the input and its first half of the
// padding (PyTorch's and ONNX's rule). nullopt when the window is larger than the padded input.
std::optional<std::int64_t> window_output(std::int64_t in, std::int64_t span, std::int64_t stride, std::int64_t pad_total,
                                          bool ceil_mode);

// "same" padding (Keras' "same" and Conv1D's "causal", ONNX's SAME_UPPER / SAME_LOWER): ceil(in / stride)
// whatever the window, padding as much as that needs.
std::int64_t same_padding_output(std::int64_t in, std::int64_t stride);

}  // namespace prenet::ops
