#include "run/memory.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "run/checkpointing.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

PrecisionRecipe trained_recipe(const TrainingSetup& setup) {
    PrecisionRecipe recipe = precision_recipe(setup.precision, setup.mixed);
    return setup.adapters ? adapter_recipe(recipe, setup.half_adapters) : recipe;
}

MemoryUse estimate_memory(const ModelFeatures& features, const MemoryOptions& o) {
    if (!o.optimizer) throw Error("estimate_memory: no optimizer given");
    MemoryUse m;
    PrecisionRecipe recipe = precision_recipe(o.precision, o.mixed), trained = trained_recipe(o);
    double n = double(features.trainable_params);
    // A half-precision model keeps an fp32 master copy beside its weights and gradients (2 + 4 + 2 bytes per
    // parameter, plus the optimizer's fp32 states: 16 bytes with Adam); autocast keeps fp32 weights and
    // gradients (4 + 4) and, while forward and backward run, half-precision copies of the weights. Frozen
    // parameters keep only their weights, as the model stores them (or quantised, with their scales).
    m.frozen_weights = features.frozen_params * recipe.weight_bytes + features.quantized_weight_bytes;
    m.adapter_weights = o.adapters ? double(features.adapter_params) * trained.weight_bytes : 0.0;
    m.weights = m.frozen_weights + n * (trained.weight_bytes + trained.master_bytes);
    m.gradients = n * trained.gradient_bytes;
    m.optimizer_states = optimizer_state_bytes(*o.optimizer, features);

    ActivationMemory act = activation_memory(features, o.precision, o.checkpoint_kind());
    m.activations = act.saved;
    m.checkpointed_blocks = act.checkpointed_blocks;

    // The largest single layer's transient output and its gradient live beside everything else; with
    // accumulation, so does one layer's freshly computed weight gradient before it is added in.
    // A quantised base dequantises one weight at a time, alive through its matmul.
    double largest_output = 0, largest_layer_params = 0;
    for (const auto& lf : features.layers) {
        largest_output = std::max(largest_output, lf.cost.forward_bytes_written);
        largest_layer_params = std::max(largest_layer_params, double(lf.trainable_params));
    }
    m.dequantization = features.largest_dequantized_bytes;
    m.layer_temporary = 2.0 * largest_output + m.dequantization;
    if (o.grad_accum > 1) m.layer_temporary += largest_layer_params * trained.gradient_bytes;
    m.optimizer_scratch = optimizer_scratch_bytes(*o.optimizer, features, trained, o.optimizer_impl);
    m.weight_copies = recipe.mixed && !recipe.half_model ? features.half_weight_copy_bytes : 0.0;

    m.optimizer_paged = o.paged_optimizer;
    settle_peak(m, o.reserve);
    return m;
}

void settle_peak(MemoryUse& m, const FrameworkReserve& reserve) {
    // Paged states need no device memory: unified memory moves them to the host under pressure, and the update
    // pages each tensor's states back in as it reaches it.
    double fixed = m.weights + m.gradients + (m.optimizer_paged ? 0.0 : m.optimizer_states);
    double forward_backward = m.activations + m.weight_copies + m.layer_temporary;
    double tensors = fixed + std::max(forward_backward, m.optimizer_scratch);
    m.peak_phase = m.optimizer_scratch > forward_backward ? "optimizer" : "forward_backward";
    m.temporary = tensors - fixed - m.activations;
    m.framework_reserve = reserve.bytes(tensors);
    m.peak = tensors + m.framework_reserve;
}

MemoryUse with_capacity(MemoryUse use, const HardwareSpec& hw) {
    use.capacity = hw.memory_bytes();
    return use;
}

MemoryUse estimate_memory(const ModelFeatures& features, const HardwareSpec& hw, const MemoryOptions& options) {
    return with_capacity(estimate_memory(features, options), hw);
}

MemoryUse estimate_memory(const ModelFeatures& features, const HardwareSpec& hw, Precision precision,
                          const OptimizerDef& optimizer) {
    MemoryOptions o;
    o.precision = precision;
    o.optimizer = &optimizer;
    return estimate_memory(features, hw, o);
}

}  // namespace prenet
