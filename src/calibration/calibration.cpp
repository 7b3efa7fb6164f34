#include "calibration/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/error.hpp"

namespace prenet {

using nlohmann::json;

namespace {

constexpr Family kFamilies[] = {Family::gemm,    Family::conv,      Family::elementwise, Family::norm,
                                Family::softmax, Family::gather,    Family::attention,   Family::rnn,
                                Family::pool,    Family::optimizer, Family::loss};

constexpr Precision kPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8};

[[noreturn]] void refuse(const std::string& what) {
    throw Error("calibration: " + what, ErrorCode::invalid_value, "calibration");
}

double positive_number(const json& value, const std::string& where) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() > 0))
        refuse(where + " must be a positive number");
    return value.get<double>();
}

json summary_json(const std::optional<CalibrationSummary>& s) {
    if (!s) return nullptr;
    return {{"median_ape_pct", s->median_ape_pct}, {"worst_off_by", s->worst_off_by}};
}

std::optional<CalibrationSummary> summary_from_json(const json& doc, const std::string& where) {
    if (doc.is_null()) return std::nullopt;
    if (!doc.is_object()) refuse(where + " must be an object or null");
    CalibrationSummary s;
    if (doc.contains("median_ape_pct")) {
        const json& v = doc["median_ape_pct"];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
            refuse(where + ".median_ape_pct must be a number of at least 0");
        s.median_ape_pct = v.get<double>();
    }
    if (doc.contains("worst_off_by")) s.worst_off_by = positive_number(doc["worst_off_by"], where + ".worst_off_by");
    return s;
}

DeviceCalibration device_from_json(const json& doc, const std::string& id) {
    const std::string where = "devices['" + id + "']";
    if (!doc.is_object()) refuse(where + " must be an object");
    static const std::vector<std::string> known = {"rows", "scales", "log_covariance", "residual_sd", "before", "after"};
    for (const auto& [key, value] : doc.items())
        if (std::find(known.begin(), known.end(), key) == known.end()) refuse(where + " has an unknown field '" + key + "'");
    DeviceCalibration d;
    if (doc.contains("rows")) {
        const json& rows = doc["rows"];
        if (!rows.is_number_integer() || rows.get<std::int64_t>() < 0) refuse(where + ".rows must be a whole number");
        d.rows = rows.get<std::int64_t>();
    }
    if (!doc.contains("scales") || !doc["scales"].is_object()) refuse(where + ".scales must be an object");
    const auto& keys = calibration_scale_keys();
    for (const auto& [key, value] : doc["scales"].items()) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            refuse(where + ".scales has an unknown factor '" + key +
                   "' (a kernel family, matmul.<precision>, communication or overhead)");
        double scale = positive_number(value, where + ".scales." + key);
        if (!within_calibration_range(scale))
            refuse(where + ".scales." + key + " is " + std::to_string(scale) + ", outside 0.01-100");
        d.scales[key] = scale;
    }
    if (doc.contains("log_covariance") && !doc["log_covariance"].is_null()) {
        const json& c = doc["log_covariance"];
        const std::string what = where + ".log_covariance must be a " + std::to_string(keys.size()) + " x " +
                                 std::to_string(keys.size()) + " matrix of finite numbers, one row per factor";
        if (!c.is_array() || c.size() != keys.size()) refuse(what);
        for (size_t i = 0; i < keys.size(); ++i) {
            if (!c[i].is_array() || c[i].size() != keys.size()) refuse(what);
            std::vector<double> row;
            for (const auto& v : c[i]) {
                if (!v.is_number() || !std::isfinite(v.get<double>())) refuse(what);
                row.push_back(v.get<double>());
            }
            if (!(row[i] >= 0)) refuse(what + " (its diagonal at least 0)");
            d.log_covariance.push_back(std::move(row));
        }
    }
    if (doc.contains("residual_sd")) {
        const json& v = doc["residual_sd"];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > 10)
            refuse(where + ".residual_sd must be a number in 0-10");
        d.residual_sd = v.get<double>();
    }
    d.before = summary_from_json(doc.value("before", json(nullptr)), where + ".before");
    d.after = summary_from_json(doc.value("after", json(nullptr)), where + ".after");
    return d;
}

}  // namespace

std::string kernel_models_fingerprint(const json& kernel_models) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : kernel_models.dump()) h = (h ^ c) * 1099511628211ull;
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
    return text;
}

void check_calibration_applies(const Calibration& c, const std::string& predictor, const json& kernel_models) {
    if (c.predictor != predictor)
        throw Error("calibration: its factors correct the '" + c.predictor + "' predictor, and this request uses '" +
                        predictor + "'; calibrate again with --predictor " + predictor + " or drop --predictor",
                    ErrorCode::conflict, "calibration");
    std::string models = kernel_models.is_null() ? "" : kernel_models_fingerprint(kernel_models);
    if (c.kernel_models != models)
        throw Error(std::string("calibration: its factors correct ") +
                        (c.kernel_models.empty() ? "the built-in kernel models" : "other kernel models (--models)") +
                        ", and this request uses " + (models.empty() ? "the built-in ones" : "those of --models") +
                        "; calibrate with the same kernel models",
                    ErrorCode::conflict, "calibration");
}

std::string matmul_precision_key(Precision precision) { return std::string("matmul.") + to_string(precision); }

const std::vector<std::string>& calibration_scale_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (Family f : kFamilies) k.push_back(to_string(f));
        for (Precision p : kPrecisions) k.push_back(matmul_precision_key(p));
        k.push_back(kCommunicationScale);
        k.push_back(kOverheadScale);
        return k;
    }();
    return keys;
}

double DeviceCalibration::scale(const std::string& key) const {
    auto it = scales.find(key);
    return it == scales.end() ? 1.0 : it->second;
}

double DeviceCalibration::kernel_scale(const Kernel& kernel) const {
    double s = scale(to_string(kernel.family));
    return uses_matrix_units(kernel.family) ? s * scale(matmul_precision_key(kernel.precision)) : s;
}

const DeviceCalibration* Calibration::device(const std::string& hardware_id) const {
    auto it = devices.find(hardware_id);
    return it == devices.end() ? nullptr : &it->second;
}

std::int64_t Calibration::rows() const {
    std::int64_t n = 0;
    for (const auto& [id, d] : devices) n += d.rows;
    return n;
}

json to_json(const Calibration& calibration) {
    json devices = json::object();
    for (const auto& [id, d] : calibration.devices) {
        json scales = json::object();
        for (const auto& [key, value] : d.scales) scales[key] = value;
        devices[id] = {{"rows", d.rows},
                       {"scales", scales},
                       {"log_covariance", d.log_covariance.empty() ? json(nullptr) : json(d.log_covariance)},
                       {"residual_sd", d.residual_sd},
                       {"before", summary_json(d.before)},
                       {"after", summary_json(d.after)}};
    }
    return {{"format", "prenet-calibration"},
            {"version", 1},
            {"predictor", calibration.predictor},
            {"kernel_models", calibration.kernel_models.empty() ? json(nullptr) : json(calibration.kernel_models)},
            {"scale_keys", calibration_scale_keys()},
            {"devices", devices}};
}

Calibration calibration_from_json(const json& doc) {
    if (!doc.is_object()) refuse("the document must be a JSON object (as `prenet calibrate --out` writes)");
    if (doc.value("format", json(nullptr)) != json("prenet-calibration"))
        refuse("'format' must be \"prenet-calibration\" (a file written by `prenet calibrate`)");
    if (doc.value("version", json(nullptr)) != json(1)) refuse("'version' must be 1");
    if (doc.contains("scale_keys") && doc["scale_keys"] != json(calibration_scale_keys()))
        refuse("'scale_keys' are not this version's factors: calibrate again with this version");
    Calibration c;
    if (!doc.contains("predictor") || !doc["predictor"].is_string() || doc["predictor"].get<std::string>().empty())
        refuse("'predictor' must name the kernel predictor the factors correct");
    c.predictor = doc["predictor"];
    if (doc.contains("kernel_models") && !doc["kernel_models"].is_null()) {
        if (!doc["kernel_models"].is_string()) refuse("'kernel_models' must be null or the models' fingerprint");
        c.kernel_models = doc["kernel_models"];
    }
    if (!doc.contains("devices") || !doc["devices"].is_object()) refuse("'devices' must be an object keyed by hardware id");
    for (const auto& [id, device] : doc["devices"].items()) c.devices[id] = device_from_json(device, id);
    return c;
}

CalibratedPredictor::CalibratedPredictor(std::unique_ptr<KernelPredictor> inner,
                                         std::shared_ptr<const Calibration> calibration)
    : inner_(std::move(inner)), calibration_(std::move(calibration)) {}

double CalibratedPredictor::kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const {
    double ms = inner_->kernel_ms(kernel, hw);
    const DeviceCalibration* d = calibration_->device(hw.id);
    return d ? ms * d->kernel_scale(kernel) : ms;
}

double CalibratedPredictor::overhead_factor(const HardwareSpec& hw) const {
    const DeviceCalibration* d = calibration_->device(hw.id);
    return d ? d->scale(kOverheadScale) : 1.0;
}

double CalibratedPredictor::communication_factor(const HardwareSpec& hw) const {
    const DeviceCalibration* d = calibration_->device(hw.id);
    return d ? d->scale(kCommunicationScale) : 1.0;
}

std::optional<double> CalibratedPredictor::relative_uncertainty(const std::map<Family, double>& ms_by_family,
                                                                const HardwareSpec& hw) const {
    std::optional<double> uncalibrated = inner_->relative_uncertainty(ms_by_family, hw);
    const DeviceCalibration* d = calibration_->device(hw.id);
    if (!d || d->log_covariance.empty()) return uncalibrated;
    std::map<std::string, double> by_key;
    for (const auto& [family, ms] : ms_by_family) by_key[to_string(family)] += ms;
    double calibrated = calibrated_relative_uncertainty(*d, by_key);
    // Measurements narrow the range; they never widen it past what the uncalibrated model claims.
    return uncalibrated ? std::min(*uncalibrated, calibrated) : calibrated;
}

double calibrated_relative_uncertainty(const DeviceCalibration& d, const std::map<std::string, double>& ms_by_key) {
    const auto& keys = calibration_scale_keys();
    double total = 0;
    for (const auto& [key, ms] : ms_by_key) total += ms;
    double variance = d.residual_sd * d.residual_sd;
    if (total > 0 && !d.log_covariance.empty()) {
        // d log(step) / d log(factor k) = the share of the step factor k scales.
        std::vector<double> w(keys.size(), 0.0);
        for (size_t k = 0; k < keys.size(); ++k) {
            auto it = ms_by_key.find(keys[k]);
            if (it != ms_by_key.end()) w[k] = it->second / total;
        }
        for (size_t i = 0; i < keys.size(); ++i)
            for (size_t j = 0; j < keys.size(); ++j) variance += w[i] * d.log_covariance[i][j] * w[j];
    }
    // 90 % of a normal spread of log(step), as a relative half-width.
    return std::expm1(1.6449 * std::sqrt(std::max(0.0, variance)));
}

}  // namespace prenet
