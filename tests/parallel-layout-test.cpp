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

TEST(ParallelLayout, JsonCarriesEveryDimension) {
    ParallelLayout l;
    l.dp = 4, l.micro_batch = 2, l.grad_accum = 8, l.recompute = Recompute::selective;
    nlohmann::json j = to_json(l);
    EXPECT_EQ(j["global_batch"], 64);
    EXPECT_EQ(j["checkpointing"], "selective");
    for (const char* key : {"dp", "tp", "pp", "cp", "ep", "vp", "zero", "schedule", "sequence_parallel"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(parse_schedule("interleaved"), PipelineSchedule::interleaved);
    EXPECT_THROW(parse_schedule("zigzag"), Error);
    EXPECT_THROW(parse_recompute("some"), Error);
}

}  // namespace
}  // namespace prenet
