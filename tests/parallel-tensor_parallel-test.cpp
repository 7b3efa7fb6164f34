#include "parallel/tensor_parallel.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "importers/resolve.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

Model gpt2(std::int64_t batch = 2, std::int64_t seq = 128) { return testing::zoo_model("gpt2", batch, seq); }

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

TEST(TensorParallel, OverlapHidesWhatTheFrameworkOverlaps) {
    // 2 ms of collectives forward and 3 backward, 4 ms of matrix work of which 1 ms computes weight gradients.
    EXPECT_DOUBLE_EQ(exposed_tensor_parallel_ms(2, 3, 4, 1, TensorOverlap::none), 5.0);
    EXPECT_DOUBLE_EQ(exposed_tensor_parallel_ms(2, 3, 4, 1, TensorOverlap::weight_gradients), 2.0 + (3.0 - 1.0));
    EXPECT_DOUBLE_EQ(exposed_tensor_parallel_ms(2, 3, 4, 1, TensorOverlap::all_gemms), 5.0 - 4.0);
    EXPECT_DOUBLE_EQ(exposed_tensor_parallel_ms(2, 3, 8, 4, TensorOverlap::weight_gradients), 2.0);  // all hidden
}

}  // namespace
}  // namespace prenet
