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

TEST(PrecisionRecipe, MatmulsReadHalfPrecisionWeightsUnderMixedPrecision) {
    EXPECT_EQ(precision_recipe(Precision::fp32).matmul_weight_bytes(), fp32_bytes);
    EXPECT_EQ(precision_recipe(Precision::tf32).matmul_weight_bytes(), fp32_bytes);
    for (Precision p : {Precision::fp16, Precision::bf16, Precision::fp8})
        for (MixedRecipe m : {MixedRecipe::autocast, MixedRecipe::half_model}) {
            // Autocast stores fp32 weights but its matmuls read half-precision copies.
            EXPECT_EQ(precision_recipe(p, m).matmul_weight_bytes(), half_bytes) << to_string(p) << " " << to_string(m);
            // fp32 LoRA adapters beside a half-precision base: the matmuls still read half precision.
            EXPECT_EQ(adapter_recipe(precision_recipe(p, m)).matmul_weight_bytes(), half_bytes) << to_string(p);
        }
    EXPECT_EQ(adapter_recipe(precision_recipe(Precision::fp32), true).matmul_weight_bytes(), fp32_bytes);
}

TEST(PrecisionRecipe, ALoraBaseRunsAsAHalfModelUnderMixedPrecision) {
    for (Precision p : {Precision::fp16, Precision::bf16, Precision::fp8}) {
        EXPECT_EQ(effective_mixed_recipe(p, MixedRecipe::autocast, true), MixedRecipe::half_model) << to_string(p);
        EXPECT_EQ(effective_mixed_recipe(p, MixedRecipe::half_model, true), MixedRecipe::half_model) << to_string(p);
    }
    // Full training keeps the recipe asked for; fp32 and tf32 have none to change.
    EXPECT_EQ(effective_mixed_recipe(Precision::bf16, MixedRecipe::autocast, false), MixedRecipe::autocast);
    EXPECT_EQ(effective_mixed_recipe(Precision::fp32, MixedRecipe::autocast, true), MixedRecipe::autocast);
    EXPECT_EQ(effective_mixed_recipe(Precision::tf32, MixedRecipe::autocast, true), MixedRecipe::autocast);
}
