#include "parallel/pipeline.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

std::int64_t copies(const Model& m) { return pipeline_units(m); }

ParallelLayout pipeline(std::int64_t pp, std::int64_t vp = 1, std::int64_t first = 0, std::int64_t last = 0) {
    ParallelLayout l;
    l.pp = pp, l.vp = vp, l.first_stage_blocks = first, l.last_stage_blocks = last;
    return l;
}

std::vector<std::int64_t> stage_copies(const std::vector<Model>& stages) {
    std::vector<std::int64_t> out;
    for (const auto& s : stages) out.push_back(pipeline_units(s));
    return out;
}

bool has_layer(const Model& m, const std::string& name) {
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.name == name) return true;
    return false;
}

TEST(Pipeline, StagesSplitTheBlocksWithTheInputFirstAndTheHeadLast) {
    Model m = testing::blocks_model(2);  // input linear, 6 block copies, head
    auto stages = pipeline_stages(m, pipeline(3));
    ASSERT_EQ(stages.size(), 3u);
    for (const auto& s : stages) EXPECT_EQ(copies(s), 2);
    EXPECT_TRUE(has_layer(stages[0], "in"));
    EXPECT_FALSE(has_layer(stages[1], "in"));
    EXPECT_TRUE(has_layer(stages[2], "head"));
    EXPECT_FALSE(has_layer(stages[0], "head"));
}

TEST(Pipeline, UnevenBlocksGoToTheFirstStages) {
    auto stages = pipeline_stages(testing::blocks_model(2), pipeline(4));  // 6 copies over 4 stages: 2 2 1 1
    EXPECT_EQ(stage_copies(stages), (std::vector<std::int64_t>{2, 2, 1, 1}));
}

TEST(Pipeline, GivenFirstAndLastStageBlocksLeaveTheRestEvenly) {
    // 6 copies, pp 4, first 1 and last 1: 4 left over the 2 stages between, 2 each.
    auto stages = pipeline_stages(testing::blocks_model(2), pipeline(4, 1, 1, 1));
    EXPECT_EQ(stage_copies(stages), (std::vector<std::int64_t>{1, 2, 2, 1}));
    EXPECT_TRUE(has_layer(stages[0], "in"));
    EXPECT_TRUE(has_layer(stages[3], "head"));
    // Only the last given: 6 - 2 = 4 over the 3 stages before it does not split; 6 - 3 = 3 does.
    EXPECT_THROW(pipeline_stages(testing::blocks_model(2), pipeline(4, 1, 0, 2)), Error);
    EXPECT_EQ(stage_copies(pipeline_stages(testing::blocks_model(2), pipeline(4, 1, 0, 3))),
              (std::vector<std::int64_t>{1, 1, 1, 3}));
}

TEST(Pipeline, ChunkBlocksFollowMegatronsRules) {
    using V = std::vector<std::int64_t>;
    // Llama 3.1 405B's 126 blocks at pp 16. vp 1: 126 = 16 x 7 + 14, the first 14 stages take 8.
    V vp1 = stage_chunk_blocks(pipeline(16), 126);
    EXPECT_EQ(vp1.front(), 8);
    EXPECT_EQ(vp1.back(), 7);
    // First and last 7: 112 left over 14 stages, 8 each.
    V ends = stage_chunk_blocks(pipeline(16, 1, 7, 7), 126);
    EXPECT_EQ(ends[0], 7);
    EXPECT_EQ(ends[1], 8);
    EXPECT_EQ(ends[15], 7);
    // vp 2, first 8, last 6: 112 over 14 stages x 2 chunks, 4 a chunk; the first stage's chunks 4 and 4, the
    // last's 3 and 3; chunk v x pp + s is stage s's v-th.
    V vp2 = stage_chunk_blocks(pipeline(16, 2, 8, 6), 126);
    ASSERT_EQ(vp2.size(), 32u);
    EXPECT_EQ(vp2[0], 4);
    EXPECT_EQ(vp2[16], 4);
    EXPECT_EQ(vp2[15], 3);
    EXPECT_EQ(vp2[31], 3);
    EXPECT_EQ(vp2[1], 4);
    // vp 8 without ends: 126 + 2 = 128 = 16 x 8 slots of 1; the embedding's and the loss's chunks hold none.
    V vp8 = stage_chunk_blocks(pipeline(16, 8), 126);
    EXPECT_EQ(vp8.front(), 0);
    EXPECT_EQ(vp8.back(), 0);
    EXPECT_EQ(vp8[1], 1);
    // vp 4: 64 chunks of 128 / 64 = 2 slots, the first and last chunk 1 block.
    V vp4 = stage_chunk_blocks(pipeline(16, 4), 126);
    EXPECT_EQ(vp4.front(), 1);
    EXPECT_EQ(vp4[1], 2);
    EXPECT_EQ(vp4.back(), 1);
}

TEST(Pipeline, ChunkBlocksThatDoNotAddUpNameTheirField) {
    auto field = [](const ParallelLayout& l, std::int64_t blocks) {
        try {
            stage_chunk_blocks(l, blocks);
        } catch (const Error& e) {
            return e.field();
        }
        return std::string();
    };
    EXPECT_EQ(field(pipeline(16, 2, 7, 7), 126), "first_stage_blocks");  // 7 is no multiple of vp 2
    EXPECT_EQ(field(pipeline(16, 2, 8, 7), 126), "last_stage_blocks");
    EXPECT_EQ(field(pipeline(16, 1, 7, 6), 126), "last_stage_blocks");   // 113 over 14 stages
    EXPECT_EQ(field(pipeline(2, 1, 60, 60), 126), "last_stage_blocks");  // pp 2: the ends are every block
    EXPECT_EQ(field(pipeline(16, 3), 126), "vp");                       // 48 chunks divide neither 126 nor 128
    EXPECT_EQ(field(pipeline(1, 1, 4), 126), "first_stage_blocks");      // no pipeline
    EXPECT_EQ(field(pipeline(16, 1, 7, 7), 126), "");
}

TEST(Pipeline, EmbeddingAndLossSlotsKeepTheInputFirstAndTheHeadLast) {
    // 6 copies, pp 2, vp 4: 8 chunks of (6 + 2) / 8 = 1 slot; chunk 0 (stage 0) holds only the input layer and
    // chunk 7 (stage 1) only the head.
    auto stages = pipeline_stages(testing::blocks_model(2), pipeline(2, 4));
    EXPECT_EQ(stage_copies(stages), (std::vector<std::int64_t>{3, 3}));
    EXPECT_TRUE(has_layer(stages[0], "in"));
    EXPECT_TRUE(has_layer(stages[1], "head"));
    EXPECT_FALSE(has_layer(stages[0], "head"));
}

TEST(Pipeline, InterleavedStagesHoldEveryPpthChunk) {
    auto stages = pipeline_stages(testing::blocks_model(2), pipeline(3, 2));  // 6 chunks of 1 copy; stage 0 has 0 and 3
    ASSERT_EQ(stages.size(), 3u);
    for (const auto& s : stages) EXPECT_EQ(copies(s), 2);
    EXPECT_TRUE(has_layer(stages[0], "in"));
    EXPECT_TRUE(has_layer(stages[2], "head"));
}

TEST(Pipeline, StagePiecesNameTheBlockCopiesEachStageHolds) {
    Model m = testing::blocks_model(2);  // blocks: 0 the input linear, 1 the 6 copies, 2 the head
    auto pieces = pipeline_stage_pieces(m, pipeline(4));  // 2 2 1 1 copies
    ASSERT_EQ(pieces.size(), 4u);
    auto piece = [](size_t block, std::int64_t copies) { return PipelinePiece{block, copies}; };
    auto same = [](const StagePieces& a, const StagePieces& b) { return !(a < b) && !(b < a); };
    EXPECT_TRUE(same(pieces[0], (StagePieces{piece(0, 1), piece(1, 2)})));
    EXPECT_TRUE(same(pieces[1], (StagePieces{piece(1, 2)})));
    EXPECT_TRUE(same(pieces[2], (StagePieces{piece(1, 1)})));
    EXPECT_TRUE(same(pieces[3], (StagePieces{piece(1, 1), piece(2, 1)})));
    // Built from its pieces, a stage is pipeline_stages' stage.
    auto stages = pipeline_stages(m, pipeline(4));
    for (std::int64_t s = 0; s < 4; ++s) {
        Model built = pipeline_stage(m, pieces[size_t(s)], s, 4);
        EXPECT_EQ(built.name, stages[size_t(s)].name);
        EXPECT_EQ(pipeline_units(built), pipeline_units(stages[size_t(s)]));
        EXPECT_EQ(built.blocks.size(), stages[size_t(s)].blocks.size());
    }
}

TEST(Pipeline, MoreChunksThanBlocksIsAnError) {
    EXPECT_THROW(pipeline_stages(testing::blocks_model(2), pipeline(7)), Error);
}

std::vector<StagePass> passes(std::vector<double> ms) {
    std::vector<StagePass> out;
    for (double t : ms) out.push_back({t, 0.0, 0.0});
    return out;
}

ParallelLayout scheduled(PipelineSchedule schedule, std::int64_t vp = 1) {
    ParallelLayout l;
    l.schedule = schedule, l.vp = vp;
    return l;
}

TEST(Pipeline, BubbleFractionIsPMinusOneOverMTimesV) {
    const std::int64_t p = 4, m = 8;
    auto even = passes(std::vector<double>(p, 10.0));
    auto interleaved = scheduled(PipelineSchedule::interleaved, 2);
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(even, ParallelLayout{}, 0.0) / (double(m) * 10.0), double(p - 1) / double(m));
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(even, interleaved, 0.0) / (double(m) * 10.0), double(p - 1) / double(m * 2));
}

TEST(Pipeline, TheBubbleIsTheOtherStagesAndTheTransfers) {
    ParallelLayout one_f_one_b;
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(passes({10.0, 20.0, 10.0}), one_f_one_b, 0.0), 20.0);  // the slowest waits
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(passes({10.0}), one_f_one_b, 5.0), 0.0);  // one stage: no bubble, no sends
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(passes({10.0, 10.0}), one_f_one_b, 1.0), 10.0 + 2.0);  // there and back
    // Interleaved: each fill step is one chunk of the other stage (10 / 2), but a chunk's send is a whole one.
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(passes({10.0, 10.0}), scheduled(PipelineSchedule::interleaved, 2), 1.0),
                     10.0 / 2 + 2.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms({}, one_f_one_b, 1.0), 0.0);
    // Uneven interleaved chunks: the stages' sums, still one chunk per fill step: (8 + 6) / 2 beside 10.
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(passes({8.0, 10.0, 6.0}), scheduled(PipelineSchedule::interleaved, 2), 0.0),
                     7.0);
}

TEST(Pipeline, ZeroBubbleH1FillsTheDrainWithWeightGradients) {
    // p = 4 even stages, F = 1, backward B = 2 of which W = 1 (input gradient 1): Qi et al.'s equal F, B, W.
    // 1F1B: (p - 1)(F + B) = 9. ZB-H1: (p - 1)(F + B_input - W) = 3 x (1 + 1 - 1) = 3, a third of it.
    std::vector<StagePass> even(4, StagePass{3.0, 2.0, 1.0});
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(even, ParallelLayout{}, 0.0), 9.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(even, scheduled(PipelineSchedule::zb_h1), 0.0), 3.0);
    // Uneven: the slowest (t 5) waits for the others' t - 2W: (3 - 2) + (2 - 0.5 x 2) = 2; sends stay 2 (p - 1).
    std::vector<StagePass> uneven{{3.0, 2.0, 1.0}, {5.0, 3.0, 1.5}, {2.0, 1.0, 0.5}};
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(uneven, scheduled(PipelineSchedule::zb_h1), 0.5), 2.0 + 4 * 0.5);
}

TEST(Pipeline, DualPipesBubbleIsHalfThePipelineLessThreeWeightPasses) {
    // DeepSeek-V3 Table 2: (PP/2 - 1)(F&B + B - 3W). PP = 8, F = 1, B = 2, W = 1, F&B = F + B = 3:
    // 3 x (3 + 2 - 3) = 6, against 1F1B's 7 x 3 = 21 and ZB-H1's 7 x 1 = 7.
    std::vector<StagePass> even(8, StagePass{3.0, 2.0, 1.0});
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(even, scheduled(PipelineSchedule::dualpipe), 0.0), 6.0);
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms(even, scheduled(PipelineSchedule::zb_h1), 0.0), 7.0);
    // PP = 2: no bubble of compute (PP/2 - 1 = 0), only the sends.
    EXPECT_DOUBLE_EQ(pipeline_bubble_ms({{3.0, 2.0, 1.0}, {3.0, 2.0, 1.0}}, scheduled(PipelineSchedule::dualpipe), 1.0),
                     2.0);
}

TEST(Pipeline, WeightGradientShareIsTheBackwardFlopsShare) {
    ModelFeatures f;
    f.backward_input_flops = 3.0, f.backward_weight_flops = 1.0;
    EXPECT_DOUBLE_EQ(weight_grad_share(f), 0.25);
    EXPECT_DOUBLE_EQ(weight_grad_share(ModelFeatures{}), 0.5);  // nothing known: half
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
    l.vp = 1, l.grad_accum = 16;
    l.schedule = PipelineSchedule::zb_h1;  // 1F1B's peak (Qi et al. Table 1: p M_B)
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(0, l), 4.0);
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(2, l), 2.0);
    l.schedule = PipelineSchedule::dualpipe;  // DeepSeek-V3 Table 2: PP + 1 on every rank
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(0, l), 5.0);
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(3, l), 5.0);
}

TEST(Pipeline, InterleavedWarmUpFollowsMegatronCore) {
    // Megatron-Core's interleaved schedule runs (pp - s - 1) x 2 + (vp - 1) x pp chunk forwards before stage s's
    // first backward, plus the one that backward follows; each chunk is 1/vp of the stage. pp 4, vp 4, 32
    // micro-batches: stage 0 holds (6 + 12 + 1) / 4 = 4.75 micro-batches (p + (p - 1)/v: Korthikanti et al.
    // 2022, section 4.2.3), stage 3 (0 + 12 + 1) / 4 = 3.25.
    ParallelLayout l = pipeline(4, 4);
    l.schedule = PipelineSchedule::interleaved, l.grad_accum = 32;
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(0, l), 4.75);
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(3, l), 3.25);
    // Too few micro-batches for the warm-up: every chunk forward runs first, all m micro-batches held.
    l.grad_accum = 4;
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(0, l), 4.0);
}

TEST(Pipeline, InterleavedChunksHoldTheirOwnShare) {
    // pp 4, vp 2, 8 micro-batches: the first stage runs 6 + 4 + 1 = 11 chunk forwards before its first
    // backward, forwards 0-3 on chunk 0, 4-7 on chunk 1, 8-10 on chunk 0 again: 7 (2 pp - 1) and 4; the last
    // stage runs 0 + 4 + 1 = 5, four on chunk 0 and one on chunk 1 (where the head and the loss are).
    ParallelLayout l = pipeline(4, 2);
    l.schedule = PipelineSchedule::interleaved, l.grad_accum = 8;
    EXPECT_DOUBLE_EQ(chunk_micro_batches_in_flight(0, 0, l), 7.0);
    EXPECT_DOUBLE_EQ(chunk_micro_batches_in_flight(0, 1, l), 4.0);
    EXPECT_DOUBLE_EQ(chunk_micro_batches_in_flight(3, 0, l), 4.0);
    EXPECT_DOUBLE_EQ(chunk_micro_batches_in_flight(3, 1, l), 1.0);
    // The chunks' counts make up the stage's: (7 + 4) / 2 = 5.5 = micro_batches_in_flight.
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(0, l), 5.5);
    // The last stage's logits (trailing 3 of 12 saved) count once, its blocks 2.5 times; nothing recomputed.
    ActivationMemory one;
    one.saved = 12, one.trailing = 3;
    EXPECT_DOUBLE_EQ(stage_activation_bytes(one, 3, l), 2.5 * 9 + 1 * 3);
    l.grad_accum = 2;  // fewer micro-batches than the warm-up: every forward first, each chunk holds all
    EXPECT_DOUBLE_EQ(chunk_micro_batches_in_flight(3, 1, l), 2.0);
    ParallelLayout one_f_one_b = pipeline(4);
    one_f_one_b.grad_accum = 8;
    EXPECT_DOUBLE_EQ(chunk_micro_batches_in_flight(1, 0, one_f_one_b), 3.0);  // 1F1B: the stage's pp - s
}

TEST(Pipeline, OneRecomputedBlockOnTopOfTheMicroBatchesInFlight) {
    // One micro-batch keeps 12 (of which 2 block inputs) and recomputes a block of 5 in its backward: 7 stay
    // per micro-batch held, the recomputed block is alive once (only the micro-batch in its backward has it).
    ActivationMemory one;
    one.saved = 12, one.block_inputs = 2, one.recompute_block = 5;
    ParallelLayout l = pipeline(4);
    l.grad_accum = 8;
    EXPECT_DOUBLE_EQ(stage_activation_bytes(one, 0, l), 4 * 7.0 + 5);  // 1F1B: pp - s = 4 in flight
    EXPECT_DOUBLE_EQ(stage_activation_bytes(one, 3, l), 12.0);         // the last stage: one
    l.schedule = PipelineSchedule::gpipe;
    EXPECT_DOUBLE_EQ(stage_activation_bytes(one, 3, l), 8 * 7.0 + 5);  // GPipe: all 8
    EXPECT_DOUBLE_EQ(stage_activation_bytes(one, 0, pipeline(1)), 12.0);  // no pipeline: one micro-batch
}

TEST(Pipeline, DualPipeHoldsItsMirrorStagesParameters) {
    EXPECT_EQ(dualpipe_mirror_stage(0, 8), 7);
    EXPECT_EQ(dualpipe_mirror_stage(5, 8), 2);
    MemoryUse own, mirror;
    own.weights = 10, own.gradients = 10, own.optimizer_states = 40, own.activations = 30, own.peak = 90;
    own.peak_allocated = 80, own.peak_reserved = 85;
    mirror.weights = 5, mirror.gradients = 5, mirror.optimizer_states = 20, mirror.activations = 99;
    MemoryUse both = with_mirror_parameters(own, mirror);
    EXPECT_DOUBLE_EQ(both.weights, 15.0);
    EXPECT_DOUBLE_EQ(both.optimizer_states, 60.0);
    EXPECT_DOUBLE_EQ(both.activations, 30.0);  // activations: micro_batches_in_flight's
    EXPECT_DOUBLE_EQ(both.peak, 120.0);
    EXPECT_DOUBLE_EQ(both.peak_allocated, 110.0);  // the mirror's states are tensors on the device: in all three
    EXPECT_DOUBLE_EQ(both.peak_reserved, 115.0);
    mirror.optimizer_paged = true;  // paged states live in host memory
    EXPECT_DOUBLE_EQ(with_mirror_parameters(own, mirror).peak, 100.0);
}

}  // namespace
}  // namespace prenet
