#include "parallel/tensor_parallel.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "importers/resolve.hpp"
#include "parallel/collectives.hpp"

namespace prenet {
namespace {

Model model(const char* id, std::int64_t batch, std::int64_t seq) {
    ModelInputs in;
    in.batch = batch;
    in.seq = seq;
    return resolve_model(id, in);
}

Model gpt2(std::int64_t batch = 2, std::int64_t seq = 128) { return model("gpt2", batch, seq); }

std::int64_t block_params(const ModelFeatures& f) {
    std::int64_t n = 0;
    for (const auto& lf : f.layers)
        if (!lf.block.empty()) n += lf.repeat * lf.cost.params;
    return n;
}

TEST(TensorParallel, ModelShapeReadsHeadsBlocksAndExperts) {
    ModelShape s = model_shape(gpt2());
    EXPECT_EQ(s.heads, 12);
    EXPECT_EQ(s.blocks, 12);
    EXPECT_EQ(s.experts, 0);
    EXPECT_EQ(model_shape(resolve_model("mixtral-8x7b", {})).experts, 8);
}

TEST(TensorParallel, BlocksHoldATpthOfTheirParametersAndFlops) {
    ModelFeatures whole = compute_features(gpt2(), Precision::bf16);
    ParallelLayout l;
    l.tp = 4;
    ModelFeatures shard = compute_features(shard_model(gpt2(), l), Precision::bf16);
    // Biases of the row-parallel output projections and the norms stay whole: a little over a quarter.
    double ratio = double(block_params(shard)) / double(block_params(whole));
    EXPECT_GT(ratio, 0.25);
    EXPECT_LT(ratio, 0.26);
    EXPECT_LT(shard.forward_flops, 0.3 * whole.forward_flops);
    EXPECT_GT(shard.forward_flops, 0.25 * whole.forward_flops);
}

TEST(TensorParallel, SequenceParallelShrinksTheReplicatedLayersOnly) {
    ParallelLayout l;
    l.tp = 4;
    ModelFeatures plain = compute_features(shard_model(gpt2(), l), Precision::bf16);
    l.sequence_parallel = true;
    ModelFeatures sp = compute_features(shard_model(gpt2(), l), Precision::bf16);
    EXPECT_LT(sp.saved_activation_bytes, plain.saved_activation_bytes);
    EXPECT_EQ(sp.params, plain.params);
}

TEST(TensorParallel, TwoAllReducesPerBlockEachWayOfTheActivations) {
    ParallelLayout l;
    l.tp = 2;
    ModelFeatures f = compute_features(shard_model(gpt2(2, 128), l), Precision::bf16);
    auto ops = tensor_parallel_comms(f, l, Precision::bf16);
    double block_forward = 0, block_backward = 0;
    const double activation = 2.0 * 128 * 768 * 2;  // batch x tokens x hidden x bf16
    for (const auto& op : ops)
        if (op.op == Collective::all_reduce && op.bytes == activation) (op.backward ? block_backward : block_forward) += op.count;
    // Attention and MLP per block, 12 blocks; forward also the vocab-parallel embedding; backward the head's input.
    EXPECT_EQ(block_forward, 2 * 12 + 1);
    EXPECT_EQ(block_backward, 2 * 12 + 1);
    for (const auto& op : ops) EXPECT_EQ(op.group.size, 2);
    EXPECT_TRUE(tensor_parallel_comms(f, ParallelLayout{}, Precision::bf16).empty());
}

TEST(TensorParallel, SequenceParallelTradesEachAllReduceForAGatherAndAScatter) {
    ParallelLayout l;
    l.tp = 2, l.sequence_parallel = true;
    ModelFeatures f = compute_features(shard_model(gpt2(), l), Precision::bf16);
    int gathers = 0, scatters = 0, reduces = 0;
    for (const auto& op : tensor_parallel_comms(f, l, Precision::bf16)) {
        gathers += op.op == Collective::all_gather;
        scatters += op.op == Collective::reduce_scatter;
        reduces += op.op == Collective::all_reduce && op.bytes > 1e5;
    }
    EXPECT_GT(gathers, 0);
    EXPECT_GT(scatters, 0);
    EXPECT_EQ(reduces, 0);
}

TEST(TensorParallel, HeadsThatDoNotSplitAreAnErrorNamingTp) {
    ParallelLayout l;
    l.tp = 5;
    try {
        shard_model(gpt2(), l);
        FAIL() << "tp 5 split 12 heads";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "tp");
    }
}

TEST(TensorParallel, ExpertParallelKeepsTheWorkAndShardsTheExperts) {
    Model mixtral = model("mixtral-8x7b", 1, 256);
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

TEST(TensorParallel, ExpertsSpanningTheTensorRanksStayWholeAndRouteEachRanksTokens) {
    Model mixtral = model("mixtral-8x7b", 1, 256);
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

TEST(TensorParallel, ExpertsSpanningTheTensorRanksWithContextParallelismLieInRunsOfTp) {
    // Megatron order tp, cp, dp, pp. tp 4, cp 2, dp 2, ep 8 (the 4 tp x 2 dp ranks): the group is ranks 0-3 and
    // 8-11 (ranks 4-7 are the second cp rank), so on nodes of 8 it spans two nodes, four members each.
    ParallelLayout l;
    l.tp = 4, l.cp = 2, l.dp = 2, l.ep = 8, l.sequence_parallel = true;
    ASSERT_EQ(l.expert_tp(), 1);
    Model mixtral = model("mixtral-8x7b", 1, 128);
    auto ops = expert_parallel_comms(compute_features(shard_model(mixtral, l), Precision::bf16), l, Precision::bf16);
    ASSERT_FALSE(ops.empty());
    Cluster nodes_of_8;
    nodes_of_8.gpus = 16;
    nodes_of_8.gpus_per_node = nodes_of_8.scale_up_domain = 8;
    GroupSpan span = group_span(ops[0].group, nodes_of_8);
    EXPECT_EQ(span.per_domain, 4);
    EXPECT_EQ(span.domains, 2);
}

TEST(TensorParallel, ContextParallelAttendsOverEveryShardsKeys) {
    ParallelLayout l;
    l.cp = 2;
    ModelFeatures half = compute_features(shard_model(gpt2(2, 64), l), Precision::bf16);
    ModelFeatures half_alone = compute_features(gpt2(2, 64), Precision::bf16);
    EXPECT_GT(half.forward_flops, half_alone.forward_flops);  // queries of 64 tokens against keys of 128
    auto ops = context_parallel_comms(half, l, Precision::bf16);
    ASSERT_EQ(ops.size(), 2u);  // forward and backward, each (cp - 1) sends per layer of the 12
    EXPECT_EQ(ops[0].count, 12.0);
    EXPECT_EQ(ops[0].op, Collective::send_recv);
    EXPECT_DOUBLE_EQ(ops[0].bytes, 2.0 * 2 * 64 * 768 * 2);  // keys and values of the local tokens
    EXPECT_DOUBLE_EQ(ops[1].bytes, 2.0 * ops[0].bytes);     // backward: and their gradients
}

}  // namespace
}  // namespace prenet
