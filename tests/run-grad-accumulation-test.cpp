// Gradient accumulation (run/grad_accumulation.hpp): the global batch and the pass each extra micro-batch adds.
#include "run/grad_accumulation.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

TEST(GradAccumulation, TheGlobalBatchIsMicroBatchTimesAccumulationAndChecked) {
    EXPECT_EQ(global_batch(8, 4), 32);
    EXPECT_THROW(global_batch(std::int64_t{1} << 40, std::int64_t{1} << 30), Error);
}

TEST(GradAccumulation, EachExtraMicroBatchReadsTwoGradientsAndWritesOne) {
    PrecisionRecipe fp32 = precision_recipe(Precision::fp32);
    Kernel k = gradient_accumulation_kernel(fp32, 1000);
    EXPECT_EQ(k.family, Family::elementwise);
    EXPECT_EQ(k.phase, Phase::backward_weight);
    EXPECT_DOUBLE_EQ(k.bytes, 3 * 4 * 1000.0);
    EXPECT_DOUBLE_EQ(k.flops, 1000.0);
    // A half-precision model accumulates half-precision gradients.
    Kernel half = gradient_accumulation_kernel(precision_recipe(Precision::bf16, MixedRecipe::half_model), 1000);
    EXPECT_DOUBLE_EQ(half.bytes, 3 * 2 * 1000.0);
}

}  // namespace
}  // namespace prenet
