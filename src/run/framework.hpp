#pragma once
// What a training framework does by default that the step's time and memory depend on (--framework,
// docs/parallel.md "Framework presets"): what selective recomputation recomputes, which collectives overlap
// compute, and how FSDP / ZeRO-3 gathers its weights. The step model reads these fields, never a framework's
// name. `generic` is PreNeT's own default: each field's default below is the value the step model had before
// presets existed, so `FrameworkPreset{}` and `preset_for("generic")` answer exactly as before.
#include <string>
#include <vector>

#include "run/checkpointing.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {


// Which tensor-parallel collectives overlap matrix work (the rest stays exposed).
enum class TensorOverlap {
    none,              // every collective waits for its input and blocks the next kernel
    weight_gradients,  // the backward's collectives overlap the weight-gradient GEMMs (Megatron's async all-reduce)
    all_gemms,         // every collective is pipelined with its layer's GEMMs (--tp-comm-overlap, torch async TP)
};

// PyTorch DDP's gradient bucket (DistributedDataParallel's bucket_cap_mb, 25 MiB): buckets are all-reduced as
// the backward fills them, and the last one only after the backward has ended (zero 0 and 1).
inline constexpr double ddp_bucket_bytes = 25.0 * 1024 * 1024;

struct FrameworkPreset {
    std::string name = "generic";
    // What `--checkpointing selective` means (run/checkpointing.hpp): the attention core (Megatron's
    // --recompute-granularity selective), per-op (PyTorch's selective activation checkpointing) or whole blocks.
    CheckpointKind selective = CheckpointKind::attention_core;
    TensorOverlap tensor_overlap = TensorOverlap::none;
    // Data parallelism: the gradient reduction overlaps the backward (and ZeRO-1's parameter gather the next
    // forward) from this ZeRO stage on; below it they run after the backward, exposed (DeepSpeed's overlap_comm).
    int overlap_from_zero = 0;
    // The gradient bucket, in bytes and in parameters (the larger applies; Megatron's grows with the data-
    // parallel ranks: max(bucket_params, bucket_params_per_rank x ranks)). The last bucket cannot overlap.
    double bucket_bytes = ddp_bucket_bytes;
    double bucket_params = 0, bucket_params_per_rank = 0;
    // ZeRO-3 / FSDP FULL_SHARD: free each block's gathered weights after its forward and gather them again
    // before its backward (false: SHARD_GRAD_OP-like, the gathered weights stay until the backward).
    bool reshard_after_forward = true;
    // Gathered weights prefetched beyond the block being computed: whole blocks, or (prefetch_params > 0) a
    // budget of parameters instead (DeepSpeed's stage3_prefetch_bucket_size).
    double prefetch_blocks = 1;
    double prefetch_params = 0;
    // A bf16 model's gradients are accumulated and reduced in fp32 (4 bytes per parameter, not 2): Megatron's
    // main_grad buffer (megatron/training/arguments.py: "bfloat16 requires gradient accumulation and
    // all-reduce to be done in fp32", accumulate_allreduce_grads_in_fp32 forced on for --bf16).
    bool fp32_gradients_under_bf16 = false;
    // Below this ZeRO stage a bf16 model trains through DeepSpeed's BF16_Optimizer
    // (deepspeed/runtime/bf16_optimizer.py), which DeepSpeed runs for bf16 without ZeRO and at ZeRO-1 with fp32
    // gradient accumulation (`data_types.grad_accum_dtype: fp32`, as Megatron-DeepSpeed's bf16 runs set it): it
    // accumulates and reduces the gradients in a full-size fp32 buffer (fp32_groups_gradients_flat, not sharded
    // across data-parallel ranks), and keeps the bf16 gradients autograd writes beside it (zeroed between steps,
    // not freed: immediate_grad_update is off by default). 0: never.
    int bf16_optimizer_below_zero = 0;
    // The whole program is compiled, so element-wise and norm chains are fused as --compile fuses them (XLA).
    bool fuses_elementwise = false;
    // Data parallelism without ZeRO copies every gradient into its buckets (PyTorch DDP's default,
    // gradient_as_bucket_view=False: the buckets' flat tensors cover every gradient, "the total gradients size"
    // that the option's documentation says a view would save), for as long as the model lives. Megatron's
    // contiguous buffer, DeepSpeed's reduce bucket, FSDP's NO_SHARD flat parameters and XLA keep no such copy.
    bool copies_gradients_into_buckets = true;
    // Its cross-entropy keeps the fp32 softmax and writes the gradient over it (Megatron's vocab-parallel
    // cross-entropy): --loss defaults to inplace rather than full (run/memory.hpp's loss_memory).
    bool in_place_loss = false;
};

// The tensor-parallel overlap a layout runs with: every collective pipelined with its layer's GEMMs when
// --tp-comm-overlap asks it (Megatron's Transformer Engine userbuffers, torch's async TP) and the layout has
// sequence parallelism, whose all-gathers and reduce-scatters are what those pipeline (Megatron asserts
// --sequence-parallel with --tp-comm-overlap); else the preset's own.
TensorOverlap tensor_overlap(const FrameworkPreset& preset, bool tp_comm_overlap, bool sequence_parallel);

// The preset of `name` (generic, megatron, fsdp, deepspeed, xla, graph); throws Error for another name.
FrameworkPreset preset_for(const std::string& name);
// The preset names, generic first.
std::vector<std::string> framework_names();
// `--framework auto` (the default): each accelerator's usual framework, by the sheet's `kind`: xla on a TPU (JAX),
// graph on Gaudi (hpu) and Trainium (neuron), whose PyTorch runs through a graph compiler by default; generic on
// GPUs, where PyTorch runs eagerly unless asked to compile.
inline constexpr const char* auto_framework = "auto";
std::string usual_framework(const std::string& device_kind);

// A half-precision bf16 model (fp8 runs as one): what fp32_gradients_under_bf16 and the BF16 optimizer apply to.
bool is_bf16_half_model(const PrecisionRecipe& recipe);
// Whether a step at ZeRO stage `zero` of a model in `recipe` (the precision's own) trains through DeepSpeed's
// BF16_Optimizer (FrameworkPreset::bf16_optimizer_below_zero): fp32 gradients all-reduced, bf16 ones kept.
bool runs_bf16_optimizer(const FrameworkPreset& preset, int zero, const PrecisionRecipe& recipe);
// The ZeRO stage whose partitioning a step at stage `zero` runs with. DeepSpeed's BF16_Optimizer partitions the
// fp32 master weights and the optimizer's states over the data-parallel ranks and all-gathers the updated bf16
// weights after its step whatever the configuration's stage (bf16_optimizer.py: _setup_for_real_optimizer keeps
// one partition of fp32 weights per rank, update_lp_params gathers), so a bf16 model at ZeRO 0 runs as ZeRO 1;
// otherwise `zero` itself.
int partitioning_zero(const FrameworkPreset& preset, int zero, const PrecisionRecipe& recipe);

// Of a data-parallel gradient reduction over `params` parameters of `gradient_bytes` each across `ranks`
// ranks, the last bucket's share: reduced only after the backward has ended.
double last_bucket_fraction(const FrameworkPreset& preset, double params, double gradient_bytes, double ranks);

// Parameters whose gathered weights are alive at once under ZeRO-3: the block computed and what is prefetched,
// or, without resharding after the forward, every parameter of the stage.
double gathered_params(const FrameworkPreset& preset, double unit_params, double stage_params);

}  // namespace prenet
