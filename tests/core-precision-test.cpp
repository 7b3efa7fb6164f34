// Precisions and their byte sizes (core/precision.hpp).
#include "core/precision.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

TEST(Precision, NamesRoundTripAndUnknownOnesAreErrors) {
    for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8})
        EXPECT_EQ(parse_precision(to_string(p)), p);
    EXPECT_THROW(parse_precision("fp64"), Error);
    EXPECT_EQ(parse_mixed_recipe(to_string(MixedRecipe::half_model)), MixedRecipe::half_model);
    EXPECT_EQ(parse_mixed_recipe("autocast"), MixedRecipe::autocast);
    EXPECT_THROW(parse_mixed_recipe("apex"), Error);
}

TEST(Precision, AutocastIsHalfPrecisionWithTheAutocastRecipeOnly) {
    EXPECT_TRUE(runs_autocast(Precision::bf16, MixedRecipe::autocast));
    EXPECT_TRUE(runs_autocast(Precision::fp16, MixedRecipe::autocast));
    EXPECT_FALSE(runs_autocast(Precision::bf16, MixedRecipe::half_model));
    EXPECT_FALSE(runs_autocast(Precision::fp32, MixedRecipe::autocast));
    EXPECT_FALSE(runs_autocast(Precision::fp8, MixedRecipe::autocast));  // fp8 is a bf16 model
}

TEST(Precision, BytesPerElement) {
    // TF32 is a matmul mode of fp32 data; fp8 keeps bf16 outside the matmuls.
    EXPECT_EQ(activation_bytes(Precision::tf32), 4);
    EXPECT_EQ(vector_precision(Precision::tf32), Precision::fp32);
    EXPECT_EQ(vector_precision(Precision::fp8), Precision::bf16);
    EXPECT_EQ(activation_bytes(Precision::fp8), 2);
    EXPECT_EQ(matmul_input_bytes(Precision::fp8), 1);
    EXPECT_EQ(matmul_input_bytes(Precision::bf16), 2);
    EXPECT_EQ(weight_bytes(Precision::fp32), 4);
}

}  // namespace
}  // namespace prenet
