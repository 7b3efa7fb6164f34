#include "run/memory.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "run/checkpointing.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// c10/cuda/CUDACachingAllocator.cpp: allocations up to kSmallSize (1 MiB) come from 2 MiB segments in 512-byte
// blocks (their rounding is negligible); larger ones are rounded up to kRoundLarge (2 MiB).
constexpr double kSmallAllocation = 1.0 * kMiB;

bool is_loss(const LayerFeatures& lf) { return lf.layer.kind == "cross_entropy"; }

}  // namespace

FrameworkReserve FrameworkReserve::pytorch_default() {
    FrameworkReserve r;
    r.cuda_context_bytes = 400e6;
    r.library_workspace_bytes = 2 * 32 * kMiB;
    r.rounding_bytes_per_tensor = 1 * kMiB;
    r.fragmentation = 0.05;
    r.nccl_bytes_per_group = 16 * 2 * 4 * kMiB;
    return r;
}

const char* to_string(LossMode mode) {
    switch (mode) {
        case LossMode::full: return "full";
        case LossMode::chunked: return "chunked";
        case LossMode::fused: return "fused";
        case LossMode::inplace: return "inplace";
    }
    return "full";
}

LossMode parse_loss_mode(const std::string& name) {
    if (name == "full") return LossMode::full;
    if (name == "chunked") return LossMode::chunked;
    if (name == "fused") return LossMode::fused;
    if (name == "inplace") return LossMode::inplace;
    throw Error("unknown loss '" + name + "' (full, chunked, fused, inplace)", ErrorCode::invalid_value, "loss");
}

LossMemory loss_memory(double tokens, double vocab, double hidden, Precision precision, LossMode mode) {
    LossMemory m;
    const double fp32 = fp32_bytes, logits_bytes = activation_bytes(precision);
    if (mode == LossMode::chunked) {
        double chunks = std::ceil(vocab / std::max(1.0, hidden));
        double chunk_tokens = std::ceil(tokens / std::max(1.0, chunks));
        m.temporary = chunk_tokens * vocab * (fp32 + fp32);
        return m;
    }
    if (mode == LossMode::fused) {
        m.saved = tokens * vocab * logits_bytes;
        m.temporary = tokens * vocab * logits_bytes;
        return m;
    }
    if (mode == LossMode::inplace) {
        m.saved = tokens * vocab * fp32;
        m.temporary = logits_bytes < fp32 ? tokens * vocab * logits_bytes : 0.0;
        return m;
    }
    // The log-probabilities (fp32) stay until the backward; so do the logits themselves, the model's output the
    // training loop holds (Hugging Face's outputs.logits, a training script's `pred`). In the backward,
    // log_softmax's gradient (fp32) is computed beside the incoming one (fp32: nll_loss's dense gradient).
    m.saved = tokens * vocab * (fp32 + logits_bytes);
    m.temporary = tokens * vocab * (fp32 + fp32);
    return m;
}

namespace {

// Calls f(layer index, its loss memory) for each cross-entropy layer over logits.
template <class F>
void for_each_loss(const ModelFeatures& features, const TrainingSetup& o, F f) {
    for (size_t i = 0; i < features.layers.size(); ++i) {
        const auto& lf = features.layers[i];
        if (!is_loss(lf) || lf.layer.input.size() < 2) continue;
        double vocab = double(lf.layer.input.back()), tokens = double(elements(lf.layer.input)) / vocab;
        double hidden = i > 0 ? double(features.layers[i - 1].layer.input.back()) : vocab;
        f(i, loss_memory(tokens, vocab, hidden, o.precision, o.loss));
    }
}

}  // namespace

ActivationMemory training_activations(const ModelFeatures& features, const TrainingSetup& o) {
    ActivationMemory act = activation_memory(features, o.precision, o.checkpoint_kind());
    for_each_loss(features, o, [&](size_t index, const LossMemory& loss) {
        const LayerFeatures& lf = features.layers[index];
        double replaced = double(lf.repeat) * (loss.saved - lf.cost.saved_activation_bytes);
        act.saved += replaced;
        // A loss outside blocks is in one of the ends: after the blocks (a language model's head) or before them.
        if (!lf.block.empty()) return;
        bool after_blocks = std::any_of(features.layers.begin(), features.layers.begin() + std::ptrdiff_t(index),
                                        [](const LayerFeatures& l) { return !l.block.empty(); });
        (after_blocks ? act.trailing : act.leading) += replaced;
    });
    return act;
}

PrecisionRecipe model_recipe(const TrainingSetup& setup) {
    PrecisionRecipe recipe = precision_recipe(setup.precision, setup.mixed);
    if (!is_bf16_half_model(recipe)) return recipe;
    bool bf16_optimizer = runs_bf16_optimizer(setup.framework, setup.zero, recipe);
    if (setup.framework.fp32_gradients_under_bf16 || bf16_optimizer) recipe.gradient_bytes = fp32_bytes;
    if (bf16_optimizer) recipe.kept_half_gradient_bytes = half_bytes;
    return recipe;
}

PrecisionRecipe trained_recipe(const TrainingSetup& setup) {
    PrecisionRecipe recipe = precision_recipe(setup.precision, setup.mixed);
    return setup.adapters ? adapter_recipe(recipe, setup.half_adapters) : model_recipe(setup);
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
    m.gradients = n * (trained.gradient_bytes + trained.kept_half_gradient_bytes);
    m.optimizer_states = optimizer_state_bytes(*o.optimizer, features);

    ActivationMemory act = training_activations(features, o);
    m.activations = act.saved;
    m.checkpointed_blocks = act.checkpointed_blocks;

    // The largest single layer's transient output and its gradient live beside everything else; with
    // accumulation, so does one layer's freshly computed weight gradient before it is added in.
    // A quantised base dequantises one weight at a time, alive through its matmul.
    // The loss replaces what the loss op saves with loss_memory's account of the logits.
    double largest_output = 0, largest_layer_params = 0;
    const double tensors_per_param = 2.0 + (trained.master_bytes > 0 ? 1.0 : 0.0) +
                                     std::round(o.optimizer->state_bytes_per_param / 4.0);
    for (size_t i = 0; i < features.layers.size(); ++i) {
        const auto& lf = features.layers[i];
        // The loss's own transients are loss_memory's, and so are the output and output gradient of the layer
        // that feeds it (the head): its output is the logits loss_memory keeps, its gradient the logits' gradient
        // loss_memory's transient holds (a chunked loss fuses the head in and never writes the whole logits).
        bool feeds_loss = i + 1 < features.layers.size() && is_loss(features.layers[i + 1]);
        if (!feeds_loss && !is_loss(lf)) largest_output = std::max(largest_output, lf.cost.forward_bytes_written);
        largest_layer_params = std::max(largest_layer_params, double(lf.trainable_params));
        if (double(lf.trainable_params) * trained.weight_bytes > kSmallAllocation)
            m.rounded_tensors += std::int64_t(double(lf.repeat) * tensors_per_param);
    }
    for_each_loss(features, o, [&](size_t, const LossMemory& loss) {
        m.loss_temporary = std::max(m.loss_temporary, loss.temporary);
    });
    m.dequantization = features.largest_dequantized_bytes;
    m.layer_output = 2.0 * largest_output;
    // The loss's transients live during its backward, which runs before any checkpointed block is recomputed:
    // the recompute block (counted in the activations) is not yet alive beside them.
    double loss_beyond_activations = std::max(0.0, m.loss_temporary - act.recompute_block);
    m.layer_temporary = std::max(m.layer_output, loss_beyond_activations) + m.dequantization;
    if (o.grad_accum > 1) m.accumulation_gradient = largest_layer_params * trained.gradient_bytes;
    m.layer_temporary += m.accumulation_gradient;
    m.optimizer_scratch = optimizer_scratch_bytes(*o.optimizer, features, trained, o.optimizer_impl);
    m.weight_copies = recipe.mixed && !recipe.half_model ? features.half_weight_copy_bytes : 0.0;

    m.optimizer_paged = o.paged_optimizer;
    settle_peak(m, o.reserve);
    return m;
}

double model_state_bytes(const MemoryUse& m) {
    // Paged states need no device memory: unified memory moves them to the host under pressure, and the update
    // pages each tensor's states back in as it reaches it.
    return m.weights + m.gradients + (m.optimizer_paged ? 0.0 : m.optimizer_states);
}

double forward_backward_bytes(const MemoryUse& m) { return m.activations + m.weight_copies + m.layer_temporary; }

DeviceMemory device_memory(double model_states, double transient, const MemoryUse& m, const FrameworkReserve& reserve) {
    DeviceMemory d;
    double tensors = model_states + transient;
    // PyTorch's own measures: allocated (tensors and the workspaces it allocates), reserved (the segments the
    // caching allocator holds), and the device's, beside the allocator.
    d.allocated = tensors + reserve.library_workspace_bytes;
    // Fragmentation comes from the transient tensors (allocated and freed in varying sizes every step); the
    // model states are allocated once and lose only their rounding.
    d.reserved = d.allocated + reserve.fragmentation * (tensors - model_states) +
                 double(m.rounded_tensors) * reserve.rounding_bytes_per_tensor;
    d.device = d.reserved + reserve.cuda_context_bytes + m.nccl_buffers;
    return d;
}

void settle_peak(MemoryUse& m, const FrameworkReserve& reserve) {
    double fixed = model_state_bytes(m);
    double forward_backward = forward_backward_bytes(m);
    double transient = std::max(forward_backward, m.optimizer_scratch);
    double tensors = fixed + transient;
    m.peak_phase = m.optimizer_scratch > forward_backward ? "optimizer" : "forward_backward";
    m.temporary = tensors - fixed - m.activations;
    DeviceMemory peak = device_memory(fixed, transient, m, reserve);
    m.peak_allocated = peak.allocated;
    m.peak_reserved = peak.reserved;
    m.peak = peak.device;
    m.framework_reserve = m.peak - tensors;
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
