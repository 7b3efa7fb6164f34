// The roofline kernel predictor and the step composition (run/step.hpp): times and memory on hand-built
// kernels and models, checked against numbers worked out by hand.
#include <gtest/gtest.h>

#include "test-helpers.hpp"

#include <cmath>
#include <map>
#include <string>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "hardware/spec.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "predict/predictor.hpp"
#include "run/optimizer.hpp"
#include "run/step.hpp"

using namespace prenet;

namespace {

Kernel gemm(std::int64_t m, std::int64_t n, std::int64_t k, Precision p) {
    Kernel g;
    g.family = Family::gemm;
    g.op = "linear";
    g.precision = p;
    g.m = m, g.n = n, g.k = k;
    g.flops = 2.0 * double(m) * double(n) * double(k);
    double bytes_per = matmul_input_bytes(p);
    g.bytes = bytes_per * (double(m) * k + double(k) * n + double(m) * n);
    return g;
}

Kernel elementwise(std::int64_t elements, double bytes_per_element) {
    Kernel e;
    e.family = Family::elementwise;
    e.op = "add";
    e.elements = elements;
    e.flops = double(elements);
    e.bytes = 3.0 * bytes_per_element * double(elements);  // two inputs read, one output written
    return e;
}

// A small model: an input linear, a block of (linear, relu) repeated 3 times, a head and a loss.
Model small_model() {
    ModelBuilder b("small", {16, 128}, infer_shape);
    b.add("linear", "in", {{"out_features", 256}});
    b.begin_block("blocks", 3);
    b.add("linear", "fc", {{"out_features", 256}});
    b.add("activation", "act", {{"function", "relu"}});
    b.end_block();
    b.add("linear", "head", {{"out_features", 10}});
    b.add("cross_entropy", "loss");
    return b.finish("custom", 0);
}

using prenet::testing::params_only;

}  // namespace

TEST(Roofline, ComputeBoundGemmIsFlopsOverPeakPlusLaunch) {
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    RooflinePredictor roofline;
    Kernel k = gemm(8192, 8192, 8192, Precision::fp16);
    double peak = h100.peak_tflops.at("fp16") * 1e12;
    double compute_ms = 1e3 * k.flops / peak;
    double memory_ms = 1e3 * k.bytes / (h100.bandwidth_gbps * 1e9);
    ASSERT_GT(compute_ms, 5 * memory_ms) << "the test kernel must be compute-bound";
    EXPECT_NEAR(roofline_bound_ms(k, h100), compute_ms, 1e-12 * compute_ms);
    EXPECT_NEAR(roofline.kernel_ms(k, h100), compute_ms + RooflinePredictor::kLaunchMs, 1e-12 * compute_ms);
    // 2 x 8192^3 FLOPs at 989.4 TFLOPS is about 1.11 ms.
    EXPECT_NEAR(compute_ms, 2.0 * std::pow(8192.0, 3) / 989.4e12 * 1e3, 1e-9);
    EXPECT_NEAR(compute_ms, 1.111, 0.001);
}

// A compute-bound 3x3 stride-1 convolution (ResNet's layer3 3x3 at batch 256) has a lower bound with Winograd's
// 2.25x fewer multiplies; stride 2, 1x1 and grouped convolutions keep the direct count.
TEST(Roofline, ThreeByThreeStrideOneConvolutionsHaveTheWinogradBound) {
    const HardwareSpec& v100 = find_hardware("v100-sxm2-16gb");
    auto conv = [](std::int64_t r, std::int64_t stride, std::int64_t groups) {
        Kernel k;
        k.family = Family::conv;
        k.precision = Precision::fp32;
        ConvShape c;
        c.n = c.c = c.k = 256;
        c.h = c.w = 14;
        c.r = c.s = r;
        c.stride_h = c.stride_w = stride;
        c.pad_h = c.pad_w = r / 2;
        c.groups = groups;
        k.conv = c;
        double out = std::floor((14.0 + 2 * (r / 2) - r) / stride) + 1;
        k.flops = 2.0 * 256 * 256 / groups * r * r * out * out * 256;
        k.bytes = 4.0 * 256 * (256 * 14 * 14 + 256 * out * out);
        return k;
    };
    double peak = v100.peak_tflops.at("fp32") * 1e12;
    Kernel winograd = conv(3, 1, 1);  // FP32
    ASSERT_TRUE(winograd_eligible(winograd, v100));
    EXPECT_NEAR(lower_bound_ms(winograd, v100), 1e3 * winograd.flops / 2.25 / peak, 1e-9);
    // The baseline roofline keeps the textbook (direct) count.
    EXPECT_NEAR(roofline_bound_ms(winograd, v100), 1e3 * winograd.flops / peak, 1e-9);
    // The same convolution on tensor cores (fp16 on a V100) keeps the direct count; on P100's vector fp16 it
    // may use Winograd.
    Kernel half = winograd;
    half.precision = Precision::fp16;
    EXPECT_FALSE(winograd_eligible(half, v100));
    EXPECT_TRUE(winograd_eligible(half, find_hardware("p100-sxm2-16gb")));
    for (Kernel direct : {conv(3, 2, 1), conv(1, 1, 1), conv(3, 1, 256)}) {
        EXPECT_FALSE(winograd_eligible(direct, v100));
        EXPECT_DOUBLE_EQ(bound_flops(direct, v100), direct.flops);
        EXPECT_DOUBLE_EQ(lower_bound_ms(direct, v100), roofline_bound_ms(direct, v100));
    }
}

TEST(Roofline, GemmPrecisionPicksThePeak) {
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    Kernel fp32 = gemm(8192, 8192, 8192, Precision::fp32);
    Kernel bf16 = gemm(8192, 8192, 8192, Precision::bf16);
    EXPECT_NEAR(roofline_bound_ms(fp32, h100), 1e3 * fp32.flops / (h100.peak_tflops.at("fp32") * 1e12), 1e-9);
    EXPECT_LT(roofline_bound_ms(bf16, h100), roofline_bound_ms(fp32, h100));
    // A conv, attention or RNN kernel also uses the matrix units; a vector kernel does not.
    Kernel conv = bf16;
    conv.family = Family::conv;
    EXPECT_DOUBLE_EQ(roofline_bound_ms(conv, h100), roofline_bound_ms(bf16, h100));
    EXPECT_TRUE(uses_matrix_units(Family::gemm));
    EXPECT_TRUE(uses_matrix_units(Family::conv));
    EXPECT_TRUE(uses_matrix_units(Family::attention));
    EXPECT_FALSE(uses_matrix_units(Family::elementwise));
    EXPECT_FALSE(uses_matrix_units(Family::optimizer));
}

TEST(Roofline, MemoryBoundElementwiseIsBytesOverBandwidthPlusLaunch) {
    RooflinePredictor roofline;
    for (const char* id : {"h100-sxm5-80gb", "a100-sxm4-80gb", "t4", "tpu-v4"}) {
        const HardwareSpec& hw = find_hardware(id);
        Kernel k = elementwise(100'000'000, 4.0);
        double memory_ms = 1e3 * k.bytes / (hw.bandwidth_gbps * 1e9);
        double compute_ms = 1e3 * k.flops / hw.vector_flops();
        ASSERT_GT(memory_ms, 5 * compute_ms) << id << ": the test kernel must be memory-bound";
        EXPECT_NEAR(roofline_bound_ms(k, hw), memory_ms, 1e-12 * memory_ms) << id;
        EXPECT_NEAR(roofline.kernel_ms(k, hw), memory_ms + RooflinePredictor::kLaunchMs, 1e-12 * memory_ms) << id;
    }
    // 1.2 GB at 3350 GB/s on an H100 SXM.
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    EXPECT_NEAR(roofline_bound_ms(elementwise(100'000'000, 4.0), h100), 1.2e9 / (h100.bandwidth_gbps * 1e9) * 1e3,
                1e-12);
}

TEST(Roofline, EmptyKernelCostsTheLaunch) {
    RooflinePredictor roofline;
    Kernel k;
    EXPECT_DOUBLE_EQ(roofline.kernel_ms(k, find_hardware("t4")), RooflinePredictor::kLaunchMs);
}

TEST(Roofline, NeverBelowTheRooflineBound) {
    RooflinePredictor roofline;
    std::vector<Kernel> kernels = {gemm(8192, 8192, 8192, Precision::fp16), gemm(1, 4096, 4096, Precision::bf16),
                                   gemm(64, 64, 64, Precision::fp32),       gemm(4096, 4096, 4096, Precision::fp8),
                                   gemm(2048, 2048, 2048, Precision::tf32), elementwise(1, 4),
                                   elementwise(1 << 20, 2),                 elementwise(1'000'000'000, 4)};
    for (const auto& hw : hardware_catalogue())
        for (const auto& k : kernels) {
            double bound = roofline_bound_ms(k, hw);
            double t = roofline.kernel_ms(k, hw);
            EXPECT_TRUE(std::isfinite(t)) << hw.id << " " << k.op;
            EXPECT_GE(bound, 0) << hw.id;
            EXPECT_GE(t, bound) << hw.id << " " << k.op;
        }
}

TEST(Roofline, PredictorFactory) {
    auto p = make_predictor("roofline");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->name(), "roofline");
    EXPECT_THROW(make_predictor("crystal-ball"), Error);
}

TEST(Step, SumsForwardBackwardAndOptimizerConsistently) {
    Model model = small_model();
    ModelFeatures f = compute_features(model, Precision::bf16);
    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");
    RooflinePredictor roofline;
    const OptimizerDef& adamw = find_optimizer("adamw");
    StepTime t = predict_step(f, hw, roofline, Precision::bf16, adamw);

    EXPECT_GT(t.forward_ms, 0);
    EXPECT_GT(t.backward_ms, 0);
    EXPECT_GT(t.optimizer_ms, 0);
    EXPECT_DOUBLE_EQ(t.communication_ms, 0);
    EXPECT_DOUBLE_EQ(t.total_ms(), t.forward_ms + t.backward_ms + t.optimizer_ms + t.communication_ms);

    double by_family = 0;
    for (const auto& [family, ms] : t.by_family_ms) {
        EXPECT_GT(ms, 0) << to_string(family);
        by_family += ms;
    }
    EXPECT_NEAR(by_family, t.total_ms(), 1e-12 * t.total_ms());
    // The JSON form is keyed by the families' names, with the same times.
    json by_name = by_family_json(t.by_family_ms);
    ASSERT_TRUE(by_name.is_object());
    EXPECT_EQ(by_name.size(), t.by_family_ms.size());
    for (const auto& [family, ms] : t.by_family_ms) EXPECT_EQ(by_name.at(to_string(family)).get<double>(), ms);
    EXPECT_TRUE(t.by_family_ms.count(Family::gemm));
    EXPECT_TRUE(t.by_family_ms.count(Family::optimizer));
    EXPECT_NEAR(t.by_family_ms.at(Family::optimizer), t.optimizer_ms, 1e-15);

    // Recompute by hand: every kernel of every layer, times its block's repeat count.
    double forward = 0, backward = 0;
    std::map<std::string, double> families;
    bool saw_repeat = false;
    for (const auto& lf : f.layers) {
        saw_repeat |= lf.repeat == 3;
        for (const auto& k : lf.cost.kernels) {
            double ms = double(lf.repeat) * roofline.kernel_ms(k, hw);
            (k.phase == Phase::forward ? forward : backward) += ms;
            families[to_string(k.family)] += ms;
        }
    }
    EXPECT_TRUE(saw_repeat);
    EXPECT_NEAR(t.forward_ms, forward, 1e-12 * forward);
    EXPECT_NEAR(t.backward_ms, backward, 1e-12 * backward);
    double optimizer = 0;
    for (const auto& k : optimizer_kernels(adamw, f.params, Precision::bf16)) optimizer += roofline.kernel_ms(k, hw);
    EXPECT_NEAR(t.optimizer_ms, optimizer, 1e-15);
    // The optimizer pass is one memory-bound sweep: 28 bytes per parameter for AdamW.
    EXPECT_NEAR(t.optimizer_ms, 1e3 * 28.0 * double(f.params) / (hw.bandwidth_gbps * 1e9) + RooflinePredictor::kLaunchMs,
                1e-12);
}

TEST(Step, RepeatedBlocksCostTheirRepeatCount) {
    auto build = [](std::int64_t repeat) {
        ModelBuilder b("r", {32, 512}, infer_shape);
        b.add("linear", "in", {{"out_features", 512}});
        b.begin_block("blocks", repeat);
        b.add("linear", "fc", {{"out_features", 512}});
        b.end_block();
        return compute_features(b.finish("custom", 0), Precision::fp32);
    };
    const HardwareSpec& hw = find_hardware("t4");
    RooflinePredictor roofline;
    const OptimizerDef& sgd = find_optimizer("sgd");
    StepTime one = predict_step(build(1), hw, roofline, Precision::fp32, sgd);
    StepTime five = predict_step(build(5), hw, roofline, Precision::fp32, sgd);
    // Four more copies of the repeated layer: forward grows by exactly 4 x its time.
    double fc_forward = five.forward_ms - one.forward_ms;
    EXPECT_GT(fc_forward, 0);
    StepTime three = predict_step(build(3), hw, roofline, Precision::fp32, sgd);
    EXPECT_NEAR(three.forward_ms - one.forward_ms, fc_forward / 2, 1e-9);
}

TEST(Step, BatchAndHardwareMoveTheStepTheRightWay) {
    auto features = [](std::int64_t batch) {
        ModelBuilder b("mlp", {batch, 1024}, infer_shape);
        b.add("linear", "fc1", {{"out_features", 4096}});
        b.add("activation", "act", {{"function", "gelu"}});
        b.add("linear", "fc2", {{"out_features", 1024}});
        return compute_features(b.finish("custom", 0), Precision::bf16);
    };
    RooflinePredictor roofline;
    const OptimizerDef& adamw = find_optimizer("adamw");
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    const HardwareSpec& t4 = find_hardware("t4");
    StepTime small = predict_step(features(8), h100, roofline, Precision::bf16, adamw);
    StepTime large = predict_step(features(4096), h100, roofline, Precision::bf16, adamw);
    EXPECT_GT(large.forward_ms, small.forward_ms);
    EXPECT_GT(large.backward_ms, small.backward_ms);
    EXPECT_DOUBLE_EQ(large.optimizer_ms, small.optimizer_ms);  // same parameters
    StepTime on_t4 = predict_step(features(4096), t4, roofline, Precision::bf16, adamw);
    EXPECT_GT(on_t4.total_ms(), large.total_ms());
}

TEST(Memory, MixedPrecisionAdamIs16BytesPerParameter) {
    const HardwareSpec& hw = find_hardware("h100-sxm5-80gb");
    ModelFeatures f = params_only(1'000'000'000);
    for (const char* opt : {"adamw", "adam"}) {
        for (Precision p : {Precision::bf16, Precision::fp16, Precision::fp32}) {
            MemoryUse m = estimate_memory(f, hw, p, find_optimizer(opt));
            EXPECT_DOUBLE_EQ(m.weights + m.gradients + m.optimizer_states, 16e9) << opt << " " << to_string(p);
            EXPECT_DOUBLE_EQ(m.optimizer_states, 8e9) << opt;
            EXPECT_DOUBLE_EQ(m.activations, 0);
            EXPECT_DOUBLE_EQ(m.peak, m.weights + m.gradients + m.optimizer_states + m.activations + m.temporary);
            EXPECT_DOUBLE_EQ(m.capacity, 80e9);
            EXPECT_TRUE(m.fits());
        }
    }
    // The split: bf16 under autocast (the default) keeps fp32 weights and gradients, as fp32 does (4 + 4); the
    // half-model recipe's 2 + 4 (master) + 2 is in run-memory-test.cpp.
    MemoryUse bf16 = estimate_memory(f, hw, Precision::bf16, find_optimizer("adamw"));
    EXPECT_DOUBLE_EQ(bf16.weights, 4e9);
    EXPECT_DOUBLE_EQ(bf16.gradients, 4e9);
    MemoryUse fp32 = estimate_memory(f, hw, Precision::fp32, find_optimizer("adamw"));
    EXPECT_DOUBLE_EQ(fp32.weights, 4e9);
    EXPECT_DOUBLE_EQ(fp32.gradients, 4e9);
}

TEST(Memory, SgdNeedsLessAndBigModelsDoNotFit) {
    const HardwareSpec& t4 = find_hardware("t4");
    ModelFeatures f = params_only(1'000'000'000);
    MemoryUse sgd = estimate_memory(f, t4, Precision::fp32, find_optimizer("sgd"));
    MemoryUse adamw = estimate_memory(f, t4, Precision::fp32, find_optimizer("adamw"));
    EXPECT_DOUBLE_EQ(sgd.optimizer_states, 4e9);  // one fp32 momentum buffer
    EXPECT_LT(sgd.peak, adamw.peak);
    EXPECT_DOUBLE_EQ(adamw.capacity, 16e9);
    EXPECT_TRUE(adamw.fits());  // exactly 16 GB on a 16 GB card: full but fits
    EXPECT_FALSE(estimate_memory(params_only(1'000'000'001), t4, Precision::fp32, find_optimizer("adamw")).fits());
    ModelFeatures big = params_only(7'000'000'000);
    EXPECT_FALSE(estimate_memory(big, t4, Precision::bf16, find_optimizer("adamw")).fits());
}

TEST(Memory, ActivationsAndTemporariesCount) {
    Model model = small_model();
    ModelFeatures f = compute_features(model, Precision::fp32);
    MemoryUse m = estimate_memory(f, find_hardware("a100-sxm4-80gb"), Precision::fp32, find_optimizer("adamw"));
    EXPECT_DOUBLE_EQ(m.activations, f.saved_activation_bytes);
    EXPECT_GT(m.activations, 0);
    EXPECT_GT(m.temporary, 0);
    EXPECT_DOUBLE_EQ(m.weights + m.gradients + m.optimizer_states, 16.0 * double(f.params));
    EXPECT_GT(m.peak, 16.0 * double(f.params));
    EXPECT_TRUE(m.fits());
}

TEST(Optimizer, KnownAndUnknown) {
    EXPECT_EQ(find_optimizer("sgd").name, "sgd");
    EXPECT_EQ(find_optimizer("adam").name, "adam");
    EXPECT_EQ(find_optimizer("adamw").name, "adamw");
    EXPECT_EQ(find_optimizer("lion").name, "lion");  // added with issue #4 (run-optimizer-test.cpp)
    EXPECT_THROW(find_optimizer("lamb"), Error);
    auto kernels = optimizer_kernels(find_optimizer("adamw"), 1000, Precision::bf16);
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0].family, Family::optimizer);
    EXPECT_EQ(kernels[0].phase, Phase::optimizer);
    EXPECT_DOUBLE_EQ(kernels[0].bytes, 28.0 * 1000);
}
