#pragma once
// A calibration: what a user's own measured steps say about one device (docs/calibration.md). Per device id, a
// factor per kernel family (the learned models' error on that device, the same for every kernel of the family),
// a factor on the step's communication and one on the framework's overhead (run/overhead.hpp), with the
// covariance of their logarithms, so that a calibrated answer's range narrows with the evidence behind it.
// `prenet calibrate` fits one (calibration/calibration_fit.hpp); `--calibration` applies it through
// CalibratedPredictor. Devices it does not name are answered exactly as without it.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/precision.hpp"
#include "predict/predictor.hpp"

namespace prenet {

// The factors' names in a calibration document: every Family's name; "matmul." and a precision's name, a factor on
// every matrix-unit kernel run at that precision (tensor cores reach another share of their peak in TF32 than in
// FP16, on a device the models never saw, whatever the family); then these two.
constexpr const char* kCommunicationScale = "communication";
constexpr const char* kOverheadScale = "overhead";
// A factor outside this range is no calibration but a wrong file or a unit mistaken: a device 100x faster or
// slower than its sheet says is not what a few measured steps can mean. Documents are read within it, and
// calibrate refuses measurements that would fit outside it.
constexpr double kMinCalibrationScale = 0.01, kMaxCalibrationScale = 100.0;
constexpr bool within_calibration_range(double scale) {
    return scale >= kMinCalibrationScale && scale <= kMaxCalibrationScale;
}
std::string matmul_precision_key(Precision precision);
// The keys a calibration's factors and covariance are indexed by, in that order.
const std::vector<std::string>& calibration_scale_keys();

// How a calibrated prediction compares with the rows it came from.
struct CalibrationSummary {
    double median_ape_pct = 0;
    double worst_off_by = 1;  // the larger of predicted/measured and measured/predicted, over the rows
};

struct DeviceCalibration {
    std::int64_t rows = 0;                       // measured rows it was fitted on
    std::map<std::string, double> scales;        // by calibration_scale_keys(); a key absent is 1
    // Covariance of the factors' natural logarithms (calibration_scale_keys() order); empty when unknown (a
    // hand-written document): then a calibrated answer keeps the uncalibrated range.
    std::vector<std::vector<double>> log_covariance;
    double residual_sd = 0;  // the spread of log(measured / predicted) the fit assumed a row to have
    std::optional<CalibrationSummary> before, after;

    double scale(const std::string& key) const;
    // A kernel's factor: its family's, times its precision's where it runs on the matrix units.
    double kernel_scale(const Kernel& kernel) const;
};

struct Calibration {
    std::string predictor;  // the kernel predictor the factors correct ("learned"); another is refused
    // The kernel models (--models) the factors correct, by kernel_models_fingerprint; empty: the built-in ones.
    std::string kernel_models;
    std::map<std::string, DeviceCalibration> devices;  // by hardware id
    const DeviceCalibration* device(const std::string& hardware_id) const;  // null: not calibrated
    std::int64_t rows() const;
};

// A fingerprint of a kernel models document (FNV-1a of its compact text, in hex): the same on every platform, so a
// calibration fitted on custom models is applied with those models only.
std::string kernel_models_fingerprint(const nlohmann::json& kernel_models);
// Refuses (conflict, field "calibration") a request whose predictor or kernel models (null: the built-in ones)
// are not those the calibration was fitted with: its factors correct their errors, not another's.
void check_calibration_applies(const Calibration& calibration, const std::string& predictor,
                               const nlohmann::json& kernel_models);

// The calibration document (docs/calibration.md "The document"). Reading checks every field and throws Error
// with field "calibration".
nlohmann::json to_json(const Calibration& calibration);
Calibration calibration_from_json(const nlohmann::json& doc);

// The kernel predictor of a request with a calibration: the inner predictor's times scaled by the device's family
// factors; the step's overhead and communication by its factors (KernelPredictor::overhead_factor and
// communication_factor); the range from the factors' covariance where the document has it.
class CalibratedPredictor : public KernelPredictor {
public:
    CalibratedPredictor(std::unique_ptr<KernelPredictor> inner, std::shared_ptr<const Calibration> calibration);
    std::string name() const override { return inner_->name(); }
    double kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const override;
    std::optional<double> relative_uncertainty(const std::map<Family, double>& ms_by_family,
                                               const HardwareSpec& hw) const override;
    double overhead_factor(const HardwareSpec& hw) const override;
    double communication_factor(const HardwareSpec& hw) const override;

private:
    std::unique_ptr<KernelPredictor> inner_;
    std::shared_ptr<const Calibration> calibration_;
};

// The relative half-width (90 %) of a calibrated step's range: the factors' uncertainty, weighted by the share of
// the step each factor scales (`ms_by_key`, already calibrated, keyed by calibration_scale_keys()), and the
// residual spread of one row.
double calibrated_relative_uncertainty(const DeviceCalibration& device, const std::map<std::string, double>& ms_by_key);

}  // namespace prenet
