#pragma once
// Kernel-time predictors. Every predictor answers "how long does this kernel take on this accelerator";
// the step composition (run/) sums those. The roofline is the physical baseline the learned one must beat.
#include <memory>
#include <string>

#include "hardware/spec.hpp"
#include "ops/kernel.hpp"

namespace prenet {

class KernelPredictor {
public:
    virtual ~KernelPredictor() = default;
    virtual std::string name() const = 0;
    virtual double kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const = 0;
};

// time = max(FLOPs / peak for the kernel's precision, bytes / bandwidth) + launch cost.
class RooflinePredictor : public KernelPredictor {
public:
    // 5 us: a typical CUDA kernel launch plus framework dispatch; an assumption of the baseline, not fitted.
    static constexpr double kLaunchMs = 0.005;
    std::string name() const override { return "roofline"; }
    double kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const override;
};

// Physical lower bound of one kernel in ms, without launch cost.
double roofline_bound_ms(const Kernel& kernel, const HardwareSpec& hw);
bool uses_matrix_units(Family family);

std::unique_ptr<KernelPredictor> make_predictor(const std::string& name);  // throws Error for unknown names

}  // namespace prenet
