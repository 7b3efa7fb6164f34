#pragma once
// Peak memory of one training step on an accelerator (docs/training-model.md). Two phases never overlap:
//   forward/backward  weights + gradients + optimizer states + saved activations + the largest layer's
//                     transient output and its gradient (+ one layer's fresh gradient when accumulating);
//   optimizer step    weights + gradients + optimizer states + the optimizer's scratch (foreach intermediates;
//                     activations are freed by then).
// The peak is the larger phase plus the framework reserve (CUDA context, library workspaces and caching-
// allocator fragmentation).
#include <cstdint>
#include <string>

#include "hardware/spec.hpp"
#include "ops/features.hpp"
#include "run/checkpointing.hpp"
#include "run/framework.hpp"
#include "run/optimizer.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

// Memory the framework takes beyond the tensors: a fixed context plus a fraction of the tensor peak.
struct FrameworkReserve {
    double context_bytes = 0;
    double fraction = 0;
    // PreNeT's default for PyTorch on a GPU: 1 GiB (CUDA context with its loaded kernels, cuBLAS/cuDNN
    // workspaces) plus 5% of the tensor peak (allocator rounding and fragmentation).
    static FrameworkReserve pytorch_default() { return {1024.0 * 1024.0 * 1024.0, 0.05}; }
    double bytes(double tensor_peak) const { return context_bytes + fraction * tensor_peak; }
};

// How a step trains: what both the step time and the memory estimate depend on.
struct TrainingSetup {
    Precision precision = Precision::fp32;
    MixedRecipe mixed = MixedRecipe::autocast;  // fp16/bf16 only; must match the features' recipe
    const OptimizerDef* optimizer = nullptr;  // required
    OptimizerImpl optimizer_impl = OptimizerImpl::fused;
    std::int64_t grad_accum = 1;
    bool checkpointing = false;  // full checkpointing (what memory advice switches on)
    // Without full checkpointing, the other kinds (run/checkpointing.hpp): attention_core (Megatron's
    // selective recomputation), op_level (PyTorch's per-op selective checkpointing) or offload.
    CheckpointKind other_checkpointing = CheckpointKind::none;
    CheckpointKind checkpoint_kind() const { return checkpointing ? CheckpointKind::full : other_checkpointing; }
    // The trained parameters are LoRA adapters (fp32 weights and gradients, run/precision_recipe.hpp's
    // adapter_recipe) rather than the model's own, which then stays frozen in its stored precision.
    bool adapters = false;
    bool half_adapters = false;  // QLoRA's adapters: in the compute precision (bf16), fp32 optimizer states
    // What the training framework does by default (run/framework.hpp): PreNeT's generic unless asked.
    FrameworkPreset framework;
    // torch.compile: each block's chains of memory-bound kernels run fused (run/compile.hpp).
    bool compile = false;
};

// The recipe the trained parameters follow: the precision's, or the adapters'.
PrecisionRecipe trained_recipe(const TrainingSetup& setup);

struct MemoryOptions : TrainingSetup {
    FrameworkReserve reserve;  // none unless set
    // bitsandbytes' paged optimizer (QLoRA): the states live in CUDA unified memory, which moves them to the
    // host under pressure; the update pages each tensor's states in as it reaches it. They take no device memory.
    bool paged_optimizer = false;
};

struct MemoryUse {
    double weights = 0, gradients = 0, optimizer_states = 0, activations = 0;
    double frozen_weights = 0;   // of weights: the frozen base in its stored precision (quantised: with scales)
    double adapter_weights = 0;  // of weights: LoRA adapters
    double dequantization = 0;   // of layer_temporary: the largest weight a quantised base dequantises at once
    double weight_copies = 0;  // autocast's half-precision weight copies, alive through forward and backward
    // What the peak adds beyond weights, gradients, states and activations (transient buffers).
    double temporary = 0;
    double layer_temporary = 0;    // the forward/backward phase's transient buffers
    double optimizer_scratch = 0;  // the optimizer phase's transient buffers
    double framework_reserve = 0;
    std::string peak_phase = "forward_backward";  // or "optimizer"
    // Paged optimizer states: in host-backed unified memory, not part of the peak (then weights + gradients +
    // activations + temporary + framework reserve = peak).
    bool optimizer_paged = false;
    std::int64_t checkpointed_blocks = 0;
    double peak = 0, capacity = 0;
    bool fits() const { return peak <= capacity; }
    // weights + gradients + optimizer states + activations + temporary + framework reserve == peak, where
    // temporary includes the weight copies when the forward/backward phase sets the peak.
};

// The peak does not depend on the accelerator: computed once for a model and its training settings, it is
// compared with each accelerator's capacity (capacity is left 0 here; with_capacity sets it).
MemoryUse estimate_memory(const ModelFeatures& features, const MemoryOptions& options);
MemoryUse with_capacity(MemoryUse use, const HardwareSpec& hw);
// Sets the peak, its phase, the temporary share and the framework reserve from the other parts (the two
// phases above); for estimates whose parts were changed (ZeRO sharding, parallel/data_parallel.cpp).
void settle_peak(MemoryUse& use, const FrameworkReserve& reserve);
// The two steps in one, for a single accelerator.
MemoryUse estimate_memory(const ModelFeatures& features, const HardwareSpec& hw, const MemoryOptions& options);

// Tensors only (no framework reserve), fused optimizer, no checkpointing or accumulation.
MemoryUse estimate_memory(const ModelFeatures& features, const HardwareSpec& hw, Precision precision,
                          const OptimizerDef& optimizer);

}  // namespace prenet
