#include "predict/learned.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/embedded_json.hpp"
#include "core/error.hpp"
#include "ops/attention.hpp"
#include "predict/embedded_models.hpp"
#include "predict/kernel_features.hpp"
#include "predict/op_rows.hpp"

namespace prenet {

using nlohmann::json;

// Beyond a slowdown of 10^4 against the bound a prediction is extrapolating nonsense; cap it.
constexpr double kMaxLogSlowdown = 4.0;

LearnedPredictor::LearnedPredictor(const json& models)
    : LearnedPredictor(models, [](const std::string&, const json& model) { return regressor_from_json(model); }) {}

LearnedPredictor::LearnedPredictor(const json& models, const RegressorReader& read) {
    if (!models.is_object() || !models.contains("families") || !models["families"].is_object())
        throw Error("kernel models: expected an object with 'families'");
    // Models files before 2026-12 carried a per-kernel dispatch overhead; the step's overhead is now its own
    // model (run/overhead.hpp, models/overhead.json), so a non-zero one would be counted twice.
    if (models.value("framework_overhead_ms_per_kernel", 0.0) != 0.0)
        throw Error("kernel models: 'framework_overhead_ms_per_kernel' is no longer read (the framework overhead is "
                    "models/overhead.json); refit with `prenet fit` or remove the field");
    for (auto it = models["families"].begin(); it != models["families"].end(); ++it) {
        std::optional<Family> family = family_from_string(it.key());
        if (!family) throw Error("kernel models: unknown family '" + it.key() + "'");
        FamilyModel m;
        m.regressor = read(it.key(), it.value().at("model"));
        m.floor_ms = it.value().value("floor_ms", 0.0);
        m.predicts_time = it.value().value("target", std::string("slowdown")) == "time";
        m.max_batch = it.value().value("max_batch", 0.0);
        if (!(m.max_batch >= 0)) throw Error("kernel models: bad max_batch for " + it.key());
        if (!(m.floor_ms >= 0) || m.floor_ms > 1e3) throw Error("kernel models: bad floor_ms for " + it.key());
        const auto& all = kernel_feature_names();
        for (const auto& name : it.value().value("features", json(all))) {
            auto pos = std::find(all.begin(), all.end(), name.get<std::string>());
            if (pos == all.end()) throw Error("kernel models: unknown feature '" + name.get<std::string>() + "'");
            m.columns.push_back(int(pos - all.begin()));
        }
        if (auto* trees = dynamic_cast<TreeEnsemble*>(m.regressor.get()))
            for (const auto& t : trees->trees)
                for (int f : t.feature)
                    if (f >= int(m.columns.size())) throw Error("kernel models: feature index out of range");
        if (auto* ridge = dynamic_cast<RidgeModel*>(m.regressor.get()))
            if (ridge->weights.size() != m.columns.size()) throw Error("kernel models: ridge size mismatch");
        const json& v = it.value().value("validation", json::object());
        for (const auto& id : it.value().value("devices", json::array())) {
            for (const auto& h : hardware_catalogue())
                if (h.id == id) {
                    double lp = std::log10(h.vector_flops()), lb = std::log10(h.bandwidth_bytes_per_s());
                    log_peak_range_[0] = std::min(log_peak_range_[0], lp), log_peak_range_[1] = std::max(log_peak_range_[1], lp);
                    log_bandwidth_range_[0] = std::min(log_bandwidth_range_[0], lb);
                    log_bandwidth_range_[1] = std::max(log_bandwidth_range_[1], lb);
                }
        }
        m.median_ape = v.value("median_ape", 0.0);
        m.p90_ape = v.value("p90_ape", 0.0);
        families_[*family] = std::move(m);
    }
}

namespace {
// The family that stands in for one a models file lacks: fused attention (fitted since issue #12) was timed by
// the gemm model before, so a models file without an `attention` family keeps doing so; the rest fall back to
// the elementwise model.
Family stand_in(Family family) { return family == Family::attention ? Family::gemm : Family::elementwise; }
}  // namespace

const LearnedPredictor::FamilyModel* LearnedPredictor::family_of(const Kernel& kernel) const {
    Family family = model_family(kernel);
    auto it = families_.find(family);
    if (it == families_.end()) it = families_.find(stand_in(family));
    if (it == families_.end()) it = families_.find(Family::elementwise);
    return it == families_.end() ? nullptr : &it->second;
}

double LearnedPredictor::log_slowdown(const Kernel& kernel, const HardwareSpec& hw) const {
    return log_slowdown(kernel, hw, family_of(kernel));
}

double LearnedPredictor::log_slowdown(const Kernel& kernel, const HardwareSpec& hw, const FamilyModel* m) const {
    if (!m) return std::log10(1.0 + RooflinePredictor::kLaunchMs / std::max(lower_bound_ms(kernel, hw), 1e-9));
    return std::clamp(m->regressor->predict(model_inputs(kernel, hw, *m)), 0.0, kMaxLogSlowdown);
}

std::vector<double> LearnedPredictor::model_inputs(const Kernel& kernel, const HardwareSpec& hw,
                                                   const FamilyModel& m) const {
    std::vector<double> all = kernel_features(kernel, hw), x;
    for (int c : m.columns) x.push_back(all[size_t(c)]);
    return x;
}

double LearnedPredictor::floor_ms(const Kernel& kernel) const {
    const FamilyModel* m = family_of(kernel);
    return m ? m->floor_ms : RooflinePredictor::kLaunchMs;
}

double LearnedPredictor::kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const {
    if (kernel.flops <= 0 && kernel.bytes <= 0) return 0;
    // The attention model knows FlashAttention-2-class kernels only; an older generation's is the same problem at
    // its published slowdown (1 for every other kernel).
    return flash_generation_slowdown(kernel) * fitted_kernel_ms(kernel, hw);
}

double LearnedPredictor::fitted_kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const {
    const FamilyModel* m = family_of(kernel);
    // A convolution over more images than any measured one is timed as passes over the largest measured batch:
    // a GPU is saturated long before that, so the time per image stays; the regressor, asked beyond its data,
    // would drift (per-image time grew 40% from batch 64 to 512 on an RTX 4090).
    if (m && m->max_batch >= 1 && kernel.family == Family::conv && kernel.conv &&
        double(kernel.conv->n) > m->max_batch) {
        Kernel part = kernel;
        part.conv->n = std::int64_t(m->max_batch);
        double passes = double(kernel.conv->n) / double(part.conv->n);
        part.flops /= passes;
        part.bytes /= passes;
        // A pass over the smaller batch can leave units idle in its last wave that the whole batch fills
        // (ResNet's 7x7 layers at batch 64: 100 tiles on 80 SMs, two waves for 1.25 waves of work); time
        // goes with waves, so the whole kernel takes the part's time times the ratio of their waves.
        double whole = output_tile_waves(kernel, hw), one = output_tile_waves(part, hw);
        double scale = whole > 0 && one > 0 ? std::min(passes, whole / one) : passes;
        return std::max(lower_bound_ms(kernel, hw), scale * model_ms(part, hw, m));
    }
    return model_ms(kernel, hw, m);
}

std::optional<Kernel> LearnedPredictor::measured_forward_of(const Kernel& kernel) const {
    if (kernel.phase == Phase::forward) return std::nullopt;
    // The norm model was fitted on forward layer norms only (NeuSight's `ln` rows: 7 FLOPs and two passes an
    // element). A backward kernel, with other FLOPs per byte, lands among far smaller kernels in its trees (a
    // layer norm's weight gradient came out at 5.8x its bound beside the forward's 1.7x). Its passes stream
    // the same rows.
    if (kernel.family == Family::norm && kernel.m > 0 && kernel.n > 0)
        return kernel_from_row("ln", {{"b", double(kernel.m)}, {"h", double(kernel.n)}}, kernel.precision);
    // Only forward fused attention was measured: FlashAttention-2's backward (its 2.5x FLOPs and own bytes,
    // ops/attention.cpp) borrows the forward's efficiency over the same shape. Under the gemm stand-in (a
    // models file without an attention family) it is timed directly.
    if (kernel.family == Family::attention && kernel.attention && families_.count(Family::attention))
        return flash_attention_kernels(*kernel.attention, kernel.precision).forward;
    return std::nullopt;
}

double LearnedPredictor::model_ms(const Kernel& kernel, const HardwareSpec& hw, const FamilyModel* m) const {
    double bound = lower_bound_ms(kernel, hw);
    // A backward kernel whose family was measured forward only runs at the efficiency the model gives the
    // measured forward kernel it stands for, applied to its own bound.
    if (m && !m->predicts_time)
        if (std::optional<Kernel> forward = measured_forward_of(kernel))
            return (bound + m->floor_ms) * std::pow(10.0, log_slowdown(*forward, hw, m));
    if (m && m->predicts_time)
        return std::max(bound, std::pow(10.0, std::min(m->regressor->predict(model_inputs(kernel, hw, *m)), 6.0)));
    double floor = m ? m->floor_ms : RooflinePredictor::kLaunchMs;
    return (bound + floor) * std::pow(10.0, log_slowdown(kernel, hw, m));
}

namespace {
double outside(double x, const double range[2]) {
    if (range[0] > range[1]) return 0;
    return std::max({0.0, range[0] - x, x - range[1]});
}
}  // namespace

std::optional<double> LearnedPredictor::relative_uncertainty(const std::map<Family, double>& ms_by_family,
                                                             const HardwareSpec& hw) const {
    // Summed in the order of the families' names, the order the step reports them in, so that the sum (and its
    // last bits) does not depend on how the Family enum happens to be ordered.
    std::vector<std::pair<Family, double>> by_name(ms_by_family.begin(), ms_by_family.end());
    std::sort(by_name.begin(), by_name.end(),
              [](const auto& a, const auto& b) { return std::strcmp(to_string(a.first), to_string(b.first)) < 0; });
    double total = 0, weighted = 0;
    for (const auto& [family, ms] : by_name) {
        auto it = families_.find(model_family(family));
        if (it == families_.end()) it = families_.find(stand_in(model_family(family)));
        double p90 = it == families_.end() ? 0.5 : it->second.p90_ape;
        total += ms, weighted += ms * p90;
    }
    double base = total > 0 ? weighted / total : 0.5;
    // Each decade outside the fitted range doubles the range: extrapolation is where learned models fail.
    double distance = std::max(outside(std::log10(hw.vector_flops()), log_peak_range_),
                               outside(std::log10(hw.bandwidth_bytes_per_s()), log_bandwidth_range_));
    return base * (1.0 + 10.0 * distance);
}

std::unique_ptr<LearnedPredictor> read_embedded_learned_predictor() {
    const EmbeddedKernelModels* data = embedded_kernel_model_data();
    if (!data) return nullptr;
    auto trees = embedded_trees(*data);
    return std::make_unique<LearnedPredictor>(
        parse_embedded_json(data->document), [&](const std::string& family, const json& model) {
            auto it = trees.find(family);
            if (it == trees.end()) return regressor_from_json(model);  // a ridge model: JSON
            return tree_ensemble_from_json(model, std::move(it->second));
        });
}

const LearnedPredictor* embedded_learned_predictor() {
    static const std::unique_ptr<LearnedPredictor> predictor = read_embedded_learned_predictor();
    return predictor.get();
}

const json* embedded_kernel_models() {
    static const json models = [] {
        const EmbeddedKernelModels* data = embedded_kernel_model_data();
        if (!data) return json();
        json doc = parse_embedded_json(data->document);
        for (auto& [family, trees] : embedded_trees(*data)) {
            json& list = doc["families"][family]["model"]["trees"];
            list = json::array();
            for (const auto& t : trees)
                list.push_back({{"feature", t.feature}, {"threshold", t.threshold}, {"left", t.left},
                                {"right", t.right}, {"value", t.value}});
        }
        return doc;
    }();
    return models.is_object() ? &models : nullptr;
}

}  // namespace prenet
