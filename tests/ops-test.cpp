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

namespace {

// Token embedding, one pre-norm block (layernorm, linear, gelu, linear, residual add) and a head.
Model tiny_lm() {
    ModelBuilder b("tiny", {2, 16});
    b.add("embedding", "tokens", {{"num_embeddings", 100}, {"embedding_dim", 32}});
    b.begin_block("layers", 1);
    b.add("layernorm", "ln");
    b.add("linear", "up", {{"out_features", 64}});
    b.add("activation", "act", {{"function", "gelu"}});
    b.add("linear", "down", {{"out_features", 32}});
    b.add("residual_add", "res");
    b.end_block();
    b.add("linear", "head", {{"out_features", 100}});
    return b.finish("language", 16);
}

const LayerFeatures& layer_named(const ModelFeatures& f, const std::string& name) {
    for (const auto& lf : f.layers)
        if (lf.layer.name == name) return lf;
    throw Error("no layer " + name);
}

bool has_kernel(const LayerFeatures& lf, const std::string& op) {
    for (const auto& k : lf.cost.kernels)
        if (k.op == op) return true;
    return false;
}

}  // namespace

// Autocast runs the layernorm in fp32 on the fp32 residual stream the embedding starts, casts what the
// matmuls read, and keeps 2-byte weight copies; the half-precision model does none of that.
TEST(Autocast, Fp32NormsCastsAndWeightCopies) {
    Model m = tiny_lm();
    ModelFeatures half = compute_features(m, Precision::bf16, MixedRecipe::half_model);
    ModelFeatures autocast = compute_features(m, Precision::bf16, MixedRecipe::autocast);
    const double tokens = 2 * 16;
    EXPECT_DOUBLE_EQ(layer_named(half, "ln").cost.saved_activation_bytes, tokens * 32 * 2);
    EXPECT_DOUBLE_EQ(layer_named(autocast, "ln").cost.saved_activation_bytes, tokens * 32 * 4);
    EXPECT_EQ(layer_named(autocast, "ln").cost.kernels.front().precision, Precision::fp32);
    // The first matmul after the fp32 norm casts its input; the second reads the gelu's bf16 output.
    EXPECT_TRUE(has_kernel(layer_named(autocast, "up"), "autocast_input_cast"));
    EXPECT_FALSE(has_kernel(layer_named(autocast, "down"), "autocast_input_cast"));
    EXPECT_TRUE(has_kernel(layer_named(autocast, "up"), "autocast_weight_cast"));
    EXPECT_TRUE(has_kernel(layer_named(autocast, "up"), "autocast_weight_grad_cast"));
    EXPECT_FALSE(has_kernel(layer_named(half, "up"), "autocast_weight_cast"));
    // A residual add on the fp32 stream reads and writes fp32.
    EXPECT_EQ(layer_named(autocast, "res").cost.kernels.front().precision, Precision::fp32);
    EXPECT_EQ(layer_named(half, "res").cost.kernels.front().precision, Precision::bf16);
    // The weight copies: every matmul weight (not the embedding) at 2 bytes.
    double matmul_params = (32 * 64 + 64) + (64 * 32 + 32) + (32 * 100 + 100);
    EXPECT_DOUBLE_EQ(autocast.half_weight_copy_bytes, 2 * matmul_params);
    EXPECT_DOUBLE_EQ(half.half_weight_copy_bytes, 0);
    // fp32 has nothing to cast.
    EXPECT_DOUBLE_EQ(compute_features(m, Precision::fp32).half_weight_copy_bytes, 0);
}
