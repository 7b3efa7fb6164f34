#include "predict/cached_predictor.hpp"

#include <functional>

namespace prenet {

size_t CachedPredictor::Hash::operator()(const Kernel& k) const {
    size_t h = std::hash<double>()(k.flops) ^ (std::hash<double>()(k.bytes) << 1);
    h ^= std::hash<std::int64_t>()(k.batch * 131 + k.m * 31 + k.n * 17 + k.k + k.elements) << 2;
    return h ^ (size_t(k.phase) << 3) ^ (size_t(k.family) << 7) ^ (std::hash<std::string>()(k.op) << 11);
}

bool CachedPredictor::Same::operator()(const Kernel& a, const Kernel& b) const {
    return a.family == b.family && a.phase == b.phase && a.precision == b.precision && a.flops == b.flops &&
           a.bytes == b.bytes && a.batch == b.batch && a.m == b.m && a.n == b.n && a.k == b.k &&
           a.elements == b.elements && a.conv == b.conv && a.op == b.op;
}

double CachedPredictor::kernel_ms(const Kernel& k, const HardwareSpec& hw) const {
    if (&hw != &hw_) return inner_.kernel_ms(k, hw);  // another accelerator: not this cache's
    auto it = times_.find(k);
    if (it != times_.end()) return it->second;
    return times_.emplace(k, inner_.kernel_ms(k, hw)).first->second;
}

}  // namespace prenet
