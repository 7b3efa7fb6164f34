#pragma once
// The learned predictor: per kernel family, time = (roofline bound + latency floor) x 10^g(features), where
// g >= 0 is a fitted regressor of the log slowdown (so 1 / 10^g is the efficiency, in (0, 1]) and the floor is
// the family's smallest measured time (launch and dispatch). It never predicts faster than the physical bound
// of the device it is asked about.
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>

#include "predict/predictor.hpp"
#include "predict/regressor.hpp"

namespace prenet {

class LearnedPredictor : public KernelPredictor {
public:
    explicit LearnedPredictor(const nlohmann::json& models);  // the document in models/kernels.json
    // Each family's regressor read by `read` from the family and its `model` object instead of by
    // regressor_from_json: the embedded models keep their trees outside the JSON (predict/embedded_models.hpp).
    using RegressorReader = std::function<std::unique_ptr<Regressor>(const std::string& family, const nlohmann::json& model)>;
    LearnedPredictor(const nlohmann::json& models, const RegressorReader& read);
    std::string name() const override { return "learned"; }
    double kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const override;
    // Log10 of the predicted slowdown against the bound (>= 0).
    double log_slowdown(const Kernel& kernel, const HardwareSpec& hw) const;
    double floor_ms(const Kernel& kernel) const;
    // The 90th-percentile validation error of the families weighted by their share of the step, widened by how
    // far the device's peak and bandwidth lie outside those of the devices the models were fitted on.
    std::optional<double> relative_uncertainty(const std::map<Family, double>& ms_by_family,
                                               const HardwareSpec& hw) const override;

private:
    struct FamilyModel {
        std::unique_ptr<Regressor> regressor;
        double floor_ms = 0, median_ape = 0, p90_ape = 0;
        std::vector<int> columns;  // indices into kernel_feature_names()
        bool predicts_time = false;  // the regressor gives log10 ms, clamped below by the bound
        double max_batch = 0;        // largest convolution batch measured (0: no limit)
    };
    // The family's model for a kernel (elementwise for families without one), or null if none was fitted.
    const FamilyModel* family_of(const Kernel& kernel) const;
    std::vector<double> model_inputs(const Kernel& kernel, const HardwareSpec& hw, const FamilyModel& m) const;
    double log_slowdown(const Kernel& kernel, const HardwareSpec& hw, const FamilyModel* m) const;
    // The measured forward kernel whose efficiency a backward kernel of a forward-only family borrows (a layer
    // norm's gradients, FlashAttention-2's backward); none for every other kernel.
    std::optional<Kernel> measured_forward_of(const Kernel& kernel) const;
    double model_ms(const Kernel& kernel, const HardwareSpec& hw, const FamilyModel* m) const;
    // kernel_ms before a first-generation attention kernel's slowdown: what the fitted models say.
    double fitted_kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const;
    std::map<Family, FamilyModel> families_;  // by model_family()
    double log_peak_range_[2] = {1e300, -1e300}, log_bandwidth_range_[2] = {1e300, -1e300};
};

// The predictor of the fitted models compiled into the binary (models/kernels.json), built on first use; null if
// none were fitted.
const LearnedPredictor* embedded_learned_predictor();
// A new one each call (what the first use costs: benchmarks).
std::unique_ptr<LearnedPredictor> read_embedded_learned_predictor();

// The document those models were compiled from, rebuilt from the compiled form (the same numbers bit for bit; a
// split's value, which nothing reads, is 0), or null if none were fitted. For tests and benchmarks: the
// predictor does not need it.
const nlohmann::json* embedded_kernel_models();

}  // namespace prenet
