#pragma once
// Kernel-time predictors. Every predictor answers "how long does this kernel take on this accelerator";
// the step composition (run/) sums those. The roofline is the physical baseline the learned one must beat.
#include <map>
#include <memory>
#include <optional>
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
    // Relative half-width of the range a step time carries, given the time the step spends in each kernel
    // family on `hw`; none from a predictor that knows no error of its own (the roofline). Pure, so that every
    // predictor says which it is.
    virtual std::optional<double> relative_uncertainty(const std::map<Family, double>& ms_by_family,
                                                       const HardwareSpec& hw) const = 0;
    // Factors on the parts of a step that no kernel model times, the framework's overhead (run/overhead.hpp) and
    // the communication of a parallel step on `hw`: 1 but where a user's calibration (calibration/) has measured
    // them. Here, beside the kernel times they are fitted with, so that every path that times a step (one device,
    // the plan search, memory advice) applies the same calibration.
    virtual double overhead_factor(const HardwareSpec&) const { return 1.0; }
    virtual double communication_factor(const HardwareSpec&) const { return 1.0; }
    // Whether it remembers each kernel's time already (CachedPredictor): then a step asks it for every kernel
    // rather than keeping its own map of them (run/step.cpp).
    virtual bool remembers_kernels() const { return false; }
};

// time = max(FLOPs / peak for the kernel's precision, bytes / bandwidth) + launch cost.
class RooflinePredictor : public KernelPredictor {
public:
    // 5 us: a typical CUDA kernel launch plus framework dispatch; an assumption of the baseline, not fitted.
    static constexpr double kLaunchMs = 0.005;
    std::string name() const override { return "roofline"; }
    double kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const override;
    // The bound is not a fitted model: it has no validation error to widen a prediction by.
    std::optional<double> relative_uncertainty(const std::map<Family, double>&, const HardwareSpec&) const override {
        return std::nullopt;
    }
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
    std::optional<double> relative_uncertainty(const std::map<Family, double>& ms_by_family,
                                               const HardwareSpec& hw) const override {
        return inner_.relative_uncertainty(ms_by_family, hw);
    }
    double overhead_factor(const HardwareSpec& hw) const override { return inner_.overhead_factor(hw); }
    double communication_factor(const HardwareSpec& hw) const override { return inner_.communication_factor(hw); }

private:
    const KernelPredictor& inner_;
};

std::unique_ptr<KernelPredictor> make_predictor(const std::string& name);  // one of predictor_names(); throws Error
// A request's kernel predictor: the kernel models document's (--models) where one is given (not null), else name's.
std::unique_ptr<KernelPredictor> make_predictor(const std::string& name, const nlohmann::json& kernel_models);
const std::vector<std::string>& predictor_names();
std::string default_predictor_name();  // learned when fitted models are built in

}  // namespace prenet
