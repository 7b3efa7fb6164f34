// parallel/expert_parallel.hpp: the MoE layers' token exchange, and where its group sits.
#include "parallel/expert_parallel.hpp"

#include <gtest/gtest.h>

#include "importers/resolve.hpp"
#include "parallel/tensor_parallel.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

TEST(ExpertParallel, KeepsTheWorkAndShardsTheExperts) {
    Model mixtral = testing::zoo_model("mixtral-8x7b", 1, 256);
    ParallelLayout l;
    l.dp = 4, l.ep = 4;
    ModelFeatures whole = compute_features(mixtral, Precision::bf16);
    ModelFeatures shard = compute_features(shard_model(mixtral, l), Precision::bf16);
    EXPECT_LT(shard.params, whole.params / 3);
    EXPECT_NEAR(shard.forward_flops / whole.forward_flops, 1.0, 0.02);  // tokens evenly routed: same work
    // Dispatch and combine, forward and backward: of top_k x tokens x hidden each.
    auto ops = expert_parallel_comms(shard, l, Precision::bf16);
    ASSERT_EQ(ops.size(), 2u);
    const double volume = 2.0 /*top_k*/ * 256 * 4096 * 2 /*bf16*/;
    for (const auto& op : ops) {
        EXPECT_EQ(op.op, Collective::all_to_all);
        EXPECT_DOUBLE_EQ(op.bytes, volume);
        EXPECT_EQ(op.count, 2.0 * 32);  // two per MoE layer, 32 layers
        EXPECT_EQ(op.group.size, 4);
    }
}

TEST(ExpertParallel, ExpertsSpanningTheTensorRanksStayWholeAndRouteEachRanksTokens) {
    Model mixtral = testing::zoo_model("mixtral-8x7b", 1, 256);
    ParallelLayout l;
    l.tp = 4, l.ep = 8, l.dp = 2, l.sequence_parallel = true;  // ep 8 over the 4 x 2 tp x dp ranks
    ASSERT_EQ(l.expert_tp(), 1);
    ModelFeatures whole = compute_features(mixtral, Precision::bf16);
    ModelFeatures shard = compute_features(shard_model(mixtral, l), Precision::bf16);
    auto moe_params = [](const ModelFeatures& f) {
        double n = 0;
        for (const auto& lf : f.layers)
            if (lf.layer.kind == "moe") n += double(lf.repeat) * double(lf.cost.params);
        return n;
    };
    // One whole expert per device (8 over 8), against a quarter of each of two experts with ep 2 inside dp.
    EXPECT_NEAR(moe_params(shard) / moe_params(whole), 1.0 / 8.0, 0.01);
    auto ops = expert_parallel_comms(shard, l, Precision::bf16);
    ASSERT_EQ(ops.size(), 2u);
    EXPECT_EQ(ops[0].group.size, 8);
    EXPECT_EQ(ops[0].group.run, 4);  // the group starts with the tp ranks: runs of 4 adjacent ranks
    EXPECT_EQ(ops[0].group.run_stride, 1);
    EXPECT_EQ(ops[0].group.stride, 4);  // a data-parallel rank apart
    EXPECT_DOUBLE_EQ(ops[0].bytes, 2.0 * (256 / 4) * 4096 * 2);  // each tp rank's quarter of the tokens, top-2
    // No tensor-parallel collectives around the MoE layers, only around attention (and embedding, output).
    int moe_like = 0;
    for (const auto& op : tensor_parallel_comms(shard, l, Precision::bf16)) moe_like += op.count == 32.0;
    EXPECT_EQ(moe_like, 4);  // attention: an all-gather and a reduce-scatter each way, 32 layers
}

TEST(ExpertParallel, ExpertsSpanningTheTensorRanksWithContextParallelismLieInRunsOfTp) {
    // Megatron order tp, cp, dp, pp. tp 4, cp 2, dp 2, ep 8 (the 4 tp x 2 dp ranks): the group is ranks 0-3 and
    // 8-11 (ranks 4-7 are the second cp rank), so on nodes of 8 it spans two nodes, four members each.
    ParallelLayout l;
    l.tp = 4, l.cp = 2, l.dp = 2, l.ep = 8, l.sequence_parallel = true;
    ASSERT_EQ(l.expert_tp(), 1);
    Model mixtral = testing::zoo_model("mixtral-8x7b", 1, 128);
    auto ops = expert_parallel_comms(compute_features(shard_model(mixtral, l), Precision::bf16), l, Precision::bf16);
    ASSERT_FALSE(ops.empty());
    Cluster nodes_of_8;
    nodes_of_8.gpus = 16;
    nodes_of_8.gpus_per_node = nodes_of_8.scale_up_domain = 8;
    GroupSpan span = group_span(ops[0].group, nodes_of_8);
    EXPECT_EQ(span.per_domain, 4);
    EXPECT_EQ(span.domains, 2);
}

// The all-to-alls of one device's micro-batch of a Hugging Face config's model, `tokens` tokens, bf16, over
// `ep` ranks carved from as many data-parallel ones.
std::vector<CommOp> hf_expert_comms(const std::string& config, std::int64_t tokens, std::int64_t ep) {
    Model model = resolve_model(testing::source_json("tests/fixtures/hf/" + config), {1, tokens, 0});
    ParallelLayout l;
    l.dp = l.ep = ep;
    return expert_parallel_comms(compute_features(shard_model(model, l), Precision::bf16), l, Precision::bf16);
}

TEST(ExpertParallel, MixtralMovesTokensTimesTopKTimesHiddenEachWayAndPass) {
    // Mixtral-8x7B (hidden 4096, 8 experts, top-2, 32 MoE layers), 4096 tokens, bf16, ep 8. Each all-to-all sends
    // every token's 2 routed copies of 4096 x 2 bytes: 4096 x 2 x 4096 x 2 = 67,108,864 bytes per device; 7/8 of
    // it (58,720,256) to the 7 other ranks, 1/8 to the device's own experts. Dispatch and combine, 32 layers: 64
    // forward and 64 backward, 128 x 64 MiB = 8 GiB per micro-batch, 7 GiB leaving the device.
    auto ops = hf_expert_comms("mixtral-8x7b-v0.1.json", 4096, 8);
    ASSERT_EQ(ops.size(), 2u);
    double sent = 0, leaving = 0;
    for (const auto& op : ops) {
        EXPECT_EQ(op.op, Collective::all_to_all);
        EXPECT_DOUBLE_EQ(op.bytes, 67108864.0);
        EXPECT_EQ(op.count, 64.0);
        EXPECT_FALSE(op.fanout.limited());  // Mixtral routes over all its experts
        sent += op.count * op.bytes;
        leaving += op.count * op.bytes * bus_factor(op.op, op.group.size);
    }
    EXPECT_TRUE(ops[1].backward && !ops[0].backward);
    EXPECT_DOUBLE_EQ(sent, 8.0 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(leaving, 7.0 * 1024 * 1024 * 1024);
}

TEST(ExpertParallel, DeepSeekV3RoutesEightOfItsRoutedExpertsNotItsSharedOne) {
    // DeepSeek-V3 (hidden 7168, 256 routed experts top-8, 1 shared expert, the first 3 of 61 layers dense):
    // 58 MoE layers. 4096 tokens, bf16, ep 64: 4096 x 8 x 7168 x 2 = 469,762,048 bytes per all-to-all (the
    // shared expert runs on every rank's own tokens and sends nothing), 2 x 58 = 116 a pass; 63/64 leave the
    // device. Its routing: at most topk_group 4 of n_group 8 groups of 32 experts.
    auto ops = hf_expert_comms("deepseek-v3.json", 4096, 64);
    ASSERT_EQ(ops.size(), 2u);
    for (const auto& op : ops) {
        EXPECT_DOUBLE_EQ(op.bytes, 469762048.0);
        EXPECT_EQ(op.count, 116.0);
        EXPECT_EQ(op.group.size, 64);
        EXPECT_DOUBLE_EQ(op.fanout.copies, 8.0);
        EXPECT_EQ(op.fanout.blocks, 8);
        EXPECT_EQ(op.fanout.blocks_per_item, 4);
        EXPECT_DOUBLE_EQ(op.bytes * bus_factor(op.op, op.group.size), 462422016.0);  // 63/64 leave
    }
}

TEST(ExpertParallel, OverlapHidesTheAllToAllsBehindAMicroBatchsCompute) {
    // none: exposed whole; full: only what exceeds the compute it runs beside.
    EXPECT_DOUBLE_EQ(expert_parallel_exposed_ms(30.0, 50.0, ExpertOverlap::none), 30.0);
    EXPECT_DOUBLE_EQ(expert_parallel_exposed_ms(30.0, 50.0, ExpertOverlap::full), 0.0);
    EXPECT_DOUBLE_EQ(expert_parallel_exposed_ms(80.0, 50.0, ExpertOverlap::full), 30.0);
    EXPECT_EQ(parse_expert_overlap("full"), ExpertOverlap::full);
    EXPECT_STREQ(to_string(parse_expert_overlap("none")), "none");
    EXPECT_THROW(parse_expert_overlap("half"), Error);
}

}  // namespace
}  // namespace prenet
