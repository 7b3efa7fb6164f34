#include "parallel/pipeline.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

std::int64_t copies(const Model& m) { return pipeline_units(m); }

bool has_layer(const Model& m, const std::string& name) {
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.name == name) return true;
    return false;
}

TEST(Pipeline, StagesSplitTheBlocksWithTheInputFirstAndTheHeadLast) {
    Model m = testing::blocks_model(2);  // input linear, 6 block copies, head
    auto stages = pipeline_stages(m, 3, 1);
    ASSERT_EQ(stages.size(), 3u);
    for (const auto& s : stages) EXPECT_EQ(copies(s), 2);
    EXPECT_TRUE(has_layer(stages[0], "in"));
    EXPECT_FALSE(has_layer(stages[1], "in"));
    EXPECT_TRUE(has_layer(stages[2], "head"));
    EXPECT_FALSE(has_layer(stages[0], "head"));
}

TEST(Pipeline, UnevenBlocksGoToTheFirstStages) {
    auto stages = pipeline_stages(testing::blocks_model(2), 4, 1);  // 6 copies over 4 stages: 2 2 1 1
    std::vector<std::int64_t> got;
    for (const auto& s : stages) got.push_back(copies(s));
    EXPECT_EQ(got, (std::vector<std::int64_t>{2, 2, 1, 1}));
}

TEST(Pipeline, InterleavedStagesHoldEveryPpthChunk) {
    auto stages = pipeline_stages(testing::blocks_model(2), 3, 2);  // 6 chunks of 1 copy; stage 0 has 0 and 3
    ASSERT_EQ(stages.size(), 3u);
    for (const auto& s : stages) EXPECT_EQ(copies(s), 2);
    EXPECT_TRUE(has_layer(stages[0], "in"));
    EXPECT_TRUE(has_layer(stages[2], "head"));
}

TEST(Pipeline, StagePiecesNameTheBlockCopiesEachStageHolds) {
    Model m = testing::blocks_model(2);  // blocks: 0 the input linear, 1 the 6 copies, 2 the head
    auto pieces = pipeline_stage_pieces(m, 4, 1);  // 2 2 1 1 copies
    ASSERT_EQ(pieces.size(), 4u);
    auto piece = [](size_t block, std::int64_t copies) { return PipelinePiece{block, copies}; };
    auto same = [](const StagePieces& a, const StagePieces& b) { return !(a < b) && !(b < a); };
    EXPECT_TRUE(same(pieces[0], (StagePieces{piece(0, 1), piece(1, 2)})));
    EXPECT_TRUE(same(pieces[1], (StagePieces{piece(1, 2)})));
    EXPECT_TRUE(same(pieces[2], (StagePieces{piece(1, 1)})));
    EXPECT_TRUE(same(pieces[3], (StagePieces{piece(1, 1), piece(2, 1)})));
    // Built from its pieces, a stage is pipeline_stages' stage.
    auto stages = pipeline_stages(m, 4, 1);
    for (std::int64_t s = 0; s < 4; ++s) {
        Model built = pipeline_stage(m, pieces[size_t(s)], s, 4);
        EXPECT_EQ(built.name, stages[size_t(s)].name);
        EXPECT_EQ(copies(built), copies(stages[size_t(s)]));
        EXPECT_EQ(built.blocks.size(), stages[size_t(s)].blocks.size());
    }
}

TEST(Pipeline, MoreChunksThanBlocksIsAnError) {
    EXPECT_THROW(pipeline_stages(testing::blocks_model(2), 7, 1), Error);
}

TEST(Pipeline, BubbleFractionIsPMinusOneOverMTimesV) {
    const std::int64_t p = 4, m = 8;
    std::vector<double> even(p, 10.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(even, 1, 0.0) / (double(m) * 10.0), double(p - 1) / double(m));
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(even, 2, 0.0) / (double(m) * 10.0), double(p - 1) / double(m * 2));
}

TEST(Pipeline, TheBubbleIsTheOtherStagesAndTheTransfers) {
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms({10.0, 20.0, 10.0}, 1, 0.0), 20.0);  // the slowest stage waits for the rest
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms({10.0}, 1, 5.0), 0.0);               // one stage: no bubble, no transfers
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms({10.0, 10.0}, 1, 1.0), 10.0 + 2.0);  // one boundary, there and back
    // Interleaved: each fill step is one chunk of the other stage (10 / 2), but a chunk's send is a whole one.
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms({10.0, 10.0}, 2, 1.0), 10.0 / 2 + 2.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms({}, 1, 1.0), 0.0);
}

Model llama2_70b(std::int64_t seq) { return testing::zoo_model("llama2-70b", 1, seq); }

TEST(Pipeline, ASendIsOneBlocksOutputPerTensorRank) {
    // Megatron, llama2-70b (hidden 8192), micro-batch 1, 4096 tokens, bf16, tp 8, pp 8.
    ParallelLayout l;
    l.tp = 8, l.pp = 8;
    // Without sequence parallelism every tp rank sends the whole activation: 1 x 4096 x 8192 x 2 B = 64 MiB.
    EXPECT_DOUBLE_EQ(pipeline_message_bytes(llama2_70b(4096), l, Precision::bf16), 67108864.0);
    // With it, its 1/8 of the tokens: 8 MiB (8.4 MB), not the loss's output, nor divided by tp twice.
    l.sequence_parallel = true;
    EXPECT_DOUBLE_EQ(pipeline_message_bytes(llama2_70b(4096), l, Precision::bf16), 8388608.0);
    // Context parallelism: the model one device runs holds 4096 / cp = 2048 tokens: 4 MiB.
    l.cp = 2;
    EXPECT_DOUBLE_EQ(pipeline_message_bytes(llama2_70b(2048), l, Precision::bf16), 4194304.0);
}

TEST(Pipeline, EachMicroBatchIsSentOnAndBackAtEveryChunkBoundary) {
    // llama2-70b tp 8, pp 8, 16 micro-batches: the slowest stage sends each micro-batch on and its gradient back
    // (2 x 16 = 32 sends), and the fill and drain wait for 2 x (8 - 1) = 14 more: 46 sends of 8.4 MB.
    ParallelLayout l;
    l.tp = 8, l.pp = 8, l.grad_accum = 16;
    EXPECT_DOUBLE_EQ(pipeline_steady_sends(l), 32.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_sends(l.pp), 14.0);
    // Interleaved with vp 2: each of the stage's two chunks sends every micro-batch, 2 x 2 x 16 = 64; over the
    // pipeline a micro-batch crosses pp x vp - 1 = 15 boundaries each way instead of 7.
    l.schedule = PipelineSchedule::interleaved, l.vp = 2;
    EXPECT_DOUBLE_EQ(pipeline_steady_sends(l), 64.0);
    l.pp = 1, l.vp = 1;
    EXPECT_DOUBLE_EQ(pipeline_steady_sends(l), 0.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_sends(1), 0.0);
}

TEST(Pipeline, MicroBatchesInFlight) {
    ParallelLayout l;
    l.pp = 4, l.grad_accum = 16;
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(0, l), 4.0);  // 1F1B: the first stage holds pp
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(3, l), 1.0);
    l.schedule = PipelineSchedule::gpipe;
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(3, l), 16.0);  // GPipe: all of them
    l.schedule = PipelineSchedule::interleaved, l.vp = 2;
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(0, l), (3.0 * 2 + 4.0 + 1.0) / 2.0);  // p + (p - 1) / v
    l.grad_accum = 2;
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(0, l), 2.0);  // never more than there are
}

}  // namespace
}  // namespace prenet
