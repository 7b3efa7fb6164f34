#include "run/step.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/error.hpp"
#include "run/checkpointing.hpp"
#include "run/compile.hpp"
#include "run/grad_accumulation.hpp"
#include "run/memory_format.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {
namespace {

// A matrix-unit kernel's predicted time at the sustained clock (docs/clocks.md): the clock scales the compute
// side of its roofline, not memory, so the time grows by the ratio of the two bounds; a memory-bound GEMM keeps
// its time. The fitted slowdown multiplies the bound, so it is scaled with it.
double at_sustained_clock(const Kernel& k, double ms, const HardwareSpec& hw, double factor) {
    if (factor >= 1.0 || !uses_matrix_units(k.family)) return ms;
    double compute_s = bound_flops(k, hw) / hw.matmul_flops(k.precision);
    double memory_s = k.bytes / hw.bandwidth_bytes_per_s();
    double bound_s = std::max(compute_s, memory_s);
    return bound_s > 0 ? ms * std::max(compute_s / factor, memory_s) / bound_s : ms;
}

// Times each distinct kernel once per step: a step repeats many (a GQA layer's key and value projections'
// passes, autocast's casts of one input), and the learned predictor's trees are most of a prediction's cost.
// Keyed by the layer kernels themselves (they outlive the step), compared field by field: no allocation.
class KernelTimes {
public:
    KernelTimes(const KernelPredictor& predictor, const HardwareSpec& hw, double clock_factor)
        : predictor_(predictor), hw_(hw), clock_factor_(clock_factor) {}
    double operator()(const Kernel& k) {
        // A predictor that remembers its kernels finds this one as fast as this map would (one hash either way).
        if (predictor_.remembers_kernels()) return at_sustained_clock(k, predictor_.kernel_ms(k, hw_), hw_, clock_factor_);
        auto it = times_.find(&k);
        if (it != times_.end()) return it->second;
        double ms = at_sustained_clock(k, predictor_.kernel_ms(k, hw_), hw_, clock_factor_);
        return times_.emplace(&k, ms).first->second;
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
    double clock_factor_;
    std::unordered_map<const Kernel*, double, Hash, Same> times_;
};

}  // namespace

MicroBatchTime predict_micro_batch(const ModelFeatures& unfused, const HardwareSpec& hw,
                                   const KernelPredictor& predictor, const StepOptions& o) {
    // torch.compile runs each block's memory-bound chains as one kernel each (run/compile.hpp), and its
    // convolutions channels-last; an NCHW model's tensor-core convolutions run between layout transposes, which
    // no fusion reaches (inside cuDNN's call: run/memory_format.hpp).
    bool transposes = !o.compile && !o.channels_last && needs_layout_transposes(unfused, hw);
    ModelFeatures changed;
    if (o.compile) changed = fuse_memory_bound_kernels(unfused);
    if (transposes) changed = with_layout_transposes(unfused, hw);
    const ModelFeatures& features = o.compile || transposes ? changed : unfused;
    MicroBatchTime t;
    KernelTimes layer_kernel_ms(predictor, hw, sustained_matrix_clock(hw).factor);
    for (const auto& lf : features.layers) {
        double repeat = double(lf.repeat);
        LayerTime layer;
        if (o.layer_breakdown) layer = LayerTime{lf.layer.name, lf.block, lf.layer.kind, lf.repeat};
        for (const auto& k : lf.cost.kernels) {
            double ms = repeat * layer_kernel_ms(k);
            bool fwd = k.phase == Phase::forward;
            bool recomputed = is_recomputed(lf, k, o.checkpoint_kind());
            (fwd ? t.forward_ms : t.backward_ms) += ms;
            double runs = recomputed ? 2.0 : 1.0;  // the recompute runs the forward kernel again
            if (recomputed) t.recompute_ms += ms;
            t.by_family_ms[k.family] += runs * ms;
            if (uses_matrix_units(k.family)) t.matmul_ms += runs * ms, t.matmul_by_precision_ms[k.precision] += runs * ms;
            if (uses_matrix_units(k.family) && k.phase == Phase::backward_weight) t.weight_gradient_ms += ms;
            t.kernels += runs * repeat;
            (fwd ? layer.forward_ms : layer.backward_ms) += ms;
            if (recomputed) layer.backward_ms += ms;
            layer.kernels += runs * repeat;
        }
        if (o.layer_breakdown) t.layers.push_back(std::move(layer));
    }
    return t;
}

StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      const StepOptions& o) {
    return predict_step(features, hw, predictor, o, predict_micro_batch(features, hw, predictor, o));
}

StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      const StepOptions& o, const MicroBatchTime& mb) {
    if (!o.optimizer) throw Error("predict_step: no optimizer given");
    if (o.grad_accum < 1) throw Error("grad_accum must be at least 1");
    StepTime t;
    t.grad_accum = o.grad_accum;
    const double micro = double(o.grad_accum);
    t.clock = sustained_matrix_clock(hw);
    auto time = [&](const Kernel& k) {
        return at_sustained_clock(k, predictor.kernel_ms(k, hw), hw, t.clock.factor);
    };
    auto add_family = [&](const Kernel& k, double ms) {
        t.by_family_ms[k.family] += ms;
        if (uses_matrix_units(k.family)) t.matmul_ms += ms, t.matmul_by_precision_ms[k.precision] += ms;
    };

    // One micro-batch, scaled by the number of micro-batches.
    t.micro_batch_ms = mb.forward_ms + mb.backward_ms + mb.recompute_ms;
    t.forward_ms = micro * mb.forward_ms;
    t.recompute_ms = micro * mb.recompute_ms;
    t.backward_ms = micro * (mb.backward_ms + mb.recompute_ms);
    for (const auto& [family, ms] : mb.by_family_ms) t.by_family_ms[family] += micro * ms;
    for (const auto& [precision, ms] : mb.matmul_by_precision_ms) t.matmul_by_precision_ms[precision] += micro * ms;
    t.matmul_ms = micro * mb.matmul_ms;
    t.weight_gradient_ms = micro * mb.weight_gradient_ms;
    t.kernels = micro * mb.kernels;
    t.layers = mb.layers;
    for (auto& layer : t.layers) {
        layer.forward_ms *= micro;
        layer.backward_ms *= micro;
        layer.kernels *= micro;
    }

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

    // Launch gaps and the step's fixed cost; a parallel step adds the overlapped communication's loss.
    t.overhead_ms = launch_and_step_ms(o.overhead, t.kernels) * predictor.overhead_factor(hw);

    if (o.input_samples_per_s > 0) {
        t.input_ms = 1e3 * micro * double(o.micro_batch) / o.input_samples_per_s;
        t.input_stall_ms = std::max(0.0, t.input_ms - t.compute_ms());
    }
    return t;
}

std::vector<std::string> step_warnings(std::vector<std::string> warnings, const StepTime& t, const StepOptions& o) {
    std::string host = host_pace_warning(t.forward_ms + t.backward_ms + t.optimizer_ms, t.kernels,
                                         o.compile || o.framework.fuses_elementwise);
    if (!host.empty()) warnings.push_back(std::move(host));
    return warnings;
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
