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
#include <string_view>

#include "hardware/spec.hpp"
#include "ops/features.hpp"
#include "run/checkpointing.hpp"
#include "run/framework.hpp"
#include "run/optimizer.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

// What PyTorch holds on a GPU beyond the tensors, each a named assumption with its source
// (docs/training-model.md "Fixed costs and the caching allocator"). Two parts sit inside PyTorch's caching
// allocator (torch.cuda.max_memory_reserved counts them), two outside it (nvidia-smi counts them too):
//   inside:  the cuBLAS/cuBLASLt workspaces (allocated through the caching allocator), each tensor's rounding
//            to the allocator's blocks, and fragmentation (cached blocks free at the peak but not reusable);
//   outside: the CUDA context (driver state and the lazily loaded kernels) and NCCL's communication buffers.
struct FrameworkReserve {
    double cuda_context_bytes = 0;       // outside the allocator
    double library_workspace_bytes = 0;  // inside: one cuBLAS workspace per stream
    // Inside: a large allocation (over 1 MiB) is rounded up to a multiple of 2 MiB, so each of the persistent
    // parameter-sized tensors wastes 1 MiB on average.
    double rounding_bytes_per_tensor = 0;
    double fragmentation = 0;            // inside: of the transient tensors at the peak (all but model states)
    double nccl_bytes_per_group = 0;     // outside: each process group's NCCL buffers (one communicator)
    // PreNeT's default for PyTorch on a GPU (the sources are in docs/training-model.md):
    // - CUDA context: about 400 MB with lazy module loading (CUDA >= 11.7, PyTorch's default; pytorch#109888);
    // - workspaces: cuBLASLt's 32 MiB on Hopper (pytorch#120925, the size cuBLAS recommends), for the compute
    //   and the communication stream: 64 MiB;
    // - rounding: 1 MiB per large tensor (c10/cuda/CUDACachingAllocator.cpp: kRoundLarge = 2 MiB);
    // - fragmentation: 5% of the transient tensors at the peak (PreNeT's assumption);
    // - NCCL: NCCL_BUFFSIZE (4 MiB, the default) per channel for each of a ring's two peers, 16 channels:
    //   128 MiB per process group.
    static FrameworkReserve pytorch_default();
};

enum class LossMode { full, chunked, fused, inplace };
const char* to_string(LossMode mode);
LossMode parse_loss_mode(const std::string& name);  // throws Error (field "loss")

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
    // The ZeRO stage (parallel/layout.hpp; 0 on one device): which optimizer wrapper the framework runs
    // (FrameworkPreset::bf16_optimizer_below_zero).
    int zero = 0;
    // torch.compile: each block's chains of memory-bound kernels run fused (run/compile.hpp).
    bool compile = false;
    // The model's activations are channels-last (NHWC, torch.channels_last): half-precision convolutions on
    // tensor cores then need no layout transposes around them (run/memory_format.hpp). Off: PyTorch's default
    // NCHW (torch.contiguous_format).
    bool channels_last = false;
    // The cross-entropy loss: full (the fp32 logits of every token kept for the backward, PyTorch's
    // F.cross_entropy) or chunked (Liger-Kernel's fused linear cross-entropy: the logits of one chunk of tokens at
    // a time, their gradient computed in the forward; memory only, the step time is the same).
    LossMode loss = LossMode::full;
};

// The recipe the model's own parameters follow under the framework: the precision's, with fp32 gradients for a
// bf16 (or fp8, which runs as bf16) half-precision model where the framework keeps them so (Megatron), and the
// bf16 ones kept beside them where it keeps both (DeepSpeed's BF16_Optimizer, below its ZeRO stage).
PrecisionRecipe model_recipe(const TrainingSetup& setup);
// The recipe the trained parameters follow: the model's (model_recipe), or the adapters'.
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
    double layer_output = 0;       // of layer_temporary: the largest layer's output and its gradient (the loss's
                                   // logits count apart, in loss_temporary; the larger of the two counts)
    double loss_temporary = 0;     // of layer_temporary: the loss's logits and their gradient (LossMode)
    double gathered = 0;           // of layer_temporary: ZeRO-3's unsharded weights and gradients of the units
    double communication_buffers = 0;  // of layer_temporary: DDP's gradient buckets in flight
    // Of layer_temporary: with gradient accumulation, the largest layer's freshly computed weight gradient before
    // it is added to the accumulated one. Under ZeRO-2/3 it is one of the unsharded gradients `gathered` counts.
    double accumulation_gradient = 0;
    double optimizer_scratch = 0;  // the optimizer phase's transient buffers
    std::int64_t rounded_tensors = 0;  // persistent tensors over 1 MiB (weights, gradients, states per layer)
    double nccl_buffers = 0;       // NCCL's buffers, outside the allocator (the layout's process groups)
    // The peak as PyTorch reports it: allocated (max_memory_allocated: tensors and workspaces), reserved
    // (max_memory_reserved: allocated plus rounding and fragmentation) and the device's (nvidia-smi: reserved
    // plus the CUDA context and NCCL's buffers), which `peak` is and `fits` judges.
    double peak_allocated = 0, peak_reserved = 0;
    double framework_reserve = 0;  // peak less the tensors: workspaces, rounding, fragmentation, context, NCCL
    std::string_view peak_phase = "forward_backward";  // or "optimizer" (a literal: copies allocate nothing)
    // Paged optimizer states: in host-backed unified memory, not part of the peak (then weights + gradients +
    // activations + temporary + framework reserve = peak).
    bool optimizer_paged = false;
    std::int64_t checkpointed_blocks = 0;
    double peak = 0, capacity = 0;
    bool fits() const { return peak <= capacity; }
    // weights + gradients + optimizer states + activations + temporary + framework reserve == peak, where
    // temporary includes the weight copies when the forward/backward phase sets the peak.
};

// PyTorch's three measures of the device's memory while `model_states` (allocated once) and `transient` tensors
// are live: allocated (tensors + workspaces), reserved (+ fragmentation of the transient tensors and the rounding
// of the persistent ones) and the device's (+ CUDA context and NCCL buffers). settle_peak takes the peak from
// it, the memory timeline (run/memory_timeline.hpp) every point.
struct DeviceMemory {
    double allocated = 0, reserved = 0, device = 0;
};
DeviceMemory device_memory(double model_states, double transient, const MemoryUse& use, const FrameworkReserve& reserve);
// What the device holds through the whole step: weights, gradients and (unless paged) optimizer states.
double model_state_bytes(const MemoryUse& use);
// The forward/backward phase's tensors beyond the model states at its peak (the start of the backward pass):
// saved activations, autocast's weight copies and the layer transients.
double forward_backward_bytes(const MemoryUse& use);

// The peak does not depend on the accelerator: computed once for a model and its training settings, it is
// compared with each accelerator's capacity (capacity is left 0 here; with_capacity sets it).
MemoryUse estimate_memory(const ModelFeatures& features, const MemoryOptions& options);
MemoryUse with_capacity(MemoryUse use, const HardwareSpec& hw);
// Sets the peak, its phase, the temporary share and the framework reserve from the other parts (the two
// phases above); for estimates whose parts were changed (ZeRO sharding, parallel/data_parallel.cpp).
void settle_peak(MemoryUse& use, const FrameworkReserve& reserve);
// The two steps in one, for a single accelerator.
MemoryUse estimate_memory(const ModelFeatures& features, const HardwareSpec& hw, const MemoryOptions& options);

// Of the logits' B x S x vocab elements held by the loss: saved for the backward (per element of the loss's input)
// and transient at its peak. full: the fp32 log-probabilities are saved (4 bytes); at the backward their fp32
// gradient and its half-precision cast for the head's backward (4 + 2 bytes; fp32 training: 4 + 4). chunked: none
// saved; one chunk of ceil(tokens / ceil(vocab / hidden)) tokens (Liger-Kernel's chunk size: a chunk's logits about
// the size of the hidden states) holds its fp32 logits and their gradient (4 + 4 bytes per element). fused (flash-attn's
// CrossEntropyLoss, llm-foundry's default loss_fn fused_crossentropy): the logits in their own precision are saved
// (the model's output, held anyway; the kernel keeps only one fp32 log-sum-exp per token beside them, negligible),
// and the backward writes their gradient in that precision (activation_bytes each: 2 + 2 bytes under bf16).
// inplace (Megatron's vocab_parallel_cross_entropy): the logits are cast to fp32, exponentiated and normalised in
// place and that softmax is saved (4 bytes; the half-precision logits are freed with the forward, no training loop
// holds them); the backward writes the gradient over it and casts it for the head's backward (2 bytes under
// bf16/fp16, none in fp32, where the cast is the tensor itself).
struct LossMemory {
    double saved = 0, temporary = 0;
};
LossMemory loss_memory(double tokens, double vocab, double hidden, Precision precision, LossMode mode);

// The saved activations of one micro-batch under the setup's checkpointing (activation_memory), with each loss's
// logits as loss_memory keeps them in place of what the loss op saves: what estimate_memory and a pipeline stage's
// activations (parallel/pipeline.hpp) both count.
ActivationMemory training_activations(const ModelFeatures& features, const TrainingSetup& setup);

// Tensors only (no framework reserve), fused optimizer, no checkpointing or accumulation.
MemoryUse estimate_memory(const ModelFeatures& features, const HardwareSpec& hw, Precision precision,
                          const OptimizerDef& optimizer);

}  // namespace prenet
