#include "run/step.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/error.hpp"
#include "run/checkpointing.hpp"
#include "run/compile.hpp"
#include "run/grad_accumulation.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {
namespace {

// Times each distinct kernel once per step: a step repeats many (a GQA layer's key and value projections'
// passes, autocast's casts of one input), and the learned predictor's trees are most of a prediction's cost.
// Keyed by the layer kernels themselves (they outlive the step), compared field by field: no allocation.
class KernelTimes {
public:
    KernelTimes(const KernelPredictor& predictor, const HardwareSpec& hw) : predictor_(predictor), hw_(hw) {}
    double operator()(const Kernel& k) {
        auto it = times_.find(&k);
        if (it != times_.end()) return it->second;
        return times_.emplace(&k, predictor_.kernel_ms(k, hw_)).first->second;
    }

private:
    struct Hash {
        size_t operator()(const Kernel* k) const { return timing_hash(*k); }
    };
    struct Same {
        bool operator()(const Kernel* a, const Kernel* b) const { return same_timing(*a, *b); }
    };
    const KernelPredictor& predictor_;
    const HardwareSpec& hw_;
    std::unordered_map<const Kernel*, double, Hash, Same> times_;
};

}  // namespace

StepTime predict_step(const ModelFeatures& unfused, const HardwareSpec& hw, const KernelPredictor& predictor,
                      const StepOptions& o) {
    if (!o.optimizer) throw Error("predict_step: no optimizer given");
    // torch.compile runs each block's memory-bound chains as one kernel each (run/compile.hpp).
    ModelFeatures compiled;
    if (o.compile) compiled = fuse_memory_bound_kernels(unfused);
    const ModelFeatures& features = o.compile ? compiled : unfused;
    if (o.grad_accum < 1) throw Error("grad_accum must be at least 1");
    StepTime t;
    t.grad_accum = o.grad_accum;
    const double micro = double(o.grad_accum);
    KernelTimes layer_kernel_ms(predictor, hw);
    auto time = [&](const Kernel& k) { return predictor.kernel_ms(k, hw) + o.kernel_overhead_ms; };
    auto add_family = [&](const Kernel& k, double ms) {
        t.by_family_ms[k.family] += ms;
        if (uses_matrix_units(k.family)) t.matmul_ms += ms;
    };

    // One micro-batch, then scaled by the number of micro-batches.
    double forward = 0, backward = 0, recompute = 0, kernels = 0;
    std::map<Family, double> families;
    double matmul = 0, weight_gradient = 0;
    for (const auto& lf : features.layers) {
        double repeat = double(lf.repeat);
        LayerTime layer{lf.layer.name, lf.block, lf.layer.kind, lf.repeat};
        for (const auto& k : lf.cost.kernels) {
            double ms = repeat * (layer_kernel_ms(k) + o.kernel_overhead_ms);
            bool fwd = k.phase == Phase::forward;
            bool recomputed = is_recomputed(lf, k, o.checkpointing, o.selective_recompute);
            (fwd ? forward : backward) += ms;
            double runs = recomputed ? 2.0 : 1.0;  // the recompute runs the forward kernel again
            if (recomputed) recompute += ms;
            families[k.family] += runs * ms;
            if (uses_matrix_units(k.family)) matmul += runs * ms;
            if (uses_matrix_units(k.family) && k.phase == Phase::backward_weight) weight_gradient += ms;
            kernels += runs * repeat;
            (fwd ? layer.forward_ms : layer.backward_ms) += micro * ms;
            if (recomputed) layer.backward_ms += micro * ms;
            layer.kernels += micro * runs * repeat;
        }
        if (o.layer_breakdown) t.layers.push_back(std::move(layer));
    }
    t.micro_batch_ms = forward + backward + recompute;
    t.forward_ms = micro * forward;
    t.recompute_ms = micro * recompute;
    t.backward_ms = micro * (backward + recompute);
    for (const auto& [family, ms] : families) t.by_family_ms[family] += micro * ms;
    t.matmul_ms = micro * matmul;
    t.weight_gradient_ms = micro * weight_gradient;
    t.kernels = micro * kernels;

    // Only what trains accumulates gradients and is updated (fine-tuning: the unfrozen parameters or the adapters).
    PrecisionRecipe recipe = trained_recipe(o);
    std::int64_t accumulated = o.accumulated_params < 0 ? features.trainable_params : o.accumulated_params;
    std::int64_t updated = o.updated_params < 0 ? features.trainable_params : o.updated_params;
    if (o.grad_accum > 1 && accumulated > 0) {
        Kernel acc = gradient_accumulation_kernel(recipe, accumulated);
        double ms = (micro - 1.0) * time(acc);
        t.grad_accumulation_ms = ms;
        t.backward_ms += ms;
        add_family(acc, ms);
        t.kernels += micro - 1.0;
    }

    std::vector<Kernel> update = loss_scaling_kernels(recipe, updated);
    for (const auto& k : optimizer_kernels(*o.optimizer, updated, recipe, o.optimizer_impl))
        update.push_back(k);
    for (const auto& k : update) {
        double ms = time(k);
        t.optimizer_ms += ms;
        add_family(k, ms);
        t.kernels += 1.0;
    }

    if (o.input_samples_per_s > 0) {
        t.input_ms = 1e3 * micro * double(o.micro_batch) / o.input_samples_per_s;
        t.input_stall_ms = std::max(0.0, t.input_ms - t.compute_ms());
    }
    return t;
}

json by_family_json(const std::map<Family, double>& ms_by_family) {
    json out = json::object();
    for (const auto& [family, ms] : ms_by_family) out[to_string(family)] = ms;
    return out;
}

StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      Precision precision, const OptimizerDef& optimizer) {
    StepOptions o;
    o.precision = precision;
    o.optimizer = &optimizer;
    return predict_step(features, hw, predictor, o);
}

}  // namespace prenet
