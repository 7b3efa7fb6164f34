#include "ops/window.hpp"

namespace prenet::ops {

std::optional<std::int64_t> window_output(std::int64_t in, std::int64_t span, std::int64_t stride, std::int64_t pad_total,
                                          bool ceil_mode) {
    std::int64_t room = in + pad_total - span;
    if (room < 0) return std::nullopt;
    std::int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad_total / 2) --out;
    return out;
}

std::int64_t same_padding_output(std::int64_t in, std::int64_t stride) { return (in + stride - 1) / stride; }

}  // namespace prenet::ops
