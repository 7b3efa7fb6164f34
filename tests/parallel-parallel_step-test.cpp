// parallel/parallel_step.hpp: one layout's step on a cluster: one device is the single-device step, a pipeline
// adds its bubble and its transfers, each kind of parallelism accounts its collectives, and memory is the same
// with or without timing.
#include "parallel/parallel_step.hpp"

#include <gtest/gtest.h>

#include "parallel-fixture.hpp"
#include "parallel/pipeline.hpp"

namespace prenet {
namespace {

using Fixture = testing::ParallelFixture;

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
    EXPECT_GT(s.time.bubble_ms, pipeline_bubble_ms(s.stage_ms, 1, 0.0));
    EXPECT_GT(pipeline_bubble_ms(s.stage_ms, 1, 0.0), 0.0);
    EXPECT_GT(s.total_by_kind_ms.at("pipeline parallel"), 0.0);
    EXPECT_EQ(s.total_by_kind_ms.at("tensor parallel"), 0.0);
}

TEST(ParallelStep, PipelineTrafficIsEverySendOfEveryMicroBatch) {
    // GPT-2 (hidden 768) at 128 tokens, micro-batch 1, bf16: a send is 1 x 128 x 768 x 2 = 196,608 B. On the
    // fixture's 300 GB/s link (efficiency 1, 1 us a step, no base or pipelining term) one send takes
    // 1 us + 196,608 B / 300 GB/s = 1.65536 us.
    const double send_ms = 1e-3 + 196608.0 / 300e9 * 1e3;
    Fixture f(2);
    ParallelLayout l;
    l.pp = 2, l.grad_accum = 4;
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    // 1F1B: 4 micro-batches on and back (8 sends, exposed), and the fill and drain's 2 x (2 - 1) = 2.
    EXPECT_NEAR(s.exposed_by_kind_ms.at("pipeline parallel"), 8 * send_ms, 1e-12);
    EXPECT_NEAR(s.total_by_kind_ms.at("pipeline parallel"), 10 * send_ms, 1e-12);
    // Interleaved, vp 2: each stage's two chunks send every micro-batch: 2 x 2 x 4 = 16 sends, + 2.
    l.schedule = PipelineSchedule::interleaved, l.vp = 2;
    ParallelStep v = predict_parallel_step(l, f.models, f.context);
    EXPECT_NEAR(v.exposed_by_kind_ms.at("pipeline parallel"), 16 * send_ms, 1e-12);
    EXPECT_NEAR(v.total_by_kind_ms.at("pipeline parallel"), 18 * send_ms, 1e-12);
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

TEST(ParallelStep, MemoryIsTheSameWithOrWithoutTiming) {
    Fixture f(4);
    ParallelLayout l;
    l.dp = 2, l.pp = 2, l.zero = 1;
    ParallelMemory alone = parallel_memory(l, f.models, f.context);
    ParallelStep s = predict_parallel_step(l, f.models, f.context);
    EXPECT_EQ(s.memory.peak, alone.memory.peak);
    EXPECT_EQ(s.fullest_stage, alone.fullest_stage);
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
