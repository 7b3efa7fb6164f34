// run/framework.hpp: each preset's fields, the rules that read them, and one effect of each on a parallel step.
#include "run/framework.hpp"

#include <gtest/gtest.h>

#include "parallel-fixture.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

using Fixture = testing::ParallelFixture;

TEST(Framework, GenericIsTheStepModelsFormerConstants) {
    FrameworkPreset g = preset_for("generic");
    EXPECT_EQ(g.name, "generic");
    EXPECT_EQ(g.selective, CheckpointKind::attention_core);
    EXPECT_EQ(g.tensor_overlap, TensorOverlap::none);
    EXPECT_EQ(g.overlap_from_zero, 0);
    EXPECT_EQ(g.bucket_bytes, 25.0 * 1024 * 1024);  // PyTorch DDP's bucket_cap_mb
    EXPECT_EQ(g.bucket_params, 0.0);
    EXPECT_TRUE(g.reshard_after_forward);
    EXPECT_EQ(g.prefetch_blocks, 1.0);
    EXPECT_EQ(g.prefetch_params, 0.0);
    EXPECT_EQ(framework_names().front(), "generic");
}

TEST(Framework, TpCommOverlapIsEveryGemmOnlyWithSequenceParallelism) {
    const FrameworkPreset megatron = preset_for("megatron"), generic = preset_for("generic");
    EXPECT_EQ(tensor_overlap(megatron, true, true), TensorOverlap::all_gemms);
    EXPECT_EQ(tensor_overlap(generic, true, true), TensorOverlap::all_gemms);
    // Without sequence parallelism there are no all-gathers and reduce-scatters to pipeline: the preset's own.
    EXPECT_EQ(tensor_overlap(megatron, true, false), TensorOverlap::weight_gradients);
    EXPECT_EQ(tensor_overlap(generic, true, false), TensorOverlap::none);
    EXPECT_EQ(tensor_overlap(megatron, false, true), TensorOverlap::weight_gradients);
    EXPECT_EQ(tensor_overlap(preset_for("xla"), false, false), TensorOverlap::all_gemms);
}

TEST(Framework, EachPresetSetsItsFrameworksDefaults) {
    FrameworkPreset m = preset_for("megatron");
    EXPECT_EQ(m.selective, CheckpointKind::attention_core);
    EXPECT_EQ(m.tensor_overlap, TensorOverlap::weight_gradients);
    EXPECT_EQ(m.overlap_from_zero, 0);
    EXPECT_EQ(m.bucket_params, 40e6);
    EXPECT_EQ(m.bucket_params_per_rank, 1e6);
    FrameworkPreset f = preset_for("fsdp");
    EXPECT_EQ(f.selective, CheckpointKind::op_level);
    EXPECT_EQ(f.tensor_overlap, TensorOverlap::none);
    EXPECT_TRUE(f.reshard_after_forward);
    EXPECT_EQ(f.prefetch_blocks, 1.0);
    FrameworkPreset d = preset_for("deepspeed");
    EXPECT_EQ(d.selective, CheckpointKind::full);
    EXPECT_EQ(d.overlap_from_zero, 3);
    EXPECT_EQ(d.bucket_params, 5e8);
    EXPECT_EQ(d.prefetch_params, 5e7);
    FrameworkPreset x = preset_for("xla");
    EXPECT_EQ(x.selective, CheckpointKind::op_level);
    EXPECT_EQ(x.tensor_overlap, TensorOverlap::all_gemms);
    EXPECT_TRUE(x.fuses_elementwise);
    EXPECT_FALSE(d.fuses_elementwise || m.fuses_elementwise || f.fuses_elementwise);
    EXPECT_EQ(testing::error_field([] { preset_for("jax"); }), "framework");
    // A graph compiler's mode: generic's collectives and recomputation, its element-wise chains fused.
    FrameworkPreset g = preset_for("graph");
    EXPECT_TRUE(g.fuses_elementwise);
    EXPECT_EQ(g.selective, FrameworkPreset{}.selective);
    EXPECT_EQ(g.tensor_overlap, TensorOverlap::none);
    EXPECT_EQ(g.overlap_from_zero, 0);
}

TEST(Framework, EachAcceleratorKindHasItsUsualFramework) {
    EXPECT_EQ(usual_framework("tpu"), "xla");
    EXPECT_EQ(usual_framework("hpu"), "graph");
    EXPECT_EQ(usual_framework("neuron"), "graph");
    EXPECT_EQ(usual_framework("gpu"), "generic");
    EXPECT_EQ(usual_framework("something else"), "generic");
    for (const auto& h : hardware_catalogue()) EXPECT_NO_THROW(preset_for(usual_framework(h.kind))) << h.id;
}

TEST(Framework, TheLastBucketIsTheLargerOfItsBytesAndItsParameters) {
    // 1e9 parameters with 2-byte gradients: DDP's 25 MiB bucket is 26,214,400 / 2e9 of them.
    EXPECT_DOUBLE_EQ(last_bucket_fraction(FrameworkPreset{}, 1e9, 2.0, 8), 26214400.0 / 2e9);
    // Megatron: max(40M, 1M x ranks) parameters: 40M of 1e9 on 8 ranks, 64M on 64.
    FrameworkPreset m = preset_for("megatron");
    EXPECT_DOUBLE_EQ(last_bucket_fraction(m, 1e9, 2.0, 8), 0.04);
    EXPECT_DOUBLE_EQ(last_bucket_fraction(m, 1e9, 2.0, 64), 0.064);
    EXPECT_EQ(last_bucket_fraction(m, 1e6, 2.0, 8), 1.0);  // one bucket holds everything
}

TEST(Framework, GatheredWeightsAreTheBlockAndItsPrefetch) {
    EXPECT_EQ(gathered_params(FrameworkPreset{}, 100, 1000), 200.0);
    FrameworkPreset d = preset_for("deepspeed");
    EXPECT_EQ(gathered_params(d, 1e8, 1e9), 1.5e8);   // the block and 5e7 parameters ahead
    EXPECT_EQ(gathered_params(d, 1e8, 1.2e8), 1.2e8);  // no more than the stage holds
    FrameworkPreset keep = preset_for("fsdp");
    keep.reshard_after_forward = false;
    EXPECT_EQ(gathered_params(keep, 100, 1000), 1000.0);
}

ParallelStep step_with(Fixture& f, const ParallelLayout& l, const FrameworkPreset& preset) {
    f.context.step.framework = preset;
    return predict_parallel_step(l, f.models, f.context);
}

TEST(Framework, ReshardingAfterTheForwardGathersTheWeightsAgainInTheBackward) {
    Fixture f(8);
    ParallelLayout l;
    l.dp = 8, l.zero = 3;
    FrameworkPreset keep = preset_for("fsdp");
    keep.reshard_after_forward = false;
    double resharded = step_with(f, l, preset_for("fsdp")).total_by_kind_ms.at("data parallel");
    double kept = step_with(f, l, keep).total_by_kind_ms.at("data parallel");
    EXPECT_GT(resharded, kept);
    EXPECT_GT(step_with(f, l, keep).memory.peak, step_with(f, l, preset_for("fsdp")).memory.peak);
}

TEST(Framework, MegatronHidesTheBackwardsTensorParallelCollectives) {
    Fixture f(2);
    ParallelLayout l;
    l.tp = 2;
    ParallelStep generic = step_with(f, l, FrameworkPreset{});
    ParallelStep megatron = step_with(f, l, preset_for("megatron"));
    EXPECT_DOUBLE_EQ(megatron.total_by_kind_ms.at("tensor parallel"), generic.total_by_kind_ms.at("tensor parallel"));
    EXPECT_EQ(generic.exposed_by_kind_ms.at("tensor parallel"), generic.total_by_kind_ms.at("tensor parallel"));
    EXPECT_LT(megatron.exposed_by_kind_ms.at("tensor parallel"), generic.exposed_by_kind_ms.at("tensor parallel"));
}

TEST(Framework, DeepSpeedBelowZeroThreeOverlapsNoDataParallelCollective) {
    Fixture f(8);
    ParallelLayout l;
    l.dp = 8, l.zero = 1;
    ParallelStep generic = step_with(f, l, FrameworkPreset{});
    ParallelStep deepspeed = step_with(f, l, preset_for("deepspeed"));
    EXPECT_LT(generic.exposed_by_kind_ms.at("data parallel"), generic.total_by_kind_ms.at("data parallel"));
    EXPECT_DOUBLE_EQ(deepspeed.exposed_by_kind_ms.at("data parallel"), deepspeed.total_by_kind_ms.at("data parallel"));
}

TEST(Framework, MegatronsLargerBucketsLeaveMoreOfTheReductionExposed) {
    // GPT-2 small's 124M fp32 gradients: DDP's last 25 MiB bucket is 5% of them, Megatron's 40M parameters 32%.
    Fixture f(8);
    ParallelLayout l;
    l.dp = 8;
    EXPECT_GT(step_with(f, l, preset_for("megatron")).exposed_by_kind_ms.at("data parallel"),
              step_with(f, l, FrameworkPreset{}).exposed_by_kind_ms.at("data parallel"));
}

TEST(Framework, SelectiveRecomputationIsPerOpUnderFsdpAndWholeBlocksUnderDeepSpeed) {
    // FSDP (torchtitan's op-level selective) recomputes every block's element-wise work but not its matmuls:
    // more than the attention core alone, less than whole blocks; DeepSpeed's checkpointing wraps whole layers.
    Fixture f(1);
    ParallelLayout selective, full;
    selective.recompute = Recompute::selective;
    full.recompute = Recompute::full;
    double fsdp_selective = step_with(f, selective, preset_for("fsdp")).time.recompute_ms;
    double deepspeed_selective = step_with(f, selective, preset_for("deepspeed")).time.recompute_ms;
    double generic_full = step_with(f, full, FrameworkPreset{}).time.recompute_ms;
    double generic_selective = step_with(f, selective, FrameworkPreset{}).time.recompute_ms;
    EXPECT_DOUBLE_EQ(deepspeed_selective, generic_full);
    EXPECT_LT(fsdp_selective, generic_full);
    EXPECT_GT(fsdp_selective, 0.0);
    EXPECT_LT(generic_selective, generic_full);
}

}  // namespace
}  // namespace prenet
