#include <gtest/gtest.h>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"

using namespace prenet;

TEST(Linear, CountsParamsAndFlops) {
    ModelBuilder b("t", {4, 16}, infer_shape);
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
    ModelBuilder b("t", {2, 3, 16}, infer_shape);
    b.add("linear", "head", {{"out_features", 100}, {"bias", false}, {"tied", true}});
    EXPECT_EQ(compute_features(b.finish("custom", 3), Precision::fp32).params, 0);
}

TEST(Conv, ShapeAndParams) {
    ModelBuilder b("t", {1, 3, 224, 224}, infer_shape);
    b.add("conv2d", "conv", {{"out_channels", 64}, {"kernel_size", 7}, {"stride", 2}, {"padding", 3},
                             {"bias", false}});
    EXPECT_EQ(b.shape(), (Shape{1, 64, 112, 112}));
    auto f = compute_features(b.finish("vision", 0), Precision::fp32);
    EXPECT_EQ(f.params, 64 * 3 * 49);
    EXPECT_DOUBLE_EQ(f.macs, 112.0 * 112 * 64 * 3 * 49);
}

TEST(Conv, RejectsBadGroups) {
    ModelBuilder b("t", {1, 6, 8, 8}, infer_shape);
    EXPECT_THROW(b.add("conv2d", "c", {{"out_channels", 4}, {"kernel_size", 3}, {"groups", 4}}), Error);
}

namespace {

double kernel_bytes(const LayerCost& cost, Phase phase) {
    double bytes = 0;
    for (const auto& k : cost.kernels)
        if (k.phase == phase) bytes += k.bytes;
    return bytes;
}

}  // namespace

// Training batch norm: statistics then normalise (read x twice, write y); its backward reduces x and dy once,
// which also gives the weight gradient, then reads them again to write dx: 3 + 5 passes in all.
TEST(BatchNorm, ForwardThreePassesBackwardFive) {
    ModelBuilder b("t", {8, 16, 10, 10}, infer_shape);
    b.add("conv2d", "conv", {{"out_channels", 16}, {"kernel_size", 1}});
    b.add("batchnorm", "bn");
    auto f = compute_features(b.finish("vision", 0), Precision::fp16);
    const LayerCost& bn = f.layers[1].cost;
    const double pass = 8.0 * 16 * 10 * 10 * 2;
    EXPECT_DOUBLE_EQ(kernel_bytes(bn, Phase::forward), 3 * pass);
    EXPECT_DOUBLE_EQ(kernel_bytes(bn, Phase::backward_input), 3 * pass);
    EXPECT_DOUBLE_EQ(kernel_bytes(bn, Phase::backward_weight), 2 * pass);
}

// The residual add passes its gradient through, but the block input reached the add and the branch, so
// autograd sums two gradients there: one backward pass reading two tensors and writing one.
TEST(ResidualAdd, BackwardSumsTheTwoGradients) {
    ModelBuilder b("t", {4, 32}, infer_shape);
    b.add("linear", "fc", {{"out_features", 32}});
    b.add("residual_add", "res");
    auto f = compute_features(b.finish("custom", 0), Precision::fp32);
    const LayerCost& add = f.layers[1].cost;
    EXPECT_DOUBLE_EQ(kernel_bytes(add, Phase::forward), 3 * 4 * 32 * 4);
    EXPECT_DOUBLE_EQ(kernel_bytes(add, Phase::backward_input), 3 * 4 * 32 * 4);
    EXPECT_EQ(add.kernels.back().op, "residual_gradient_sum");
}

namespace {

// Token embedding, one pre-norm block (layernorm, linear, gelu, linear, residual add) and a head.
Model tiny_lm() {
    ModelBuilder b("tiny", {2, 16}, infer_shape);
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

namespace {

Model one_attention_block(const std::string& projections) {
    ModelBuilder b("t", {2, 8}, infer_shape);
    b.add("embedding", "tokens", {{"num_embeddings", 50}, {"embedding_dim", 32}});
    b.add("layernorm", "ln");
    b.add("attention", "attn", {{"heads", 4}, {"projections", projections}});
    b.add("residual_add", "res");
    return b.finish("language", 8);
}

int count_kernels(const LayerFeatures& lf, const std::string& op) {
    int n = 0;
    for (const auto& k : lf.cost.kernels) n += k.op == op;
    return n;
}

}  // namespace

// Separate query, key and value linears: three GEMMs reading the input, whose three input gradients autograd
// sums (two passes); under autocast each linear casts the fp32 input (and its gradient back) and saves its copy.
TEST(Attention, SeparateProjectionsSumTheirInputGradients) {
    ModelFeatures fused = compute_features(one_attention_block("fused"), Precision::fp32);
    ModelFeatures separate = compute_features(one_attention_block("separate"), Precision::fp32);
    const LayerFeatures& f = layer_named(fused, "attn");
    const LayerFeatures& s = layer_named(separate, "attn");
    EXPECT_EQ(count_kernels(f, "qkv_proj"), 1);
    EXPECT_EQ(count_kernels(s, "qkv_proj"), 0);
    EXPECT_EQ(count_kernels(s, "q_proj") + count_kernels(s, "k_proj") + count_kernels(s, "v_proj"), 3);
    EXPECT_EQ(count_kernels(f, "input_gradient_sum"), 0);
    EXPECT_EQ(count_kernels(s, "input_gradient_sum"), 2);
    EXPECT_EQ(separate.params, fused.params);
    EXPECT_DOUBLE_EQ(separate.forward_flops, fused.forward_flops);
    const double n = 2 * 8 * 32;
    for (const auto& k : s.cost.kernels)
        if (k.op == "input_gradient_sum") EXPECT_DOUBLE_EQ(k.bytes, 3 * n * 4);

    ModelFeatures amp_fused = compute_features(one_attention_block("fused"), Precision::bf16);
    ModelFeatures amp = compute_features(one_attention_block("separate"), Precision::bf16);
    const LayerFeatures& a = layer_named(amp, "attn");
    EXPECT_EQ(count_kernels(a, "autocast_input_cast"), 3);
    EXPECT_EQ(count_kernels(a, "autocast_input_cast_backward"), 3);
    EXPECT_EQ(count_kernels(layer_named(amp_fused, "attn"), "autocast_input_cast_backward"), 1);
    for (const auto& k : a.cost.kernels)
        if (k.op == "input_gradient_sum") EXPECT_EQ(k.precision, Precision::fp32);  // the fp32 residual stream
    EXPECT_DOUBLE_EQ(a.cost.saved_activation_bytes - layer_named(amp_fused, "attn").cost.saved_activation_bytes,
                     2 * n * 2);
}

TEST(Attention, UnknownProjectionsIsAnError) {
    EXPECT_THROW(one_attention_block("merged"), Error);
}

// A bias costs passes of its own in eager PyTorch: the bias gradient sums the output gradient over rows, and a
// convolution's bias is added after cuDNN's convolution. A GEMM's forward bias rides in its epilogue.
TEST(Bias, GradientReductionAndConvolutionBiasAdd) {
    ModelBuilder lb("t", {6, 16}, infer_shape);
    lb.add("linear", "fc", {{"out_features", 8}});
    lb.add("linear", "nobias", {{"out_features", 8}, {"bias", false}});
    ModelFeatures lf = compute_features(lb.finish("custom", 0), Precision::fp32);
    EXPECT_EQ(count_kernels(layer_named(lf, "fc"), "linear_bias_grad"), 1);
    EXPECT_EQ(count_kernels(layer_named(lf, "nobias"), "linear_bias_grad"), 0);
    for (const auto& k : layer_named(lf, "fc").cost.kernels)
        if (k.op == "linear_bias_grad") {
            EXPECT_EQ(k.phase, Phase::backward_weight);
            EXPECT_DOUBLE_EQ(k.bytes, 6 * 8 * 4 + 8 * 4);
        }

    ModelBuilder cb("t", {2, 3, 8, 8}, infer_shape);
    cb.add("conv2d", "conv", {{"out_channels", 4}, {"kernel_size", 3}, {"padding", 1}});
    ModelFeatures cf = compute_features(cb.finish("vision", 0), Precision::fp32);
    const LayerFeatures& conv = cf.layers[0];
    EXPECT_EQ(count_kernels(conv, "conv2d_bias_add"), 1);
    EXPECT_EQ(count_kernels(conv, "conv2d_bias_grad"), 1);
    for (const auto& k : conv.cost.kernels)
        if (k.op == "conv2d_bias_add") EXPECT_DOUBLE_EQ(k.bytes, 2.0 * 2 * 4 * 8 * 8 * 4);
}

// Eager attention's element-wise passes as autograd runs them: the scale's gradient is one scaling pass, an
// additive mask has no gradient pass, dropout writes and reads a one-byte mask.
TEST(Attention, EagerScoreMaskAndDropoutPasses) {
    ModelBuilder b("t", {2, 8, 32}, infer_shape);
    b.add("attention", "attn", {{"heads", 4}, {"dropout", 0.1}});
    Model m = b.finish("language", 8);
    ModelFeatures f = compute_features(m, Precision::fp32);
    const LayerFeatures& attn = layer_named(f, "attn");
    const double scores = 2.0 * 4 * 8 * 8;
    EXPECT_EQ(count_kernels(attn, "attention_mask"), 1);
    EXPECT_EQ(count_kernels(attn, "attention_mask_backward"), 0);
    for (const auto& k : attn.cost.kernels) {
        if (k.op == "attention_scale_backward") EXPECT_DOUBLE_EQ(k.bytes, 2 * scores * 4);
        if (k.op == "attention_dropout" || k.op == "attention_dropout_backward")
            EXPECT_DOUBLE_EQ(k.bytes, scores * (2 * 4 + 1));
    }
    // Under autocast the fp32 probabilities are cast to bf16 for the context product, and the gradient back.
    ModelFeatures amp = compute_features(m, Precision::bf16);
    int casts = 0;
    for (const auto& k : layer_named(amp, "attn").cost.kernels)
        if (k.op == "probabilities_cast" || k.op == "probabilities_cast_backward") {
            EXPECT_DOUBLE_EQ(k.bytes, scores * (4 + 2));
            ++casts;
        }
    EXPECT_EQ(casts, 2);
}

// An op on autocast's fp32 list that receives a half-precision tensor (the loss on a linear's logits) casts it
// to fp32 and its gradient back; one reading the fp32 residual stream (the layer norm) casts nothing.
TEST(Autocast, Fp32ListOpsCastTheirHalfInput) {
    ModelBuilder b("t", {2, 16}, infer_shape);
    b.add("embedding", "tokens", {{"num_embeddings", 100}, {"embedding_dim", 32}});
    b.add("layernorm", "ln");
    b.add("linear", "head", {{"out_features", 100}});
    b.add("cross_entropy", "loss");
    ModelFeatures f = compute_features(b.finish("language", 16), Precision::fp16);
    EXPECT_EQ(count_kernels(layer_named(f, "loss"), "autocast_fp32_input_cast"), 1);
    EXPECT_EQ(count_kernels(layer_named(f, "loss"), "autocast_fp32_input_cast_backward"), 1);
    EXPECT_EQ(count_kernels(layer_named(f, "ln"), "autocast_fp32_input_cast"), 0);
    for (const auto& k : layer_named(f, "loss").cost.kernels)
        if (k.op == "autocast_fp32_input_cast") EXPECT_DOUBLE_EQ(k.bytes, 2 * 16 * 100 * (2 + 4));
}

// The parameters meet the limit on one tensor's elements (2^53) in compute_features, which features and predict
// both run: a linear of 2^31 x 2^31 (2^62 weights) was 4.6e18 parameters in features, refused only by predict's
// optimizer kernel. 2^26 x 2^26 (2^52 + 2^26) is within it.
TEST(Features, ParametersMeetTheTensorLimit) {
    auto linear = [](std::int64_t in, std::int64_t out) {
        ModelBuilder b("big", {1, in}, infer_shape);
        b.add("linear", "fc", {{"out_features", out}});
        return b.finish("custom", 0);
    };
    EXPECT_EQ(compute_features(linear(1 << 26, 1 << 26), Precision::fp32).params, (1LL << 52) + (1LL << 26));
    try {
        compute_features(linear(1LL << 31, 1LL << 31), Precision::fp32);
        ADD_FAILURE() << "2^62 parameters were accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("4611686020574871552 parameters, over the limit of 9007199254740992"),
                  std::string::npos) << e.what();
    }
}

// Cross-attention from a source of another width (a UNet's 320 channels reading 768-wide text states): to_k and
// to_v are 768 x 320; a frozen source (kv_input_grad false) gets no input gradient from them.
TEST(Attention, CrossAttentionSourceOfItsOwnWidth) {
    auto build = [](bool source_grad) {
        ModelBuilder b("t", {2, 64, 320}, infer_shape);
        b.add("layernorm", "ln");
        b.add("attention", "attn2", {{"heads", 8}, {"projections", "separate"}, {"bias", false}, {"out_bias", true},
                                     {"cross", true}, {"kv_tokens", 77}, {"kv_hidden", 768},
                                     {"kv_input_grad", source_grad}});
        return compute_features(b.finish("custom", 0), Precision::fp32);
    };
    ModelFeatures f = build(true), frozen_source = build(false);
    EXPECT_EQ(f.params, 640 + 320 * 320 + 2 * 768 * 320 + 320 * 320 + 320);
    EXPECT_DOUBLE_EQ(f.backward_input_flops - frozen_source.backward_input_flops, 2.0 * 2 * 77 * 768 * 640);
    ModelBuilder b("t", {2, 64, 320}, infer_shape);
    EXPECT_THROW(b.add("attention", "self", {{"heads", 8}, {"kv_hidden", 768}}), Error);  // no source to be wide
}

TEST(LayerNorm, WithoutAffineHasNoParametersOrWeightGradient) {
    ModelBuilder b("t", {2, 16, 64}, infer_shape);
    b.add("linear", "fc", {{"out_features", 64}});
    b.add("layernorm", "ln", {{"affine", false}});
    ModelFeatures f = compute_features(b.finish("custom", 0), Precision::fp32);
    EXPECT_EQ(f.layers[1].cost.params, 0);
    EXPECT_EQ(f.layers[1].cost.backward_weight_flops, 0.0);
    EXPECT_GT(f.layers[1].cost.backward_input_flops, 0.0);
}

// A model's frozen component (a diffusion pipeline's encoder) trains nothing and, ahead of what trains, runs
// forward only, with fine-tuning mode none as with LoRA, and gets no adapters.
TEST(FrozenComponent, RunsForwardOnlyAndGetsNoAdapters) {
    ModelBuilder b("t", {2, 16, 64}, infer_shape);
    b.add("attention", "encoder", {{"heads", 4}, {"projections", "separate"}});
    b.add("attention", "denoiser", {{"heads", 4}, {"projections", "separate"}});
    Model m = b.finish("custom", 0);
    m.blocks[0].layers[0].frozen_component = true;
    ModelFeatures f = compute_features(m, Precision::fp32);
    const std::int64_t attention = 4 * (64 * 64 + 64);
    EXPECT_EQ(f.params, 2 * attention);
    EXPECT_EQ(f.trainable_params, attention);
    EXPECT_FALSE(f.layers[0].runs_backward);
    EXPECT_EQ(f.layers[0].cost.saved_activation_bytes, 0.0);
    EXPECT_TRUE(f.layers[1].runs_backward);
    FineTune ft;
    ft.mode = FineTuneMode::lora;
    ft.targets = {"q", "v"};
    ModelFeatures lora = compute_features(m, Precision::fp32, MixedRecipe::autocast, ft);
    EXPECT_EQ(lora.adapter_params, 2 * 8 * (64 + 64));  // the denoiser's q and v only
}

// A linear that is an attention projection written out alone names its LoRA target.
TEST(Linear, LoraTargetMakesItAnAdaptedProjection) {
    ModelBuilder b("t", {2, 16, 64}, infer_shape);
    b.add("linear", "embed", {{"out_features", 64}});
    b.add("linear", "to_q", {{"out_features", 64}, {"lora_target", "q"}});
    b.add("linear", "plain", {{"out_features", 64}});
    FineTune ft;
    ft.mode = FineTuneMode::lora;
    ft.targets = {"q"};
    EXPECT_EQ(compute_features(b.finish("custom", 0), Precision::fp32, MixedRecipe::autocast, ft).adapter_params,
              8 * (64 + 64));
    ModelBuilder bad("t", {2, 16, 64}, infer_shape);
    EXPECT_THROW(bad.add("linear", "x", {{"out_features", 4}, {"lora_target", "to_q"}}), Error);
}
