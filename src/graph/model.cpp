#include "graph/model.hpp"

#include "core/checked.hpp"

namespace prenet {

std::string to_string(const Shape& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}

std::int64_t elements(const Shape& shape) {
    std::int64_t n = 1;
    for (auto d : shape) n = checked_mul(n, d, "tensor size");
    return n;
}

}  // namespace prenet
