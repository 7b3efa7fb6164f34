// ops/mlp.hpp: a feed-forward block's parameters and projections, gated (SwiGLU) or not.
#include "ops/mlp.hpp"

#include <gtest/gtest.h>

namespace prenet {
namespace {

TEST(Mlp, ParamsOfTheUpAndDownProjections) {
    MlpShape s;
    s.hidden = 8, s.intermediate = 32;
    EXPECT_EQ(mlp_params(s), 8 * 32 + 32 * 8 + 32 + 8);
    s.bias = false;
    EXPECT_EQ(mlp_params(s), 2 * 8 * 32);
    s.gated = true;  // a gate beside the up projection
    EXPECT_EQ(mlp_params(s), 3 * 8 * 32);
}

TEST(Mlp, AGatedBlockHasAGateAndOnlyTheDownProjectionSkipsTheInput) {
    MlpShape s;
    s.hidden = 8, s.intermediate = 32, s.gated = true;
    std::vector<LinearModule> m = mlp_modules(s, 4, 2, true);
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m[0].target, "gate");
    EXPECT_EQ(m[2].target, "down");
    EXPECT_TRUE(m[1].reads_layer_input);
    EXPECT_FALSE(m[2].reads_layer_input);
    s.gated = false;
    EXPECT_EQ(mlp_modules(s, 4, 1, false).size(), 2u);
}

}  // namespace
}  // namespace prenet
