// Kernels (ops/kernel.hpp): family names and typed shapes.
#include "ops/kernel.hpp"

#include <gtest/gtest.h>

#include "graph/builder.hpp"
#include "ops/catalogue.hpp"

using namespace prenet;

TEST(Kernel, FamilyNamesRoundTrip) {
    for (Family f : {Family::gemm, Family::conv, Family::elementwise, Family::norm, Family::softmax, Family::gather,
                     Family::attention, Family::rnn, Family::pool, Family::optimizer, Family::loss})
        EXPECT_EQ(family_from_string(to_string(f)), f) << to_string(f);
    EXPECT_FALSE(family_from_string("gemmm"));
}

TEST(Kernel, ConvolutionsCarryTheirNamedShape) {
    ModelBuilder b("t", {2, 3, 9, 12}, infer_shape);
    b.add("conv2d", "c", {{"out_channels", 8}, {"kernel_size", {3, 5}}, {"stride", {1, 2}}, {"padding", {1, 2}},
                         {"groups", 1}});
    Model m = b.finish("vision", 0);
    const Layer& l = m.blocks[0].layers[0];
    LayerCost cost = layer_cost(l, Precision::fp32);
    int convs = 0;
    for (const Kernel& k : cost.kernels) {
        if (k.family != Family::conv) {
            EXPECT_FALSE(k.conv) << k.op;
            continue;
        }
        ++convs;
        ASSERT_TRUE(k.conv) << k.op;
        const ConvShape& c = *k.conv;
        EXPECT_EQ(c.n, l.input[0]);
        EXPECT_EQ(c.c, l.input[1]);
        EXPECT_EQ(c.h, l.input[2]);
        EXPECT_EQ(c.w, l.input[3]);
        EXPECT_EQ(c.k, l.output[1]);
        EXPECT_EQ(c.r, 3);
        EXPECT_EQ(c.s, 5);
        EXPECT_EQ(c.stride_h, 1);
        EXPECT_EQ(c.stride_w, 2);
        EXPECT_EQ(c.pad_h, 1);
        EXPECT_EQ(c.pad_w, 2);
        EXPECT_EQ(c.groups, 1);
    }
    EXPECT_EQ(convs, 2);  // forward and weight gradient (the first layer computes no input gradient)
}
