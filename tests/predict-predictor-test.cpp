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
