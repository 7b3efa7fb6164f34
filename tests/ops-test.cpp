#include <gtest/gtest.h>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"

using namespace prenet;

TEST(Linear, CountsParamsAndFlops) {
    ModelBuilder b("t", {4, 16});
    b.add("linear", "fc", {{"out_features", 8}});
    Model m = b.finish("custom", 0);
    auto f = compute_features(m, Precision::fp32);
    EXPECT_EQ(f.params, 16 * 8 + 8);
    EXPECT_DOUBLE_EQ(f.macs, 4.0 * 16 * 8);
    // The first layer takes data: no input gradient, only the weight gradient.
    EXPECT_DOUBLE_EQ(f.backward_input_flops, 0);
    EXPECT_DOUBLE_EQ(f.backward_weight_flops, 2.0 * 4 * 16 * 8 + 4 * 8);
}

TEST(Linear, TiedWeightsCountZero) {
    ModelBuilder b("t", {2, 3, 16});
    b.add("linear", "head", {{"out_features", 100}, {"bias", false}, {"tied", true}});
    EXPECT_EQ(compute_features(b.finish("custom", 3), Precision::fp32).params, 0);
}

TEST(Conv, ShapeAndParams) {
    ModelBuilder b("t", {1, 3, 224, 224});
    b.add("conv2d", "conv", {{"out_channels", 64}, {"kernel_size", 7}, {"stride", 2}, {"padding", 3},
                             {"bias", false}});
    EXPECT_EQ(b.shape(), (Shape{1, 64, 112, 112}));
    auto f = compute_features(b.finish("vision", 0), Precision::fp32);
    EXPECT_EQ(f.params, 64 * 3 * 49);
    EXPECT_DOUBLE_EQ(f.macs, 112.0 * 112 * 64 * 3 * 49);
}

TEST(Conv, RejectsBadGroups) {
    ModelBuilder b("t", {1, 6, 8, 8});
    EXPECT_THROW(b.add("conv2d", "c", {{"out_channels", 4}, {"kernel_size", 3}, {"groups", 4}}), Error);
}

TEST(Catalogue, UnknownKindIsAClearError) {
    ModelBuilder b("t", {1, 4});
    try {
        b.add("convolution9d", "x");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown layer type 'convolution9d'"), std::string::npos);
    }
}
