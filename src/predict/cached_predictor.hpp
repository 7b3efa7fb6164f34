#pragma once
// A predictor that remembers every kernel time it has given: the plan search (parallel/plan_search.hpp) asks
// for the same kernels of the same accelerator for many layouts, and the learned models' trees are most of
// a prediction's cost. One accelerator per cache (the key is the kernel only).
#include <cstddef>
#include <unordered_map>

#include "predict/predictor.hpp"

namespace prenet {

class CachedPredictor : public KernelPredictor {
public:
    CachedPredictor(const KernelPredictor& inner, const HardwareSpec& hw) : inner_(inner), hw_(hw) {}
    std::string name() const override { return inner_.name(); }
    double kernel_ms(const Kernel& k, const HardwareSpec& hw) const override;
    std::optional<double> relative_uncertainty(const std::map<Family, double>& ms_by_family,
                                               const HardwareSpec& hw) const override {
        return inner_.relative_uncertainty(ms_by_family, hw);
    }
    double overhead_factor(const HardwareSpec& hw) const override { return inner_.overhead_factor(hw); }
    double communication_factor(const HardwareSpec& hw) const override { return inner_.communication_factor(hw); }
    bool remembers_kernels() const override { return true; }

private:
    struct Hash {
        size_t operator()(const Kernel& k) const { return timing_hash(k); }
    };
    struct Same {
        bool operator()(const Kernel& a, const Kernel& b) const { return same_timing(a, b); }
    };
    const KernelPredictor& inner_;
    const HardwareSpec& hw_;
    mutable std::unordered_map<Kernel, double, Hash, Same> times_;
};

}  // namespace prenet
