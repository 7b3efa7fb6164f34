#include "predict/cached_predictor.hpp"

namespace prenet {

double CachedPredictor::kernel_ms(const Kernel& k, const HardwareSpec& hw) const {
    if (&hw != &hw_) return inner_.kernel_ms(k, hw);  // another accelerator: not this cache's
    auto it = times_.find(k);
    if (it != times_.end()) return it->second;
    return times_.emplace(k, inner_.kernel_ms(k, hw)).first->second;
}

}  // namespace prenet
