// parallel/parallel_step.hpp: one layout's step on a cluster: one device is the single-device step, a pipeline
// adds its bubble and its transfers, each kind of parallelism accounts its collectives, and memory is the same
// with or without timing.
#include "parallel/parallel_step.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "parallel-fixture.hpp"
#include "ops/attention.hpp"
#include "parallel/pipeline.hpp"
#include "parallel/plan_search.hpp"
#include "run/memory_timeline.hpp"

#include <tuple>

namespace prenet {
namespace {

using Fixture = testing::ParallelFixture;

// GPT-2 at 128 tokens as a half-precision bf16 model (bf16 weights and gradients, fp32 master weights): what
// DeepSpeed's BF16 optimizer trains.
void use_half_bf16_gpt2(Fixture& f) {
    f.models = StageModels(
        [](std::int64_t batch, std::int64_t seq) {
            ModelInputs in;
            in.batch = batch;
            in.seq = seq;
            return resolve_model("gpt2", in);
        },
        128, Precision::bf16, MixedRecipe::half_model);
    f.context.step.mixed = MixedRecipe::half_model;
}

TEST(ParallelStep, OneDeviceIsTheSingleDeviceStep) {
    Fixture f(1);
    ParallelLayout l;
    l.grad_accum = 4;
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    StepOptions o = f.context.step;
    o.grad_accum = 4;
    ModelFeatures features = compute_features(f.models.whole(1), Precision::bf16);
    StepTime alone = predict_step(features, f.hw, f.roofline, o);
    EXPECT_NEAR(s.total_ms(), alone.total_ms(), 1e-9 * alone.total_ms());
    EXPECT_EQ(s.time.communication_ms, 0.0);
    EXPECT_EQ(s.time.bubble_ms, 0.0);
}

TEST(ParallelStep, APipelineAddsItsBubbleAndItsTransfers) {
    Fixture f(2);
    ParallelLayout l;
    l.pp = 2, l.grad_accum = 4;
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    ASSERT_EQ(s.stage_ms.size(), 2u);
    // Nothing else is split, so the bubble is the other stage's compute plus the activations' transfers.
    std::vector<StagePass> compute;
    for (double ms : s.stage_ms) compute.push_back({ms, 0.0, 0.0});
    EXPECT_GT(s.time.bubble_ms, pipeline_bubble_ms(compute, l, 0.0));
    EXPECT_GT(pipeline_bubble_ms(compute, l, 0.0), 0.0);
    EXPECT_GT(s.total_by_kind_ms.at("pipeline parallel"), 0.0);
    EXPECT_EQ(s.total_by_kind_ms.at("tensor parallel"), 0.0);
}

TEST(ParallelStep, PipelineTrafficIsEverySendOfEveryMicroBatch) {
    // GPT-2 (hidden 768) at 128 tokens, micro-batch 1, bf16: a send is 1 x 128 x 768 x 2 = 196,608 B. On the
    // fixture's 300 GB/s link (efficiency 1, 1 us a step, no base or pipelining term) one send takes
    // 1 us + 196,608 B / 300 GB/s = 1.65536 us.
    const double send_ms = 1e-3 + 196608.0 / 300e9 * 1e3;
    // GPT-2's head is tied to its token embedding: the last stage's copy (50257 x 768) and the first stage's table
    // sum their fp32 gradients once a step, a 2-rank ring all-reduce: 2 steps of 1 us and 2 x 1/2 of the bytes.
    const double tied_ms = 2e-3 + 50257.0 * 768 * 4 / 300e9 * 1e3;
    Fixture f(2);
    ParallelLayout l;
    l.pp = 2, l.grad_accum = 4;
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    // 1F1B: 4 micro-batches on and back (8 sends, exposed), and the fill and drain's 2 x (2 - 1) = 2.
    EXPECT_NEAR(s.exposed_by_kind_ms.at("pipeline parallel"), 8 * send_ms + tied_ms, 1e-12);
    EXPECT_NEAR(s.total_by_kind_ms.at("pipeline parallel"), 10 * send_ms + tied_ms, 1e-12);
    // Interleaved, vp 2: each stage's two chunks send every micro-batch: 2 x 2 x 4 = 16 sends, + 2.
    l.schedule = PipelineSchedule::interleaved, l.vp = 2;
    ParallelStep v = predict_parallel_step(l, f.models, f.context);
    EXPECT_NEAR(v.exposed_by_kind_ms.at("pipeline parallel"), 16 * send_ms + tied_ms, 1e-12);
    EXPECT_NEAR(v.total_by_kind_ms.at("pipeline parallel"), 18 * send_ms + tied_ms, 1e-12);
    // Without a pipeline nothing is tied across stages.
    ParallelLayout dp;
    dp.dp = 2, dp.grad_accum = 4;
    EXPECT_EQ(predict_parallel_step(dp, f.models, f.context).exposed_by_kind_ms.count("pipeline parallel"), 0u);
}

TEST(ParallelStep, ZeroBubbleAndDualPipeShrinkTheBubbleDualPipeDoublesTheWeights) {
    Fixture f(4);
    ParallelLayout l;
    l.pp = 4, l.grad_accum = 8;
    ParallelStep one = predict_parallel_step(l, f.models, f.context);
    l.schedule = PipelineSchedule::zb_h1;
    ParallelStep zb = predict_parallel_step(l, f.models, f.context);
    l.schedule = PipelineSchedule::dualpipe;
    ParallelStep dual = predict_parallel_step(l, f.models, f.context);
    EXPECT_LT(zb.time.bubble_ms, one.time.bubble_ms);
    EXPECT_LT(dual.time.bubble_ms, zb.time.bubble_ms);
    EXPECT_EQ(zb.memory.weights, one.memory.weights);
    // Each DualPipe rank holds its own stage and its mirror's (the fullest 1F1B stage is one of them).
    EXPECT_GT(dual.memory.weights, one.memory.weights);
}

TEST(ParallelStep, EachScheduleHoldsItsMicroBatchesOnItsFullestStage) {
    // GPT-2 (12 layers) on pp 4, 8 micro-batches, full checkpointing: each stage's activations are its
    // micro-batches in flight times what one keeps, plus one recomputed layer; the fullest stage is the peak.
    Fixture f(4);
    ParallelLayout l;
    l.pp = 4, l.grad_accum = 8, l.recompute = Recompute::full;
    const auto& stages = f.models.stages(l);
    auto stage_bytes = [&](std::int64_t s, const ParallelLayout& layout) {
        TrainingSetup setup;  // the fixture's: bf16 under autocast, AdamW, full checkpointing
        setup.precision = Precision::bf16, setup.optimizer = &find_optimizer("adamw"), setup.checkpointing = true;
        ActivationMemory one = training_activations(*stages[size_t(s)], setup);  // the last stage's logits too
        EXPECT_EQ(one.checkpointed_blocks, 3);  // each stage's 3 layers checkpointed one by one
        return micro_batches_in_flight(s, layout) * one.per_micro_batch() + one.recompute_block;
    };
    ParallelMemory one_f_one_b = parallel_memory(l, f.models, f.context);
    // GPT-2's head is tied to its token embedding: the last stage keeps a copy of the table (with its gradient and
    // optimizer state) beside the logits, so it is the fullest although 1F1B's first stage holds pp = 4 micro-batches.
    EXPECT_EQ(one_f_one_b.fullest_stage, 3);
    EXPECT_DOUBLE_EQ(one_f_one_b.memory.activations, stage_bytes(3, l));
    ASSERT_EQ(one_f_one_b.stage_peaks.size(), 4u);
    for (const StagePeak& p : one_f_one_b.stage_peaks) EXPECT_LE(p.allocated, one_f_one_b.memory.peak_allocated);
    EXPECT_DOUBLE_EQ(one_f_one_b.stage_peaks[3].allocated, one_f_one_b.memory.peak_allocated);
    EXPECT_EQ(micro_batches_in_flight(0, l), 4);
    EXPECT_EQ(micro_batches_in_flight(3, l), 1);
    l.schedule = PipelineSchedule::zb_h1;  // ZB-H1: 1F1B's memory
    EXPECT_DOUBLE_EQ(parallel_memory(l, f.models, f.context).memory.activations, stage_bytes(3, l));
    // GPipe: all 8 on every stage, and the last (the logits' stage) holds the most activations.
    l.schedule = PipelineSchedule::gpipe;
    ParallelMemory gpipe = parallel_memory(l, f.models, f.context);
    EXPECT_EQ(gpipe.fullest_stage, 3);
    EXPECT_DOUBLE_EQ(gpipe.memory.activations, stage_bytes(3, l));
    EXPECT_GT(stage_bytes(3, l), stage_bytes(0, l));
    EXPECT_GT(gpipe.memory.activations, one_f_one_b.memory.activations);
}

TEST(ParallelStep, TheMemoryTimelinesLargestPointIsTheFullestStagesPeak) {
    // GPT-2 on 4 devices: a 1F1B pipeline (its fullest stage, the last, holds 1 micro-batch: no warm-up; the
    // first would hold 4, 3 of them arriving in it),
    // DualPipe (the mirror stage's parameters too), and FSDP (ZeRO-3's gathered units among the buffers).
    Fixture f(4);
    ParallelLayout pipeline, dualpipe, fsdp;
    pipeline.pp = 4, pipeline.grad_accum = 8, pipeline.recompute = Recompute::full;
    dualpipe = pipeline;
    dualpipe.schedule = PipelineSchedule::dualpipe;
    fsdp.dp = 4, fsdp.zero = 3;
    for (const ParallelLayout& l : {pipeline, dualpipe, fsdp}) {
        SCOPED_TRACE(to_string(l.schedule) + std::string(" zero ") + std::to_string(l.zero));
        ParallelMemory m = parallel_memory(l, f.models, f.context);
        MemoryTimeline t = parallel_memory_timeline(l, f.models, f.context, m.memory, m.fullest_stage);
        double allocated = 0, reserved = 0, device = 0;
        std::size_t warmup = 0;
        for (const auto& p : t.points) {
            allocated = std::max(allocated, p.allocated), reserved = std::max(reserved, p.reserved);
            device = std::max(device, p.device);
            warmup += p.phase == "warmup";
        }
        EXPECT_EQ(allocated, m.memory.peak_allocated);
        EXPECT_EQ(reserved, m.memory.peak_reserved);
        EXPECT_EQ(device, m.memory.peak);
        // The micro-batches held before the current one arrive in the warm-up, in at most kTimelinePipelinePoints.
        std::size_t earlier = std::size_t(micro_batches_in_flight(m.fullest_stage, l) - 1);
        EXPECT_EQ(warmup, l.pp > 1 ? std::min(kTimelinePipelinePoints, earlier) : 0u);
        if (l.zero == 3) EXPECT_GE(t.points[1].parts.buffers, m.memory.gathered);  // the units, from the first forward point
    }
}

TEST(ParallelStep, EachKindAccountsItsCollectivesAndTheTotalIsTheirSum) {
    Fixture f(4);
    ParallelLayout l;
    l.dp = 2, l.tp = 2;
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    EXPECT_GT(s.total_by_kind_ms.at("tensor parallel"), 0.0);
    EXPECT_GT(s.total_by_kind_ms.at("data parallel"), 0.0);
    double sum = 0;
    for (const auto& [kind, ms] : s.total_by_kind_ms) {
        EXPECT_LE(s.exposed_by_kind_ms.at(kind), ms + 1e-12) << kind;  // overlap only hides time
        sum += ms;
    }
    EXPECT_DOUBLE_EQ(s.communication_total_ms, sum);
}

// The overlapped communication's loss (run/overhead.hpp): the step grows by overlap_loss x what overlap hid, on
// top of the slowest stage's launch gaps and fixed cost; the parts still sum to the total.
TEST(ParallelStep, OverheadLosesAShareOfTheHiddenCommunication) {
    Fixture f(4);
    ParallelLayout l;
    l.dp = 4, l.grad_accum = 2;
    ParallelStep plain = predict_parallel_step(l, f.models, f.context);
    EXPECT_EQ(plain.time.overhead_ms, 0.0);
    double hidden = 0;
    for (const auto& [kind, ms] : plain.total_by_kind_ms) hidden += ms - plain.exposed_by_kind_ms.at(kind);
    ASSERT_GT(hidden, 0.0);  // data parallelism's reduction overlaps the backward
    f.context.step.overhead.launch_gap_ms = 0.002;
    f.context.step.overhead.step_fixed_ms = 3;
    f.context.step.overhead.overlap_loss = 0.4;
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    EXPECT_NEAR(s.time.overhead_ms, 0.002 * plain.time.kernels + 3 + 0.4 * hidden, 1e-9);
    EXPECT_NEAR(s.total_ms() - plain.total_ms(), s.time.overhead_ms, 1e-9);
    EXPECT_EQ(s.time.communication_ms, plain.time.communication_ms);
    const StepTime& t = s.time;
    EXPECT_NEAR(t.total_ms(), t.forward_ms + t.backward_ms + t.optimizer_ms + t.communication_ms + t.bubble_ms +
                                  t.overhead_ms + t.input_stall_ms, 1e-9);
}

TEST(ParallelStep, ExpertOverlapHidesOnlyTheExpertAllToAlls) {
    // Mixtral on 8 devices, ep 8: --ep-overlap full leaves the same all-to-alls, exposes less of them, and the step
    // is shorter by exactly what it hides; nothing else moves.
    Fixture f(8, 300, "mixtral-8x7b", 512);
    ParallelLayout l;
    l.dp = 8, l.ep = 8;
    ParallelStep none = predict_parallel_step(l, f.models, f.context);
    f.context.ep_overlap = ExpertOverlap::full;
    ParallelStep full = predict_parallel_step(l, f.models, f.context);
    const double total = none.total_by_kind_ms.at("expert parallel");
    ASSERT_GT(total, 0.0);
    EXPECT_DOUBLE_EQ(none.exposed_by_kind_ms.at("expert parallel"), total);
    EXPECT_DOUBLE_EQ(full.total_by_kind_ms.at("expert parallel"), total);
    const double hidden = total - full.exposed_by_kind_ms.at("expert parallel");
    EXPECT_GT(hidden, 0.0);
    EXPECT_NEAR(none.total_ms() - full.total_ms(), hidden, 1e-9 * none.total_ms());
    EXPECT_DOUBLE_EQ(full.exposed_by_kind_ms.at("data parallel"), none.exposed_by_kind_ms.at("data parallel"));
}

TEST(ParallelStep, TpCommOverlapHidesEveryTensorCollectiveBehindTheMatrixWorkWithSequenceParallelism) {
    // GPT-2 on 4 devices at tp 4 with sequence parallelism: --tp-comm-overlap leaves the same collectives and
    // exposes what exceeds the micro-batches' matrix work; without sequence parallelism it changes nothing.
    Fixture f(4);
    ParallelLayout l;
    l.tp = 4, l.sequence_parallel = true, l.grad_accum = 2;
    ParallelStep own = predict_parallel_step(l, f.models, f.context);
    f.context.tp_comm_overlap = true;
    ParallelStep all = predict_parallel_step(l, f.models, f.context);
    const double total = own.total_by_kind_ms.at("tensor parallel");
    ASSERT_GT(total, 0.0);
    EXPECT_DOUBLE_EQ(own.exposed_by_kind_ms.at("tensor parallel"), total);  // the generic preset overlaps none
    EXPECT_DOUBLE_EQ(all.total_by_kind_ms.at("tensor parallel"), total);
    EXPECT_NEAR(all.exposed_by_kind_ms.at("tensor parallel"), std::max(0.0, total - all.time.matmul_ms), 1e-9 * total);
    EXPECT_NEAR(own.total_ms() - all.total_ms(), total - all.exposed_by_kind_ms.at("tensor parallel"), 1e-9 * own.total_ms());
    l.sequence_parallel = false;
    f.context.tp_comm_overlap = false;
    ParallelStep plain = predict_parallel_step(l, f.models, f.context);
    f.context.tp_comm_overlap = true;
    EXPECT_EQ(predict_parallel_step(l, f.models, f.context).total_ms(), plain.total_ms());
}

TEST(ParallelStep, MemoryIsTheSameWithOrWithoutTiming) {
    Fixture f(4);
    ParallelLayout l;
    l.dp = 2, l.pp = 2, l.zero = 1;
    ParallelMemory alone = parallel_memory(l, f.models, f.context);
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    EXPECT_EQ(s.memory.peak, alone.memory.peak);
    EXPECT_EQ(s.fullest_stage, alone.fullest_stage);
}

TEST(StageModels, StagesHoldingTheSameBlocksShareTheirFeatures) {
    Fixture f(4);  // GPT-2: 12 block copies
    ParallelLayout l;
    l.pp = 4;  // 3 copies a stage; the embeddings with the first, the head and loss with the last
    const auto& stages = f.models.stages(l);
    ASSERT_EQ(stages.size(), 4u);
    EXPECT_EQ(stages[1], stages[2]);  // the middle stages: one object
    EXPECT_NE(stages[0], stages[1]);
    EXPECT_NE(stages[3], stages[1]);
    EXPECT_GT(stages[0]->params, stages[1]->params);
    // pp 2 of the same shards: the halves hold 6 copies, not 3: other features.
    l.pp = 2;
    const auto& halves = f.models.stages(l);
    ASSERT_EQ(halves.size(), 2u);
    EXPECT_NE(halves[0], stages[0]);
    EXPECT_GT(halves[0]->params, stages[0]->params);
}

// MFU's numerator leaves FlashAttention's recomputed scores out. GPT-2 small with flash at 128 tokens, micro-batch
// 1, attention counted unmasked: per layer 12 heads x 128 x 128 = 196,608 scores, a recomputed q k^T of
// 2 x 196,608 x 64 = 25,165,824 FLOPs, 301,989,888 over the 12 layers.
TEST(StageModels, FlopsLeaveFlashAttentionsRecomputeOut) {
    StageModels flash([](std::int64_t batch, std::int64_t seq) {
                          ModelInputs in;
                          in.batch = batch, in.seq = seq, in.flash_attention = true, in.attention_given = true;
                          return resolve_model("gpt2", in);
                      },
                      128, Precision::bf16, MixedRecipe::autocast);
    Model unmasked = flash.whole(1);
    for (auto& block : unmasked.blocks)
        for (auto& layer : block.layers)
            if (layer.attrs.contains("causal")) layer.attrs["causal"] = false;
    ModelFeatures f = compute_features(unmasked, Precision::bf16);
    EXPECT_NEAR(flash.flops(1), f.forward_flops + f.backward_flops() - 301989888.0, 1e-6 * flash.flops(1));
}

TEST(StageModels, ExpertsShardedOverTheTensorRanksAreOtherFeatures) {
    // Mixtral's experts, tp 2 and ep 2: carved from dp 2 (expert tp 2) or from the tp ranks of dp 1 (expert tp
    // 1, each rank a whole expert on half the tokens): the same micro-batch, tp and ep, other shards.
    Fixture f(4, 300, "mixtral-8x7b");
    ParallelLayout carved;
    carved.dp = 2, carved.tp = 2, carved.ep = 2;
    ParallelLayout across = carved;
    across.dp = 1;
    ASSERT_EQ(carved.expert_tp(), 2);
    ASSERT_EQ(across.expert_tp(), 1);
    const ModelFeatures* a = f.models.stages(carved).front();
    const ModelFeatures* b = f.models.stages(across).front();
    EXPECT_NE(a, b);
    EXPECT_NE(a->forward_flops, b->forward_flops);
}

TEST(ParallelStep, TheStageCacheChangesNoAnswer) {
    Fixture f(8);
    StageCache cache;
    ParallelContext cached = f.context;
    cached.cache = &cache;
    for (auto [dp, pp, zero, accum, recompute] :
         {std::tuple{8, 1, 0, 1, Recompute::none}, {2, 4, 1, 8, Recompute::full}, {4, 2, 3, 3, Recompute::selective},
          {2, 4, 2, 8, Recompute::none}}) {
        ParallelLayout l;
        l.dp = dp, l.pp = pp, l.zero = zero, l.grad_accum = accum, l.recompute = recompute;
        for (int twice = 0; twice < 2; ++twice) {  // the second time from the cache
            ParallelStep plain = predict_parallel_step(l, f.models, f.context);
            ParallelStep from_cache = predict_parallel_step(l, f.models, cached);
            EXPECT_EQ(from_cache.total_ms(), plain.total_ms()) << dp << " " << pp;
            EXPECT_EQ(from_cache.time.by_family_ms, plain.time.by_family_ms);
            EXPECT_EQ(from_cache.memory.peak, plain.memory.peak);
            EXPECT_EQ(from_cache.exposed_by_kind_ms, plain.exposed_by_kind_ms);
        }
    }
}

// The cache keys a stage's memory by whether its ZeRO stage runs the framework's BF16 optimizer: under DeepSpeed
// a bf16 model keeps 6 bytes of gradients a parameter at ZeRO 1 and 2 (sharded) at ZeRO 2, whichever is asked first.
TEST(ParallelStep, TheStageCacheKeepsTheBf16OptimizersMemoryApart) {
    Fixture f(8);
    use_half_bf16_gpt2(f);
    f.context.step.framework = preset_for("deepspeed");
    StageCache cache;
    ParallelContext cached = f.context;
    cached.cache = &cache;
    for (int zero : {1, 2, 1}) {
        ParallelLayout l;
        l.dp = 8, l.zero = zero;
        ParallelStep plain = predict_parallel_step(l, f.models, f.context);
        ParallelStep from_cache = predict_parallel_step(l, f.models, cached);
        EXPECT_EQ(from_cache.memory.gradients, plain.memory.gradients) << zero;
        EXPECT_EQ(from_cache.memory.peak, plain.memory.peak) << zero;
        EXPECT_EQ(from_cache.total_ms(), plain.total_ms()) << zero;
    }
    ParallelLayout z1, z2;
    z1.dp = z2.dp = 8, z1.zero = 1, z2.zero = 2;
    double params = double(compute_features(f.models.whole(1), Precision::bf16).params);
    EXPECT_DOUBLE_EQ(predict_parallel_step(z1, f.models, cached).memory.gradients, 6.0 * params);
    EXPECT_DOUBLE_EQ(predict_parallel_step(z2, f.models, cached).memory.gradients, 2.0 * params / 8);
}

// DeepSpeed's BF16 optimizer partitions a bf16 model's fp32 master weights and optimizer states over the
// data-parallel ranks and gathers the updated weights at ZeRO 0 as at ZeRO 1 (run/framework.hpp's
// partitioning_zero): the two stages are one step, in time and memory. Under the generic preset ZeRO 0 keeps them
// whole: 7/8 of the master weights' 4 B and AdamW's 8 B a parameter more than ZeRO 1 keeps on 8 ranks.
TEST(ParallelStep, DeepSpeedsBf16OptimizerRunsZeroZeroAsZeroOne) {
    Fixture f(8);
    use_half_bf16_gpt2(f);
    ParallelLayout z0, z1;
    z0.dp = z1.dp = 8, z0.zero = 0, z1.zero = 1;
    f.context.step.framework = preset_for("deepspeed");
    ParallelStep ds0 = predict_parallel_step(z0, f.models, f.context), ds1 = predict_parallel_step(z1, f.models, f.context);
    EXPECT_DOUBLE_EQ(ds0.memory.peak, ds1.memory.peak);
    EXPECT_DOUBLE_EQ(ds0.memory.optimizer_states, ds1.memory.optimizer_states);
    EXPECT_DOUBLE_EQ(ds0.total_ms(), ds1.total_ms());
    EXPECT_EQ(ds0.layout.zero, 0);  // the layout as asked
    f.context.step.framework = FrameworkPreset{};
    ParallelStep g0 = predict_parallel_step(z0, f.models, f.context), g1 = predict_parallel_step(z1, f.models, f.context);
    double params = double(compute_features(f.models.whole(1), Precision::bf16).params);
    EXPECT_NEAR(g0.memory.weights + g0.memory.optimizer_states - g1.memory.weights - g1.memory.optimizer_states,
                params * (4.0 + 8.0) * 7.0 / 8.0, params * 1e-9);
}

// The plan search prunes by step_lower_bound_ms: no layout, of any schedule, parallelism or checkpointing, may
// take less. Every candidate of a dense model (pipelines even and uneven, interleaved, zero-bubble, DualPipe,
// context parallel) and a MoE (expert parallel) on a slow and a fast link.
TEST(ParallelStep, NoLayoutIsFasterThanItsLowerBound) {
    struct Case {
        const char* model;
        std::int64_t gpus, tokens;
        std::optional<PipelineSchedule> schedule;
    };
    for (const Case& c : {Case{"gpt2", 8, 128, std::nullopt}, Case{"gpt2", 8, 128, PipelineSchedule::zb_h1},
                          Case{"gpt2", 8, 128, PipelineSchedule::dualpipe}, Case{"gpt2", 8, 128, PipelineSchedule::gpipe},
                          Case{"qwen3-0.6b", 4, 16384, std::nullopt}, Case{"mixtral-8x7b", 16, 64, std::nullopt}})
        for (double gbps : {1.0, 300.0}) {
            Fixture f(c.gpus, gbps, c.model, c.tokens);
            StageCache cache;
            f.context.cache = &cache;
            f.context.step.overhead = {0.004, 0.5, 0.15};  // launch gaps, a fixed cost, overlap loss: all in the step
            LayoutRequest r = f.request();
            r.global_batch = 2 * c.gpus;
            r.schedule = c.schedule;
            std::vector<ParallelLayout> layouts = candidate_layouts(r, f.models.shape(), f.cluster);
            ASSERT_GT(layouts.size(), 10u) << c.model;
            for (const auto& l : layouts) {
                double bound = step_lower_bound_ms(l, f.models, f.context);
                ParallelStep s = predict_parallel_step(l, f.models, f.context);
                EXPECT_GT(bound, 0);
                EXPECT_LE(step_lower_bound_ms(l, f.models, f.context, true), bound);
                EXPECT_LE(bound, s.total_ms() * (1 + 1e-12))
                    << c.model << " dp " << l.dp << " tp " << l.tp << " pp " << l.pp << " vp " << l.vp << " cp " << l.cp
                    << " ep " << l.ep << " " << to_string(l.schedule);
            }
        }
}

// Without a pipeline, the bound holds the step's exposed communication whole (what prunes the layouts that a slow
// network, not their kernels, puts out of the running).
TEST(ParallelStep, TheLowerBoundCountsTheExposedCommunication) {
    Fixture f(8, 1.0);
    LayoutRequest r = f.request();
    r.global_batch = 16;
    r.pp = 1;
    int communication_bound = 0;
    for (const auto& l : candidate_layouts(r, f.models.shape(), f.cluster)) {
        ParallelStep s = predict_parallel_step(l, f.models, f.context);
        double kernels = step_lower_bound_ms(l, f.models, f.context, true);
        if (l.recompute != Recompute::none) continue;  // the looser bound leaves the recompute out
        EXPECT_GE(step_lower_bound_ms(l, f.models, f.context), (kernels + s.time.communication_ms) * (1 - 1e-12))
            << "dp " << l.dp << " tp " << l.tp << " zero " << l.zero;
        if (s.time.communication_ms > 0.1 * s.total_ms()) ++communication_bound;
    }
    EXPECT_GT(communication_bound, 0);
}

// The search's cache (one micro-batch per stage and checkpointing kind, one set of collectives per stage for every
// checkpointing kind and number of micro-batches) changes no step: every layout timed with it as without it.
TEST(ParallelStep, TheStageCacheChangesNoStep) {
    for (const char* model : {"gpt2", "mixtral-8x7b"}) {
        Fixture f(8, 1.0, model, 128);
        StageCache cache;
        ParallelContext cached = f.context;
        cached.cache = &cache;
        LayoutRequest r = f.request();
        r.global_batch = 32;
        int compared = 0;
        for (const auto& l : candidate_layouts(r, f.models.shape(), f.cluster)) {
            ParallelStep with = predict_parallel_step(l, f.models, cached), without = predict_parallel_step(l, f.models, f.context);
            EXPECT_NEAR(with.total_ms(), without.total_ms(), 1e-9 * without.total_ms())
                << model << " dp " << l.dp << " tp " << l.tp << " pp " << l.pp << " zero " << l.zero << " ga " << l.grad_accum;
            EXPECT_NEAR(with.communication_total_ms, without.communication_total_ms, 1e-9 * (1 + without.communication_total_ms));
            ++compared;
        }
        EXPECT_GT(compared, 20) << model;
    }
}

TEST(ParallelStep, MsPerSampleDividesByTheGlobalBatch) {
    Fixture f(2);
    ParallelLayout l;
    l.dp = 2, l.micro_batch = 2, l.grad_accum = 3;
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    EXPECT_DOUBLE_EQ(ms_per_sample(s), s.total_ms() / 12.0);
}

}  // namespace
}  // namespace prenet
