#include "parallel/data_parallel.hpp"

#include <gtest/gtest.h>

#include "importers/resolve.hpp"
#include "parallel/tensor_parallel.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

ModelFeatures gpt2_features(Precision p) {
    ModelInputs in;
    in.batch = 2;
    in.seq = 128;
    return compute_features(resolve_model("gpt2", in), p);
}

ParallelLayout dp(std::int64_t n, int zero) {
    ParallelLayout l;
    l.dp = n;
    l.zero = zero;
    return l;
}

TEST(DataParallel, DdpAllReducesEveryGradientOnceAtTheEnd) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    DataParallelComms c = data_parallel_comms(f, dp(8, 0), r);
    ASSERT_EQ(c.last_backward.size(), 1u);
    EXPECT_EQ(c.last_backward[0].op, Collective::all_reduce);
    EXPECT_DOUBLE_EQ(c.last_backward[0].bytes, double(f.params) * r.gradient_bytes);
    EXPECT_EQ(c.last_backward[0].group.size, 8);
    EXPECT_TRUE(c.forward.empty());
    EXPECT_TRUE(c.backward.empty());
    EXPECT_TRUE(data_parallel_comms(f, dp(1, 0), r).last_backward.empty());
}

// DeepSpeed's BF16 optimizer (a bf16 model below ZeRO 2): its fp32 gradient buffer is all-reduced whole; it keeps
// one partition of the fp32 master weights and of the optimizer's states per data-parallel rank and gathers the
// updated bf16 weights after its step, at ZeRO 0 as at ZeRO 1; from ZeRO 2 its ZeRO optimizer reduce-scatters
// bf16 gradients.
TEST(DataParallel, DeepSpeedsBf16OptimizerAllReducesFp32Gradients) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    FrameworkPreset deepspeed = preset_for("deepspeed");
    MemoryOptions o = testing::memory_options(Precision::bf16, "adamw", OptimizerImpl::fused, MixedRecipe::half_model);
    o.framework = deepspeed;
    const double n = double(f.params);
    for (int zero : {0, 1}) {
        o.zero = zero;
        EXPECT_EQ(partitioning_zero(deepspeed, zero, model_recipe(o)), 1) << zero;
        DataParallelComms c = data_parallel_comms(f, dp(8, zero), model_recipe(o), deepspeed);
        ASSERT_FALSE(c.last_backward.empty());
        EXPECT_EQ(c.last_backward[0].op, Collective::all_reduce) << zero;
        EXPECT_DOUBLE_EQ(c.last_backward[0].bytes, n * 4.0) << zero;
        ASSERT_EQ(c.after_step.size(), 1u) << zero;
        EXPECT_EQ(c.after_step[0].op, Collective::all_gather) << zero;
        EXPECT_DOUBLE_EQ(c.after_step[0].bytes, n * 2.0) << zero;
        // Memory: both gradients, whole on every rank (4 + 2 bytes a parameter); the fp32 master weights (4 B)
        // and AdamW's two fp32 states (8 B) an eighth each; the bf16 weights (2 B) whole.
        MemoryUse whole = estimate_memory(f, o);
        MemoryUse shard = shard_memory(whole, f, dp(8, zero), model_recipe(o), 1.0, FrameworkReserve{}, deepspeed);
        EXPECT_DOUBLE_EQ(shard.gradients, n * 6.0) << zero;
        EXPECT_DOUBLE_EQ(shard.weights, n * 2.0 + n * 4.0 / 8) << zero;
        EXPECT_DOUBLE_EQ(shard.optimizer_states, whole.optimizer_states / 8) << zero;
    }
    // Another framework, or fp16 (DeepSpeed's FP16 optimizer), keeps ZeRO 0 unpartitioned.
    o.zero = 0;
    EXPECT_EQ(partitioning_zero(FrameworkPreset{}, 0, model_recipe(o)), 0);
    const PrecisionRecipe fp16 = precision_recipe(Precision::fp16, MixedRecipe::half_model);
    EXPECT_EQ(partitioning_zero(deepspeed, 0, fp16), 0);
    EXPECT_TRUE(data_parallel_comms(f, dp(8, 0), fp16, deepspeed).after_step.empty());
    o.zero = 2;
    DataParallelComms z2 = data_parallel_comms(f, dp(8, 2), model_recipe(o), deepspeed);
    ASSERT_FALSE(z2.backward.empty());
    EXPECT_EQ(z2.backward.back().op, Collective::reduce_scatter);
    EXPECT_DOUBLE_EQ(z2.backward.back().bytes, n * 2.0);
    // The same model under the generic preset reduce-scatters its bf16 gradients at ZeRO 1.
    o.zero = 1;
    o.framework = FrameworkPreset{};
    DataParallelComms generic = data_parallel_comms(f, dp(8, 1), model_recipe(o), o.framework);
    EXPECT_EQ(generic.last_backward[0].op, Collective::reduce_scatter);
    EXPECT_DOUBLE_EQ(generic.last_backward[0].bytes, n * 2.0);
}

TEST(DataParallel, DdpAndZeroOneLeaveTheLastBucketUnhidden) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    double gradients = double(f.params) * r.gradient_bytes;  // about 500 MB: 20 buckets
    for (int zero : {0, 1})
        EXPECT_DOUBLE_EQ(data_parallel_comms(f, dp(8, zero), r).unhidden_fraction, ddp_bucket_bytes / gradients) << zero;
    // Gradients within one bucket are all reduced after the backward.
    EXPECT_EQ(data_parallel_comms(testing::params_only(1000), dp(8, 0), r).unhidden_fraction, 1.0);
}

TEST(DataParallel, FullShardGathersTwiceAndScattersOncePerMicroBatch) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    DataParallelComms c = data_parallel_comms(f, dp(8, 3), r);
    ASSERT_EQ(c.forward.size(), 1u);
    EXPECT_EQ(c.forward[0].op, Collective::all_gather);
    EXPECT_DOUBLE_EQ(c.forward[0].bytes, double(f.params) * 2.0);  // bf16 weights gathered
    ASSERT_EQ(c.backward.size(), 2u);
    EXPECT_EQ(c.backward[0].op, Collective::all_gather);
    EXPECT_EQ(c.backward[1].op, Collective::reduce_scatter);
    // What cannot hide is the largest unit's share: GPT-2 small's embedding table, 31% of its weights.
    EXPECT_DOUBLE_EQ(c.unhidden_fraction, f.largest_unit_params / double(f.params));
    EXPECT_NEAR(c.unhidden_fraction, 0.31, 0.01);
    DataParallelComms shard_grad_op = data_parallel_comms(f, dp(8, 2), r);
    EXPECT_EQ(shard_grad_op.backward.size(), 1u);  // weights stay gathered through the backward
}

TEST(DataParallel, TheFrameworkSaysWhatOverlapsAndWhetherZeroThreeGathersAgain) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    FrameworkPreset deepspeed = preset_for("deepspeed");  // overlap_comm from stage 3 only
    EXPECT_EQ(data_parallel_comms(f, dp(8, 2), r, deepspeed).unhidden_fraction, 1.0);
    EXPECT_LT(data_parallel_comms(f, dp(8, 3), r, deepspeed).unhidden_fraction, 1.0);
    FrameworkPreset keep = preset_for("fsdp");
    keep.reshard_after_forward = false;
    DataParallelComms kept = data_parallel_comms(f, dp(8, 3), r, keep);
    ASSERT_EQ(kept.backward.size(), 1u);
    EXPECT_EQ(kept.backward[0].op, Collective::reduce_scatter);
}

TEST(DataParallel, ZeroShardsMemoryStageByStage) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    MemoryOptions o = testing::memory_options(Precision::bf16, "adamw");
    MemoryUse whole = estimate_memory(f, o);
    FrameworkReserve none;
    const double n = 8;
    MemoryUse z0 = shard_memory(whole, f, dp(8, 0), r, 1.0, none);
    MemoryUse z1 = shard_memory(whole, f, dp(8, 1), r, 1.0, none);
    MemoryUse z2 = shard_memory(whole, f, dp(8, 2), r, 1.0, none);
    MemoryUse z3 = shard_memory(whole, f, dp(8, 3), r, 1.0, none);
    // DDP: every state whole, plus PyTorch DDP's buckets, a copy of every gradient kept through the optimizer
    // step (gradient_as_bucket_view off), counted with the gradients.
    EXPECT_DOUBLE_EQ(z0.communication_buffers, 0);
    EXPECT_DOUBLE_EQ(z0.gradients, 2.0 * whole.gradients);
    EXPECT_DOUBLE_EQ(z0.peak, whole.peak + whole.gradients);
    // Frameworks whose gradients are bucket views (Megatron's contiguous buffer) hold two 25 MiB buckets at most.
    FrameworkPreset views;
    views.copies_gradients_into_buckets = false;
    EXPECT_DOUBLE_EQ(shard_memory(whole, f, dp(8, 0), r, 1.0, none, views).communication_buffers, 2.0 * 25 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(z1.optimizer_states, whole.optimizer_states / n);
    EXPECT_DOUBLE_EQ(z1.gradients, whole.gradients);
    EXPECT_DOUBLE_EQ(z2.gradients, whole.gradients / n);
    EXPECT_DOUBLE_EQ(z2.weights, whole.weights);
    // ZeRO-3: every model state over n, plus two whole blocks' bf16 weights being gathered, the block the
    // backward computes with its bf16 gradient (that of the bf16 weights it read) and the block before it, whose
    // gradient is cast to fp32 (autocast's stored gradients) for its reduce-scatter: 2 x 2 + 2 + 4 bytes per unit
    // parameter.
    EXPECT_DOUBLE_EQ(z3.weights, whole.weights / n);
    const double unit = f.largest_unit_params;
    EXPECT_DOUBLE_EQ(z3.gathered, 2.0 * 2.0 * unit + 2.0 * unit + 4.0 * unit);
    EXPECT_DOUBLE_EQ(z3.layer_temporary, whole.layer_temporary + z3.gathered);
    // ZeRO-2 keeps autocast's fp32 weights: both blocks' gradients are fp32.
    EXPECT_DOUBLE_EQ(z2.gathered, 2.0 * 4.0 * unit);
    EXPECT_LT(z3.peak, z2.peak);
    EXPECT_LT(z2.peak, z1.peak);
    EXPECT_LT(z1.peak, z0.peak);
    // The activations of the micro-batches a pipeline stage holds at once.
    EXPECT_DOUBLE_EQ(shard_memory(whole, f, dp(8, 3), r, 4.0, none).activations, 4.0 * whole.activations);
}

TEST(DataParallel, AccumulationsFreshGradientIsTheUnshardedBlockUnderZero2And3) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    MemoryOptions o = testing::memory_options(Precision::bf16, "adamw");
    o.grad_accum = 4;
    MemoryUse whole = estimate_memory(f, o);
    // GPT-2's largest layer is the token embedding, 50257 x 768 parameters: its fresh fp32 gradient.
    ASSERT_DOUBLE_EQ(whole.accumulation_gradient, 50257.0 * 768.0 * 4.0);
    FrameworkReserve none;
    MemoryUse z1 = shard_memory(whole, f, dp(8, 1), r, 1.0, none);
    MemoryUse z3 = shard_memory(whole, f, dp(8, 3), r, 1.0, none);
    // ZeRO-1 keeps whole gradients: the fresh one is a tensor of its own.
    EXPECT_DOUBLE_EQ(z1.accumulation_gradient, whole.accumulation_gradient);
    EXPECT_DOUBLE_EQ(z1.layer_temporary, whole.layer_temporary + z1.communication_buffers);
    // ZeRO-3: the block the backward computes is the fresh gradient, already among the unsharded ones.
    EXPECT_DOUBLE_EQ(z3.accumulation_gradient, 0.0);
    EXPECT_DOUBLE_EQ(z3.layer_temporary, whole.layer_temporary - whole.accumulation_gradient + z3.gathered);
}

TEST(DataParallel, NcclBuffersPerProcessGroupOutsideTheAllocator) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    MemoryOptions o = testing::memory_options(Precision::bf16, "adamw");
    o.reserve = FrameworkReserve::pytorch_default();
    MemoryUse whole = estimate_memory(f, o);
    const double group = 16 * 2 * 4 * 1024.0 * 1024.0;  // 16 channels x 2 peers x NCCL_BUFFSIZE 4 MiB
    ParallelLayout l = dp(8, 3);
    MemoryUse one_group = shard_memory(whole, f, l, r, 1.0, o.reserve);
    EXPECT_DOUBLE_EQ(one_group.nccl_buffers, group);
    l.dp = 2, l.tp = 2, l.pp = 2;  // data-parallel, tensor-parallel and pipeline groups
    EXPECT_DOUBLE_EQ(shard_memory(whole, f, l, r, 1.0, o.reserve).nccl_buffers, 3 * group);
    // Beside the allocator: in the device's peak, not in the reserved one.
    EXPECT_DOUBLE_EQ(one_group.peak, one_group.peak_reserved + 400e6 + group);
}

TEST(DataParallel, ZeroShardsTheUpdateAndTheAccumulation) {
    ModelFeatures f = gpt2_features(Precision::bf16);
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    EXPECT_EQ(updated_params(f, dp(8, 0), r), f.params);
    EXPECT_EQ(updated_params(f, dp(8, 1), r), (f.params + 7) / 8);
    // DeepSpeed's BF16 optimizer updates its rank's partition of a bf16 model at ZeRO 0 too.
    PrecisionRecipe half = precision_recipe(Precision::bf16, MixedRecipe::half_model);
    EXPECT_EQ(updated_params(f, dp(8, 0), half, preset_for("deepspeed")), (f.params + 7) / 8);
    EXPECT_EQ(updated_params(f, dp(8, 0), r, preset_for("deepspeed")), f.params);  // autocast: fp32 weights
    EXPECT_EQ(updated_params(f, dp(8, 0), precision_recipe(Precision::fp16), preset_for("deepspeed")), f.params);
    EXPECT_EQ(accumulated_params(f, dp(8, 1)), f.params);
    EXPECT_EQ(accumulated_params(f, dp(8, 2)), (f.params + 7) / 8);
}

double expert_params(const ModelFeatures& f) {
    double n = 0;
    for (const auto& lf : f.layers)
        if (lf.layer.kind == "moe") n += double(lf.repeat) * double(lf.cost.params);
    return n;
}

TEST(DataParallel, ZeroShardsExpertStatesOnlyOverTheirReplicas) {
    // Megatron, Mixtral 8x7B on dp 8 with ep 8: each device holds one of each layer's 8 experts, and no other
    // device holds it (dp / ep = 1 replica), so ZeRO has nothing to shard it over. Per device:
    //   experts 32 layers x 3 x 4096 x 14336 = 5,637,144,576 parameters, AdamW's 8 B each: 45.1 GB, whole;
    //   the rest (attention, embeddings, router, norms: ~1.6 G) 8 B each over the 8 ranks: ~1.6 GB;
    // ~46.7 GB of optimizer states, not the 7.2 GB of sharding all 7.24 G parameters by 8.
    ParallelLayout l = dp(8, 1);
    l.ep = 8;
    ModelFeatures f = compute_features(shard_model(testing::zoo_model("mixtral-8x7b", 1, 128), l), Precision::bf16);
    const double experts = 32.0 * 3 * 4096 * 14336, dense = double(f.params) - experts;
    ASSERT_EQ(expert_params(f), experts + 32.0 * 4096 * 8);  // the MoE layers: the experts and the routers, dense
    PrecisionRecipe r = precision_recipe(Precision::bf16);
    MemoryUse whole = estimate_memory(f, testing::memory_options(Precision::bf16, "adamw"));
    ASSERT_NEAR(whole.optimizer_states, 8.0 * double(f.params), 1.0);
    FrameworkReserve none;
    for (int zero : {1, 2, 3}) {
        l.zero = zero;
        MemoryUse z = shard_memory(whole, f, l, r, 1.0, none);
        const double kept = experts + dense / 8;
        EXPECT_NEAR(z.optimizer_states, 8.0 * kept, 1e3) << zero;
        EXPECT_NEAR(z.optimizer_states / 1e9, 46.7, 0.2) << zero;
        if (zero >= 2) EXPECT_NEAR(z.gradients, whole.gradients * kept / double(f.params), 1e3) << zero;
        if (zero >= 3) EXPECT_NEAR(z.weights, whole.weights * kept / double(f.params), 1e3) << zero;
        EXPECT_NEAR(double(updated_params(f, l, r)), kept, 2.0) << zero;
    }
    EXPECT_NEAR(double(accumulated_params(f, l)), experts + dense / 8, 2.0);
    // With dp 16 and ep 8, each expert has two replicas: its states are halved.
    l = dp(16, 1);
    l.ep = 8;
    EXPECT_NEAR(shard_memory(whole, f, l, r, 1.0, none).optimizer_states, 8.0 * (experts / 2 + dense / 16), 1e3);
}

// Llama 4 Scout on dp 16 with ep 16: each device holds one of each layer's 16 routed experts (48 x 3 x 5120 x 8192
// = 6,039,797,760 parameters) and no other device holds it; the shared experts and routers, like the attention and
// embeddings, are on every device and ZeRO shards them over all 16: the other 11,133,096,960 parameters over 16.
TEST(DataParallel, SharedExpertsShardLikeDenseWeights) {
    ParallelLayout l = dp(16, 1);
    l.ep = 16, l.zero = 1;
    ModelFeatures f = compute_features(shard_model(testing::zoo_model("llama4-scout", 1, 128), l), Precision::bf16);
    const double routed = 48.0 * 3 * 5120 * 8192, rest = 107769861120.0 - 16 * routed;
    ASSERT_EQ(double(f.params), routed + rest);
    EXPECT_NEAR(double(updated_params(f, l, precision_recipe(Precision::bf16))), routed + rest / 16, 2.0);
}

}  // namespace
}  // namespace prenet
