#include "run/framework.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace prenet {

namespace {

// Megatron-LM (docs/parallel.md "Framework presets" cites each):
// - --recompute-granularity selective recomputes the core attention only (Korthikanti et al. 2022; "core_attn",
//   megatron/training/arguments.py);
// - ColumnParallelLinear's backward issues its input-gradient all-reduce (reduce-scatter under sequence
//   parallelism) asynchronously and computes the weight gradient meanwhile
//   (LinearWithGradAccumulationAndAsyncCommunication, megatron/core/tensor_parallel/layers.py); the full
//   overlap of --tp-comm-overlap (Transformer Engine userbuffers) is off by default;
// - with --overlap-grad-reduce and --overlap-param-gather, which its distributed optimizer is run with, buckets of
//   max(40M, 1M x data-parallel ranks) parameters are reduced during the backward and the updated parameters
//   gathered during the next forward (DistributedDataParallelConfig; megatron/training/training.py);
// - --bf16 accumulates and all-reduces gradients in fp32 (megatron/training/arguments.py sets
//   accumulate_allreduce_grads_in_fp32; the gradient buffer is then torch.float);
// - the loss is vocab_parallel_cross_entropy (megatron/core/tensor_parallel/cross_entropy.py): the logits cast to
//   fp32, exponentiated and normalised in place and kept as the softmax, the backward's gradient written over it.
FrameworkPreset megatron() {
    FrameworkPreset p;
    p.name = "megatron";
    p.copies_gradients_into_buckets = false;
    p.fp32_gradients_under_bf16 = true;
    p.tensor_overlap = TensorOverlap::weight_gradients;
    p.bucket_bytes = 0;
    p.bucket_params = 40e6;
    p.bucket_params_per_rank = 1e6;
    p.in_place_loss = true;
    return p;
}

// PyTorch FSDP (https://pytorch.org/docs/stable/fsdp.html): FULL_SHARD by default (reshard after forward),
// backward_prefetch=BACKWARD_PRE, forward_prefetch=False with implicit forward prefetching on a separate stream,
// limit_all_gathers=True (the current block and the next one's gather alive at once); selective checkpointing
// is PyTorch's per-op selective activation checkpointing (torch.utils.checkpoint's
// create_selective_checkpoint_contexts, as torchtitan's --activation_checkpoint.mode selective with
// selective_ac_option op applies it per transformer block: torchtitan/distributed/activation_checkpoint.py saves
// aten.mm and scaled_dot_product_attention outputs and recomputes the rest); async TP is off unless enabled.
FrameworkPreset fsdp() {
    FrameworkPreset p;
    p.name = "fsdp";
    p.copies_gradients_into_buckets = false;
    p.selective = CheckpointKind::op_level;
    return p;
}

// DeepSpeed (deepspeed/runtime/zero/config.py): overlap_comm defaults to stage == 3, so ZeRO 0-2 reduce their
// gradients (reduce_bucket_size 5e8 elements) and ZeRO-1/2 gather the updated parameters after the step without
// overlap; ZeRO-3 prefetches stage3_prefetch_bucket_size = 5e7 parameters ahead and re-gathers in the backward;
// activation checkpointing (deepspeed.checkpointing.checkpoint) wraps whole layers; a bf16 model at ZeRO 0 or 1
// trains through its BF16_Optimizer (FrameworkPreset::bf16_optimizer_below_zero).
FrameworkPreset deepspeed() {
    FrameworkPreset p;
    p.name = "deepspeed";
    p.copies_gradients_into_buckets = false;
    p.selective = CheckpointKind::full;
    p.overlap_from_zero = 3;
    p.bucket_bytes = 0;
    p.bucket_params = 5e8;
    p.prefetch_params = 5e7;
    p.bf16_optimizer_below_zero = 2;
    return p;
}

// JAX/XLA (TPU pods; PyTorch/XLA and the Neuron compiler compile through the same): the program is compiled whole,
// so element-wise and norm chains are fused into their neighbours (the same as --compile); XLA's latency-hiding
// scheduler issues collectives asynchronously and schedules compute under them (docs.nvidia.com/jax-toolbox,
// "--xla_gpu_enable_latency_hiding_scheduler: allows XLA to move communication collectives to increase overlap
// with compute kernels"; on by default on TPU), so data-parallel reductions overlap the backward at every ZeRO
// stage; tensor-parallel collectives are decomposed into the matrix products that depend on them (collective
// matmul: Wang et al., "Overlap Communication with Dependent Computation via Decomposition in Large Deep Learning
// Models", ASPLOS 2023, implemented in XLA); FSDP-style sharding (GSPMD, Xu et al. 2021, arXiv:2105.04663: weights
// sharded over the data axis, gathered per layer and gathered again for the backward); jax.checkpoint policies
// that save matrix products (checkpoint_dots) recompute the rest, per op.
FrameworkPreset xla() {
    FrameworkPreset p;
    p.name = "xla";
    p.copies_gradients_into_buckets = false;
    p.selective = CheckpointKind::op_level;
    p.tensor_overlap = TensorOverlap::all_gemms;
    p.fuses_elementwise = true;
    return p;
}

// A graph compiler's default mode under PyTorch: Intel Gaudi's bridge accumulates the ops into graphs that its
// graph compiler compiles ("Lazy mode is the default mode ... the graph compiler ... performs operator fusion",
// huggingface.co/docs/optimum/habana/usage_guides/accelerate_training; the bridge's newer default, eager mode with
// torch.compile, fuses as --compile does, docs.habana.ai "PyTorch Gaudi Theory of Operations"), and AWS Neuron's
// torch-neuronx traces lazily through PyTorch/XLA and compiles each graph with the Neuron compiler. Only the
// fusion is sourced for both: collectives and recomputation stay generic.
FrameworkPreset graph() {
    FrameworkPreset p;
    p.name = "graph";
    p.fuses_elementwise = true;
    return p;
}

}  // namespace

TensorOverlap tensor_overlap(const FrameworkPreset& preset, bool tp_comm_overlap, bool sequence_parallel) {
    return tp_comm_overlap && sequence_parallel ? TensorOverlap::all_gemms : preset.tensor_overlap;
}

std::vector<std::string> framework_names() { return {"generic", "megatron", "fsdp", "deepspeed", "xla", "graph"}; }

std::string usual_framework(const std::string& device_kind) {
    if (device_kind == "tpu") return "xla";
    if (device_kind == "hpu" || device_kind == "neuron") return "graph";
    return "generic";
}

FrameworkPreset preset_for(const std::string& name) {
    if (name == "generic") return FrameworkPreset{};
    if (name == "megatron") return megatron();
    if (name == "fsdp") return fsdp();
    if (name == "deepspeed") return deepspeed();
    if (name == "xla") return xla();
    if (name == "graph") return graph();
    throw Error("framework must be auto, generic, megatron, fsdp, deepspeed, xla or graph, got '" + name + "'",
                ErrorCode::invalid_value, "framework");
}

bool is_bf16_half_model(const PrecisionRecipe& r) {
    return r.half_model && (r.mode == Precision::bf16 || r.mode == Precision::fp8);
}

bool runs_bf16_optimizer(const FrameworkPreset& preset, int zero, const PrecisionRecipe& recipe) {
    return is_bf16_half_model(recipe) && zero < preset.bf16_optimizer_below_zero;
}

int partitioning_zero(const FrameworkPreset& preset, int zero, const PrecisionRecipe& recipe) {
    return runs_bf16_optimizer(preset, zero, recipe) ? std::max(zero, 1) : zero;
}

double last_bucket_fraction(const FrameworkPreset& p, double params, double gradient_bytes, double ranks) {
    double by_bytes = p.bucket_bytes / std::max(1.0, params * gradient_bytes);
    double by_params = std::max(p.bucket_params, p.bucket_params_per_rank * ranks) / std::max(1.0, params);
    return std::min(1.0, std::max(by_bytes, by_params));
}

double gathered_params(const FrameworkPreset& p, double unit_params, double stage_params) {
    if (!p.reshard_after_forward) return stage_params;
    // A parameter budget gathers at most what the stage holds; whole blocks are the block computed and those
    // prefetched (FSDP's limit_all_gathers: two at once).
    if (p.prefetch_params > 0) return std::min(stage_params, unit_params + p.prefetch_params);
    return unit_params * (1.0 + p.prefetch_blocks);
}

}  // namespace prenet
