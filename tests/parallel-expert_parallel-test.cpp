// parallel/expert_parallel.hpp: the MoE layers' token exchange, and where its group sits.
#include "parallel/expert_parallel.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace prenet
