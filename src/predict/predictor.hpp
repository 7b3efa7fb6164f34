#pragma once
// Kernel-time predictors. Every predictor answers "how long does this kernel take on this accelerator";
// the step composition (run/) sums those. The roofline is the physical baseline the learned one must beat.
#include <memory>
#include <string>
#include <vector>

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

// The textbook roofline of one kernel in ms, without launch cost: its FLOPs at the peak or its bytes at the
// bandwidth, whichever takes longer (the baseline predictor).
double roofline_bound_ms(const Kernel& kernel, const HardwareSpec& hw);
// The physical lower bound the learned predictor scales: the roofline with the arithmetic of the cheapest
// algorithm a library may pick (bound_flops).
double lower_bound_ms(const Kernel& kernel, const HardwareSpec& hw);
// cuDNN runs a 3x3, stride-1, ungrouped convolution on the vector units (forward and both gradients) with
// Winograd F(2x2, 3x3), 2.25x fewer multiplies than the direct method: measured FP32 3x3 convolutions (NeuSight,
// DeepBench) run up to 2.25x above the direct-FLOP peak and never beyond; tensor-core ones never above it. Such
// kernels are bounded by flops / 2.25.
bool winograd_eligible(const Kernel& kernel, const HardwareSpec& hw);
double bound_flops(const Kernel& kernel, const HardwareSpec& hw);
bool uses_matrix_units(Family family);

// A non-owning view of a long-lived predictor.
class SharedPredictor : public KernelPredictor {
public:
    explicit SharedPredictor(const KernelPredictor& inner) : inner_(inner) {}
    std::string name() const override { return inner_.name(); }
    double kernel_ms(const Kernel& k, const HardwareSpec& hw) const override { return inner_.kernel_ms(k, hw); }
    const KernelPredictor& inner() const { return inner_; }

private:
    const KernelPredictor& inner_;
};

std::unique_ptr<KernelPredictor> make_predictor(const std::string& name);  // one of predictor_names(); throws Error
const std::vector<std::string>& predictor_names();
std::string default_predictor_name();  // learned when fitted models are built in

}  // namespace prenet
