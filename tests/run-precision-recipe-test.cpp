// What each precision and mixed-precision recipe stores (run/precision_recipe.hpp).
#include <gtest/gtest.h>

#include "test-helpers.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "run/optimizer.hpp"
#include "run/precision_recipe.hpp"

using namespace prenet;

TEST(PrecisionRecipe, WhatEachModeStores) {
    PrecisionRecipe fp32 = precision_recipe(Precision::fp32), tf32 = precision_recipe(Precision::tf32);
    for (const auto& r : {fp32, tf32}) {
        EXPECT_FALSE(r.mixed);
        EXPECT_FALSE(r.loss_scaling);
        EXPECT_DOUBLE_EQ(r.weight_bytes + r.master_bytes + r.gradient_bytes, 8.0);
    }
    for (Precision p : {Precision::fp16, Precision::bf16, Precision::fp8}) {
        PrecisionRecipe r = precision_recipe(p, MixedRecipe::half_model);
        EXPECT_TRUE(r.mixed) << to_string(p);
        EXPECT_TRUE(r.half_model) << to_string(p);
        EXPECT_DOUBLE_EQ(r.weight_bytes, 2.0);
        EXPECT_DOUBLE_EQ(r.master_bytes, 4.0);
        EXPECT_DOUBLE_EQ(r.gradient_bytes, 2.0);
        EXPECT_EQ(r.loss_scaling, p == Precision::fp16) << to_string(p);
    }
    // Autocast (the default for fp16 and bf16) keeps fp32 weights and gradients; fp8 is always a bf16 model.
    for (Precision p : {Precision::fp16, Precision::bf16}) {
        PrecisionRecipe r = precision_recipe(p);
        EXPECT_TRUE(r.mixed && !r.half_model) << to_string(p);
        EXPECT_DOUBLE_EQ(r.weight_bytes + r.master_bytes + r.gradient_bytes, 8.0);
    }
    EXPECT_TRUE(precision_recipe(Precision::fp8).half_model);
    // Only fp16 runs the unscale/inf-check pass: read and write every gradient (2 bytes in a half model, 4
    // under autocast).
    auto ks = loss_scaling_kernels(precision_recipe(Precision::fp16, MixedRecipe::half_model), 1000);
    ASSERT_EQ(ks.size(), 1u);
    EXPECT_EQ(ks[0].op, "unscale_inf_check");
    EXPECT_EQ(ks[0].phase, Phase::optimizer);
    EXPECT_DOUBLE_EQ(ks[0].bytes, 4000.0);
    EXPECT_DOUBLE_EQ(loss_scaling_kernels(precision_recipe(Precision::fp16), 1000)[0].bytes, 8000.0);
    EXPECT_TRUE(loss_scaling_kernels(precision_recipe(Precision::bf16), 1000).empty());
    EXPECT_TRUE(loss_scaling_kernels(precision_recipe(Precision::fp32), 1000).empty());
}
