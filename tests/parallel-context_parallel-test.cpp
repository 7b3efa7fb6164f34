// parallel/context_parallel.hpp: ring attention's sends.
#include "parallel/context_parallel.hpp"

#include <gtest/gtest.h>

#include "parallel/tensor_parallel.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

TEST(ContextParallel, AttendsOverEveryShardsKeys) {
    ParallelLayout l;
    l.cp = 2;
    ModelFeatures half = compute_features(shard_model(testing::zoo_model("gpt2", 2, 64), l), Precision::bf16);
    ModelFeatures half_alone = compute_features(testing::zoo_model("gpt2", 2, 64), Precision::bf16);
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
