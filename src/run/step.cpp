#include "run/step.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "run/checkpointing.hpp"
#include "run/grad_accumulation.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      const StepOptions& o) {
    if (!o.optimizer) throw Error("predict_step: no optimizer given");
    if (o.grad_accum < 1) throw Error("grad_accum must be at least 1");
    StepTime t;
    t.grad_accum = o.grad_accum;
    const double micro = double(o.grad_accum);
    auto time = [&](const Kernel& k) { return predictor.kernel_ms(k, hw) + o.kernel_overhead_ms; };
    auto add_family = [&](const Kernel& k, double ms) {
        t.by_family_ms[to_string(k.family)] += ms;
        if (uses_matrix_units(k.family)) t.matmul_ms += ms;
    };

    // One micro-batch, then scaled by the number of micro-batches.
    double forward = 0, backward = 0, recompute = 0, kernels = 0;
    std::map<std::string, double> families;
    double matmul = 0;
    for (const auto& lf : features.layers) {
        double repeat = double(lf.repeat);
        bool recomputed = o.checkpointing && is_checkpointed(lf);
        for (const auto& k : lf.cost.kernels) {
            double ms = repeat * time(k);
            bool fwd = k.phase == Phase::forward;
            (fwd ? forward : backward) += ms;
            double runs = (fwd && recomputed) ? 2.0 : 1.0;  // the recompute runs the forward kernel again
            if (fwd && recomputed) recompute += ms;
            families[to_string(k.family)] += runs * ms;
            if (uses_matrix_units(k.family)) matmul += runs * ms;
            kernels += runs * repeat;
        }
    }
    t.micro_batch_ms = forward + backward + recompute;
    t.forward_ms = micro * forward;
    t.recompute_ms = micro * recompute;
    t.backward_ms = micro * (backward + recompute);
    for (const auto& [family, ms] : families) t.by_family_ms[family] += micro * ms;
    t.matmul_ms = micro * matmul;
    t.kernels = micro * kernels;

    PrecisionRecipe recipe = precision_recipe(o.precision, o.mixed);
    if (o.grad_accum > 1 && features.params > 0) {
        Kernel acc = gradient_accumulation_kernel(recipe, features.params);
        double ms = (micro - 1.0) * time(acc);
        t.grad_accumulation_ms = ms;
        t.backward_ms += ms;
        add_family(acc, ms);
        t.kernels += micro - 1.0;
    }

    std::vector<Kernel> update = loss_scaling_kernels(recipe, features.params);
    for (const auto& k : optimizer_kernels(*o.optimizer, features.params, recipe, o.optimizer_impl))
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

StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      Precision precision, const OptimizerDef& optimizer) {
    StepOptions o;
    o.precision = precision;
    o.optimizer = &optimizer;
    return predict_step(features, hw, predictor, o);
}

}  // namespace prenet
