// run/memory_format.hpp: the NCHW<->NHWC transposes cuDNN runs around half-precision tensor-core convolutions of
// an NCHW model, by hand for one convolution, and what --channels-last, fp32 and the device change.
#include "run/memory_format.hpp"

#include <gtest/gtest.h>

#include "graph/builder.hpp"
#include "ops/catalogue.hpp"
#include "predict/predictor.hpp"
#include "run/step.hpp"

namespace prenet {
namespace {

// Two convolutions on [8, 64, 56, 56]; the second ("b", 64 -> 128, 3x3, padding 1) owes an input gradient.
Model two_convs(std::int64_t groups_b = 1) {
    ModelBuilder b("convs", {8, 64, 56, 56}, infer_shape);
    b.add("conv2d", "a", {{"out_channels", 64}, {"kernel_size", 1}, {"bias", false}});
    b.add("conv2d", "b", {{"out_channels", groups_b == 64 ? 64 : 128}, {"kernel_size", 3}, {"padding", 1},
                          {"groups", groups_b}, {"bias", false}});
    return b.finish("custom", 56);
}

const LayerFeatures& layer_of(const ModelFeatures& f, const std::string& name) {
    for (const auto& lf : f.layers)
        if (lf.layer.name == name) return lf;
    throw std::runtime_error("no layer " + name);
}

double transpose_bytes(const LayerFeatures& lf, Phase phase) {
    double bytes = 0;
    for (const auto& k : lf.cost.kernels)
        if ((k.op == "nchw_to_nhwc" || k.op == "nhwc_to_nchw") && k.phase == phase) bytes += k.bytes;
    return bytes;
}

int transposes(const ModelFeatures& f) {
    int n = 0;
    for (const auto& lf : f.layers)
        for (const auto& k : lf.cost.kernels) n += k.op == "nchw_to_nhwc" || k.op == "nhwc_to_nchw";
    return n;
}

TEST(MemoryFormat, OneConvolutionsTransposesByHand) {
    ModelFeatures f = with_layout_transposes(compute_features(two_convs(), Precision::fp16),
                                             find_hardware("a100-sxm4-80gb"));
    const LayerFeatures& b = layer_of(f, "b");
    // input 8x64x56x56 = 1,605,632, output 8x128x56x56 = 3,211,264, weight 128x64x3x3 = 73,728 elements; each
    // transposed element is read and written once at 2 bytes (4 bytes per element).
    EXPECT_DOUBLE_EQ(transpose_bytes(b, Phase::forward), 4.0 * (1605632 + 73728) + 4.0 * 3211264);
    EXPECT_DOUBLE_EQ(transpose_bytes(b, Phase::backward_input), 4.0 * (3211264 + 73728) + 4.0 * 1605632);
    EXPECT_DOUBLE_EQ(transpose_bytes(b, Phase::backward_weight), 4.0 * (1605632 + 3211264) + 4.0 * 73728);
    // Two per call: b's three calls, a's forward and weight gradient (the first layer owes no input gradient).
    EXPECT_EQ(transposes(f), 2 * 3 + 2 * 2);
    EXPECT_TRUE(needs_layout_transposes(compute_features(two_convs(), Precision::bf16),
                                        find_hardware("h100-sxm5-80gb")));
}

TEST(MemoryFormat, OnlyHalfPrecisionConvolutionsOnNvidiaTensorCoresPay) {
    EXPECT_TRUE(runs_nhwc_tensor_core_convs(find_hardware("v100-sxm2-16gb"), Precision::fp16));
    EXPECT_TRUE(runs_nhwc_tensor_core_convs(find_hardware("b200"), Precision::bf16));
    EXPECT_FALSE(runs_nhwc_tensor_core_convs(find_hardware("a100-sxm4-80gb"), Precision::tf32));
    EXPECT_FALSE(runs_nhwc_tensor_core_convs(find_hardware("a100-sxm4-80gb"), Precision::fp32));
    EXPECT_TRUE(runs_nhwc_tensor_core_convs(find_hardware("t4"), Precision::fp16));
    EXPECT_TRUE(runs_nhwc_tensor_core_convs(find_hardware("rtx-3090"), Precision::fp16));  // fp16 at 2x fp32, TF32
    EXPECT_FALSE(runs_nhwc_tensor_core_convs(find_hardware("p100-pcie-16gb"), Precision::fp16));  // no tensor cores
    EXPECT_FALSE(runs_nhwc_tensor_core_convs(find_hardware("titan-xp"), Precision::fp16));
    EXPECT_FALSE(runs_nhwc_tensor_core_convs(find_hardware("mi300x"), Precision::bf16));  // MIOpen: NCHW
    const HardwareSpec& a100 = find_hardware("a100-sxm4-80gb");
    EXPECT_FALSE(needs_layout_transposes(compute_features(two_convs(), Precision::fp32), a100));
    EXPECT_FALSE(needs_layout_transposes(compute_features(two_convs(), Precision::tf32), a100));
    // A depthwise convolution runs PyTorch's own NCHW kernels: only "a" pays.
    ModelFeatures depthwise = with_layout_transposes(compute_features(two_convs(64), Precision::fp16), a100);
    EXPECT_EQ(transposes(depthwise), 2 * 2);
}

TEST(MemoryFormat, ChannelsLastAndCompileRemoveThemFromTheStep) {
    ModelFeatures f = compute_features(two_convs(), Precision::fp16);
    StepOptions o;
    o.precision = Precision::fp16;
    o.optimizer = &find_optimizer("sgd");
    RooflinePredictor roofline;
    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");
    StepTime nchw = predict_step(f, hw, roofline, o);
    o.channels_last = true;
    StepTime nhwc = predict_step(f, hw, roofline, o);
    EXPECT_EQ(nchw.kernels - nhwc.kernels, 10.0);
    EXPECT_DOUBLE_EQ(nchw.matmul_ms, nhwc.matmul_ms);
    EXPECT_GT(nchw.by_family_ms.at(Family::elementwise), nhwc.by_family_ms.at(Family::elementwise));
    // torch.compile on CUDA converts convolutions to channels-last (Inductor's layout optimisation).
    o.compile = true;
    StepTime compiled_nhwc = predict_step(f, hw, roofline, o);
    o.channels_last = false;
    EXPECT_DOUBLE_EQ(predict_step(f, hw, roofline, o).total_ms(), compiled_nhwc.total_ms());
    // fp32: nothing changes.
    ModelFeatures f32 = compute_features(two_convs(), Precision::fp32);
    StepOptions o32;
    o32.optimizer = &find_optimizer("sgd");
    StepTime a = predict_step(f32, hw, roofline, o32);
    o32.channels_last = true;
    EXPECT_DOUBLE_EQ(a.total_ms(), predict_step(f32, hw, roofline, o32).total_ms());
}

}  // namespace
}  // namespace prenet
