#include "parallel/layout.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

ModelShape gpt_like() {
    ModelShape s;
    s.name = "gpt";
    s.heads = 12;
    s.kv_heads = 12;
    s.blocks = 12;
    s.tokens_per_sample = 1024;
    return s;
}

std::string field_of(const ParallelLayout& l, const ModelShape& s, std::int64_t gpus) {
    try {
        check_layout(l, s, gpus);
    } catch (const Error& e) {
        return e.field();
    }
    return "";
}

TEST(ParallelLayout, ARefusalIsReturnedAsCheckLayoutWouldThrowIt) {
    ParallelLayout ok;
    ok.dp = 2, ok.tp = 2;
    EXPECT_FALSE(layout_refusal(ok, gpt_like(), 4));
    EXPECT_NO_THROW(check_layout(ok, gpt_like(), 4));
    ParallelLayout interleaved = ok;  // vp 2 with one micro-batch: the schedule needs a multiple of pp
    interleaved.dp = 1, interleaved.pp = 2, interleaved.vp = 2, interleaved.schedule = PipelineSchedule::interleaved;
    ParallelLayout bad_split = interleaved;  // 12 blocks cannot end with 5 on the last stage at vp 2
    bad_split.grad_accum = 2, bad_split.last_stage_blocks = 5;
    for (const ParallelLayout& l : {interleaved, bad_split}) {
        auto refusal = layout_refusal(l, gpt_like(), 4);
        ASSERT_TRUE(refusal);
        EXPECT_EQ(refusal->field(), field_of(l, gpt_like(), 4));
        EXPECT_FALSE(refusal->field().empty());
    }
}

TEST(ParallelLayout, ProductMustEqualTheDevices) {
    ParallelLayout l;
    l.dp = 2, l.tp = 2, l.pp = 2;
    EXPECT_EQ(l.devices(), 8);
    EXPECT_EQ(field_of(l, gpt_like(), 8), "");
    EXPECT_EQ(field_of(l, gpt_like(), 16), "gpus");
}

TEST(ParallelLayout, TensorParallelMustDivideTheHeads) {
    ParallelLayout l;
    l.tp = 4;
    EXPECT_EQ(field_of(l, gpt_like(), 4), "");
    l.tp = 8;
    EXPECT_EQ(field_of(l, gpt_like(), 8), "tp");  // 12 heads
}

TEST(ParallelLayout, PipelineStagesAtMostTheBlocks) {
    ParallelLayout l;
    l.pp = 12;
    EXPECT_EQ(field_of(l, gpt_like(), 12), "");
    l.pp = 16;
    EXPECT_EQ(field_of(l, gpt_like(), 16), "pp");
}

TEST(ParallelLayout, VirtualStagesNeedTheInterleavedScheduleAndDivideTheBlocks) {
    ParallelLayout l;
    l.pp = 2, l.vp = 2, l.grad_accum = 4;
    EXPECT_EQ(field_of(l, gpt_like(), 2), "schedule");
    l.schedule = PipelineSchedule::interleaved;
    EXPECT_EQ(field_of(l, gpt_like(), 2), "");
    l.vp = 4;  // 2 x 4 chunks do not divide 12 blocks
    EXPECT_EQ(field_of(l, gpt_like(), 2), "vp");
}

TEST(ParallelLayout, ExpertParallelNeedsExpertsAndDividesDataParallel) {
    ParallelLayout l;
    l.dp = 4, l.ep = 2;
    EXPECT_EQ(field_of(l, gpt_like(), 4), "ep");  // dense
    ModelShape moe = gpt_like();
    moe.experts = 8;
    EXPECT_EQ(field_of(l, moe, 4), "");
    l.dp = 2, l.tp = 2, l.ep = 4;  // ep spans the tp ranks too: each tp rank must route its own tokens
    EXPECT_EQ(field_of(l, moe, 4), "sequence_parallel");
    l.sequence_parallel = true;
    EXPECT_EQ(field_of(l, moe, 4), "");
    EXPECT_EQ(l.expert_tp(), 1);
    l.dp = 4, l.tp = 2, l.ep = 2;
    EXPECT_EQ(l.expert_tp(), 2);  // carved from dp: the experts are tensor-split like the rest
    l.dp = 3, l.tp = 2, l.ep = 4;  // 4 divides neither dp 3 nor dp x tp 6
    EXPECT_EQ(field_of(l, moe, 6), "ep");
}

TEST(ParallelLayout, ZeroNeedsDataParallelRanksAndIsZeroToThree) {
    ParallelLayout l;
    l.tp = 2, l.zero = 3;
    EXPECT_EQ(field_of(l, gpt_like(), 2), "zero");
    l.tp = 1, l.dp = 2, l.zero = 4;
    EXPECT_EQ(field_of(l, gpt_like(), 2), "zero");
}

TEST(ParallelLayout, ContextParallelNeedsTokensThatSplit) {
    ParallelLayout l;
    l.cp = 3;
    EXPECT_EQ(field_of(l, gpt_like(), 3), "cp");  // 1024 tokens
    ModelShape cnn = gpt_like();
    cnn.tokens_per_sample = 0;
    l.cp = 2;
    EXPECT_EQ(field_of(l, cnn, 2), "cp");
}

// Llama 3.1 405B's published layout: 126 blocks, tp 8, pp 16, on 16,384 devices (dp 128), as Megatron-Core
// can build it (the layout only; its published times are not compared with).
TEST(ParallelLayout, The405BLayoutSplitsAtEveryVpMegatronBuilds) {
    ModelShape s;
    s.name = "llama-405b", s.heads = 128, s.kv_heads = 8, s.blocks = 126, s.tokens_per_sample = 8192;
    ParallelLayout l;
    l.tp = 8, l.pp = 16, l.dp = 128, l.grad_accum = 16, l.sequence_parallel = true;
    EXPECT_EQ(field_of(l, s, 16384), "");  // vp 1: the first 14 stages take 8
    l.schedule = PipelineSchedule::interleaved;
    for (std::int64_t vp : {2, 4, 8}) {  // the embedding and the loss counted as a block: 128 slots
        l.vp = vp;
        EXPECT_EQ(field_of(l, s, 16384), "") << vp;
    }
    l.vp = 2, l.first_stage_blocks = 8, l.last_stage_blocks = 6;
    EXPECT_EQ(field_of(l, s, 16384), "");
    l.last_stage_blocks = 7;  // not a multiple of vp
    EXPECT_EQ(field_of(l, s, 16384), "last_stage_blocks");
    l.first_stage_blocks = l.last_stage_blocks = 0, l.vp = 3;  // 48 chunks divide neither 126 nor 128
    EXPECT_EQ(field_of(l, s, 16384), "vp");
}

TEST(ParallelLayout, DualPipeNeedsAnEvenPipelineAndTwiceItsMicroBatches) {
    ParallelLayout l;
    l.pp = 4, l.grad_accum = 8, l.schedule = PipelineSchedule::dualpipe;
    EXPECT_EQ(field_of(l, gpt_like(), 4), "");
    l.grad_accum = 6;  // below 2 pp
    EXPECT_EQ(field_of(l, gpt_like(), 4), "grad_accum");
    l.grad_accum = 9;  // odd
    EXPECT_EQ(field_of(l, gpt_like(), 4), "grad_accum");
    l.pp = 3, l.grad_accum = 6;
    EXPECT_EQ(field_of(l, gpt_like(), 3), "pp");
    l.pp = 4, l.grad_accum = 8, l.vp = 2;  // vp > 1 runs the interleaved schedule only
    EXPECT_EQ(field_of(l, gpt_like(), 4), "schedule");
}

TEST(ParallelLayout, JsonCarriesEveryDimension) {
    ParallelLayout l;
    l.dp = 4, l.micro_batch = 2, l.grad_accum = 8, l.recompute = Recompute::selective;
    nlohmann::json j = to_json(l);
    EXPECT_EQ(j["global_batch"], 64);
    EXPECT_EQ(j["checkpointing"], "selective");
    for (const char* key : {"dp", "tp", "pp", "cp", "ep", "vp", "zero", "schedule", "sequence_parallel"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_FALSE(j.contains("first_stage_blocks"));  // only when given
    l.pp = 4, l.first_stage_blocks = 2, l.last_stage_blocks = 1;
    EXPECT_EQ(to_json(l)["first_stage_blocks"], 2);
    EXPECT_EQ(to_json(l)["last_stage_blocks"], 1);
    EXPECT_EQ(parse_schedule("interleaved"), PipelineSchedule::interleaved);
    for (auto s : {PipelineSchedule::zb_h1, PipelineSchedule::dualpipe}) EXPECT_EQ(parse_schedule(to_string(s)), s);
    EXPECT_THROW(parse_schedule("zigzag"), Error);
    EXPECT_THROW(parse_recompute("some"), Error);
}

TEST(ParallelLayout, EachKindIsNamedByTheOptionValueThatRunsIt) {
    FrameworkPreset generic;
    for (CheckpointKind k : {CheckpointKind::none, CheckpointKind::attention_core, CheckpointKind::op_level,
                             CheckpointKind::full, CheckpointKind::offload})
        EXPECT_EQ(checkpoint_kind(named_recompute(k), generic), k) << to_string(k);
    EXPECT_STREQ(to_string(named_recompute(CheckpointKind::op_level)), "op-selective");
}

}  // namespace
}  // namespace prenet
