// The learned predictor (predict/learned.hpp), from small hand-written models documents: bounded by the roofline,
// floors and slowdowns, convolution passes beyond the measured batch, backward norms, its uncertainty.
#include <gtest/gtest.h>

#include "test-helpers.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "predict/kernel_features.hpp"
#include "predict/learned.hpp"
#include "predict/op_rows.hpp"
#include "predict/predictor.hpp"
#include "ops/attention.hpp"

using namespace prenet;

TEST(LearnedPredictor, NeverBeatsTheRooflineBound) {
    // A model that claims every kernel runs 100x faster than the bound must still be clamped to the bound.
    auto doc = nlohmann::json::parse(R"({"families": {"gemm": {"floor_ms": 0, "features": ["log_flops"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": -2}}}})");
    LearnedPredictor p(doc);
    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");
    Kernel k = kernel_from_row("bmm", {{"b", 8}, {"m", 2048}, {"n", 2048}, {"k", 2048}}, Precision::fp32);
    EXPECT_GE(p.kernel_ms(k, hw), roofline_bound_ms(k, hw));
    EXPECT_NEAR(p.kernel_ms(k, hw), roofline_bound_ms(k, hw), 1e-12);
}

TEST(LearnedPredictor, AddsTheLatencyFloorAndTheSlowdown) {
    auto doc = nlohmann::json::parse(R"({"families": {"elementwise": {"floor_ms": 0.02, "features": ["log_flops"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0.30103}}}})");
    LearnedPredictor p(doc);
    const HardwareSpec& hw = find_hardware("t4");
    Kernel k = kernel_from_row("add", {{"b", 1024}, {"h", 1024}}, Precision::fp32);
    EXPECT_NEAR(p.kernel_ms(k, hw), (roofline_bound_ms(k, hw) + 0.02) * 2.0, 1e-6);
}

// The shipped attention model times FlashAttention-2-class kernels; a first-generation kernel of the same problem
// takes the published ratio longer on any accelerator (ops/attention.hpp), and only attention kernels change.
TEST(LearnedPredictor, FirstGenerationFlashAttentionTakesThePublishedRatioLonger) {
    std::unique_ptr<KernelPredictor> learned = make_predictor("learned");
    AttentionShape s;
    s.batch = 4, s.heads = s.kv_heads = 32, s.q_len = s.kv_len = 8192, s.qk_dim = s.v_dim = 128, s.causal = true;
    FlashAttentionKernels second = flash_attention_kernels(s, Precision::bf16);
    s.generation = 1;
    FlashAttentionKernels first = flash_attention_kernels(s, Precision::bf16);
    for (const char* id : {"a100-sxm4-80gb", "h100-sxm5-80gb"}) {
        const HardwareSpec& hw = find_hardware(id);
        double fwd = learned->kernel_ms(second.forward, hw), bwd = learned->kernel_ms(second.backward, hw);
        ASSERT_GT(fwd, 0);
        EXPECT_NEAR(learned->kernel_ms(first.forward, hw) / fwd, 230.0 / 124.0, 1e-12) << id;
        EXPECT_NEAR(learned->kernel_ms(first.backward, hw) / bwd, 230.0 / 124.0, 1e-12) << id;
    }
}

TEST(LearnedPredictor, RejectsUnknownFeatures) {
    auto doc = nlohmann::json::parse(R"({"families": {"gemm": {"features": ["log_moon_phase"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}}}})");
    EXPECT_THROW(LearnedPredictor{doc}, Error);
}

TEST(LearnedPredictor, RejectsUnknownFamilies) {
    auto doc = nlohmann::json::parse(R"({"families": {"gemmm": {"features": ["log_flops"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}}}})");
    EXPECT_THROW(LearnedPredictor{doc}, Error);
}

// The framework overhead is its own model (run/overhead.hpp): an old models file's per-kernel dispatch overhead
// would count it twice, so a non-zero one is refused rather than ignored; zero (what the last ones shipped) reads.
TEST(LearnedPredictor, RefusesAPerKernelDispatchOverhead) {
    auto doc = nlohmann::json::parse(R"({"families": {"elementwise": {"features": ["log_flops"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}}}})");
    doc["framework_overhead_ms_per_kernel"] = 0.0;
    EXPECT_NO_THROW(LearnedPredictor{doc});
    doc["framework_overhead_ms_per_kernel"] = 0.004;
    EXPECT_THROW(LearnedPredictor{doc}, Error);
}

// The range a step carries comes from the predictor itself: the learned one weighs its families' validation
// errors by their share of the step, a shared view forwards that, and the roofline has none.
TEST(LearnedPredictor, ReportsItsUncertaintyThroughTheKernelPredictorInterface) {
    auto doc = nlohmann::json::parse(R"({"families": {
        "gemm": {"features": ["log_flops"], "validation": {"p90_ape": 0.2}, "devices": ["a100-sxm4-80gb"],
                 "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}},
        "elementwise": {"features": ["log_flops"], "validation": {"p90_ape": 0.6}, "devices": ["a100-sxm4-80gb"],
                 "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}}}})");
    LearnedPredictor learned(doc);
    SharedPredictor shared(learned);
    RooflinePredictor roofline;
    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");  // the fitted device: no widening
    const std::map<Family, double> ms = {{Family::gemm, 3.0}, {Family::attention, 1.0}, {Family::gather, 4.0}};
    const KernelPredictor& as_learned = learned;
    std::optional<double> r = as_learned.relative_uncertainty(ms, hw);
    ASSERT_TRUE(r);
    // attention is timed by the gemm model, gather by the elementwise one.
    EXPECT_NEAR(*r, (4.0 * 0.2 + 4.0 * 0.6) / 8.0, 1e-12);
    EXPECT_EQ(shared.relative_uncertainty(ms, hw), r);
    EXPECT_FALSE(roofline.relative_uncertainty(ms, hw));
    EXPECT_FALSE(SharedPredictor(roofline).relative_uncertainty(ms, hw));
    // A device far outside the fitted ones widens the range.
    EXPECT_GT(*learned.relative_uncertainty(ms, find_hardware("t4")), *r);
}

// A convolution over more images than the models saw is timed as passes over the largest measured batch,
// counted in waves of output tiles: a small-batch pass can leave units idle that the whole batch fills.
TEST(LearnedPredictor, ConvolutionsBeyondTheMeasuredBatchArePassesCountedInWaves) {
    auto models = [](double max_batch) {
        auto doc = nlohmann::json::parse(R"({"families": {"conv": {"floor_ms": 0.01, "features": ["log_flops"],
            "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0.3}}}})");
        doc["families"]["conv"]["max_batch"] = max_batch;
        return LearnedPredictor(doc);
    };
    const HardwareSpec& hw = find_hardware("v100-sxm2-16gb");  // 80 SMs
    // ResNet-50's last stage: 512 -> 512 channels, 3x3 on 7x7 images.
    auto conv = [](const std::string& op, std::int64_t batch) {
        return kernel_from_row(op, {{"n", batch}, {"c", 512}, {"h", 7}, {"w", 7}, {"k", 512}, {"filter_h", 3},
                                    {"filter_w", 3}, {"pad_h", 1}, {"pad_w", 1}},
                               Precision::fp16);
    };
    LearnedPredictor capped = models(64);
    // Batch 64: 3136 output rows = 25 tiles x 4 = 100 tiles, 2 waves; batch 256: 392 tiles, 5 waves, not 4 x 2.
    EXPECT_DOUBLE_EQ(output_tile_waves(conv("conv2d", 64), hw), 2);
    EXPECT_DOUBLE_EQ(output_tile_waves(conv("conv2d", 256), hw), 5);
    EXPECT_NEAR(capped.kernel_ms(conv("conv2d", 256), hw), 2.5 * capped.kernel_ms(conv("conv2d", 64), hw), 1e-12);
    EXPECT_NEAR(capped.kernel_ms(conv("conv2d_grad_input", 256), hw),
                2.5 * capped.kernel_ms(conv("conv2d_grad_input", 64), hw), 1e-12);
    // The weight gradient's output (512 x 4608) does not grow with the batch: plain passes.
    EXPECT_DOUBLE_EQ(output_tile_waves(conv("conv2d_grad_weight", 256), hw), 0);
    EXPECT_NEAR(capped.kernel_ms(conv("conv2d_grad_weight", 256), hw),
                4 * capped.kernel_ms(conv("conv2d_grad_weight", 64), hw), 1e-12);
    // A pass that already fills its waves scales by the passes (never by more).
    Kernel k32 = prenet::testing::conv_row(64, 128, 3, Precision::bf16);  // batch 32 on 56x56: 784 tiles
    Kernel k128 = kernel_from_row("conv", {{"b", 128}, {"in_channels", 64}, {"out_channels", 128}, {"kernel_size", 3},
                                           {"input_size", 56}, {"stride", 1}, {"padding", 1}},
                                  Precision::bf16);
    LearnedPredictor capped32 = models(32), open32 = models(0);
    double ratio = capped32.kernel_ms(k128, hw) / capped32.kernel_ms(k32, hw);
    EXPECT_LE(ratio, 4.0 + 1e-12);
    EXPECT_GT(ratio, 3.5);
    EXPECT_DOUBLE_EQ(capped32.kernel_ms(k32, hw), open32.kernel_ms(k32, hw));  // within the range: unchanged
    EXPECT_GE(capped.kernel_ms(conv("conv2d", 256), hw), lower_bound_ms(conv("conv2d", 256), hw));
    EXPECT_THROW(models(-1), Error);
}

// The norm model has seen forward layer norms only; a backward pass over the same rows runs at the
// efficiency it gives that forward, applied to the backward's own bound.
TEST(LearnedPredictor, NormBackwardRunsAtTheForwardEfficiencyOfItsRows) {
    auto doc = nlohmann::json::parse(R"({"families": {"norm": {"floor_ms": 0.01, "features": ["log_flops"],
        "model": {"type": "ridge", "mean": [9], "scale": [1], "weights": [-0.2], "bias": 0.3}}}})");
    LearnedPredictor predictor(doc);
    const HardwareSpec& hw = find_hardware("v100-sxm2-16gb");
    Kernel forward = kernel_from_row("ln", {{"b", 8192}, {"h", 1024}}, Precision::fp32);
    Kernel grad_weight = forward;  // reads x and dy, 2 FLOPs an element: fewer FLOPs than any forward row
    grad_weight.phase = Phase::backward_weight;
    grad_weight.op = "layernorm_grad_weight";
    grad_weight.flops = 2.0 * 8192 * 1024;
    grad_weight.bytes = 2.0 * 8192 * 1024 * 4;
    double forward_slowdown = predictor.kernel_ms(forward, hw) / (lower_bound_ms(forward, hw) + 0.01);
    EXPECT_NEAR(predictor.kernel_ms(grad_weight, hw) / (lower_bound_ms(grad_weight, hw) + 0.01), forward_slowdown,
                1e-9);
    // Asked directly, the model would have seen 3.5x fewer FLOPs and called it slower.
    EXPECT_GT(std::pow(10.0, predictor.log_slowdown(grad_weight, hw)), forward_slowdown);
}

namespace {
Kernel flash_row(const char* phase) {
    return kernel_from_row("flash_attention", {{"b", 2}, {"seq", 4096}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 128},
                                               {"causal", 1}},
                           Precision::bf16, std::string(phase) == "backward" ? Phase::backward_input : Phase::forward);
}
}  // namespace

// A models file from before the attention family (models/kernels.json until it is refitted) times fused
// attention with the gemm model, as before; a file with one uses it.
TEST(LearnedPredictor, FusedAttentionFallsBackToTheGemmModelWithoutAnAttentionFamily) {
    auto gemm_only = nlohmann::json::parse(R"({"families": {
        "gemm": {"floor_ms": 0, "features": ["log_flops"],
                 "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0.30103}},
        "elementwise": {"floor_ms": 0, "features": ["log_flops"],
                 "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 1}}}})");
    LearnedPredictor p(gemm_only);
    const HardwareSpec& hw = find_hardware("b200");
    Kernel k = flash_row("forward");
    EXPECT_EQ(model_family(k), Family::attention);
    EXPECT_NEAR(p.kernel_ms(k, hw), 2.0 * lower_bound_ms(k, hw), 1e-5);  // gemm's 2x, not elementwise's 10x
    Kernel b = flash_row("backward");
    EXPECT_NEAR(p.kernel_ms(b, hw), 2.0 * lower_bound_ms(b, hw), 1e-5);
}

// Only forward attention is measured: the backward runs at the efficiency the attention model gives the
// forward over the same shape, applied to its own (2.5x FLOPs) bound.
TEST(LearnedPredictor, FlashBackwardRunsAtTheForwardsEfficiencyOverItsOwnBound) {
    // Slowdown 10^(log_flops - 9): it depends on the FLOPs, so asking the model about the backward directly
    // would give another efficiency than the forward's.
    auto doc = nlohmann::json::parse(R"({"families": {
        "gemm": {"floor_ms": 0, "features": ["log_flops"],
                 "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}},
        "attention": {"floor_ms": 0.01, "features": ["log_flops"],
                 "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [1], "bias": -9}}}})");
    LearnedPredictor p(doc);
    const HardwareSpec& hw = find_hardware("b200");
    Kernel f = flash_row("forward"), b = flash_row("backward");
    double slowdown = std::pow(10.0, std::log10(f.flops) - 9);
    ASSERT_GT(slowdown, 1.0);
    EXPECT_NEAR(p.kernel_ms(f, hw), (lower_bound_ms(f, hw) + 0.01) * slowdown, 1e-9);
    EXPECT_NEAR(p.kernel_ms(b, hw), (lower_bound_ms(b, hw) + 0.01) * slowdown, 1e-9);
    EXPECT_GT(b.flops, f.flops);
    EXPECT_NEAR(b.flops, 2.5 * f.flops, 1e-3 * f.flops);
}
