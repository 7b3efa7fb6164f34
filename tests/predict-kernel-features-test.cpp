// The kernel features the learned models read (predict/kernel_features.hpp).
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

using namespace prenet;

TEST(KernelFeatures, AreFiniteForEveryCatalogueDevice) {
    Kernel k = kernel_from_row("conv", {{"b", 32}, {"in_channels", 64}, {"out_channels", 128}, {"kernel_size", 3},
                                        {"input_size", 56}, {"stride", 1}, {"padding", 1}},
                               Precision::bf16);
    for (const auto& hw : hardware_catalogue()) {
        auto x = kernel_features(k, hw);
        ASSERT_EQ(x.size(), kernel_feature_names().size());
        for (double v : x) EXPECT_TRUE(std::isfinite(v)) << hw.id;
    }
}

namespace {

double feature(const Kernel& k, const std::string& name) {
    const auto& names = kernel_feature_names();
    auto at = std::find(names.begin(), names.end(), name);
    if (at == names.end()) throw Error("no feature " + name);
    return kernel_features(k, find_hardware("v100-sxm2-16gb"))[size_t(at - names.begin())];
}

}  // namespace

// Half-precision tensor cores need channel counts / GEMM dims in multiples of 8; FP32 never uses them.
TEST(KernelFeatures, TensorCoreAlignmentAndWinograd) {
    EXPECT_EQ(feature(prenet::testing::conv_row(64, 128, 3, Precision::fp16), "tensor_core_aligned"), 1.0);
    EXPECT_EQ(feature(prenet::testing::conv_row(3, 64, 3, Precision::fp16), "tensor_core_aligned"), 0.0);
    EXPECT_EQ(feature(prenet::testing::conv_row(64, 128, 3, Precision::tf32), "tensor_core_aligned"), 0.0);  // no TF32 data
    EXPECT_EQ(feature(prenet::testing::conv_row(64, 128, 3, Precision::fp32), "tensor_core_aligned"), 0.0);
    Kernel gemm = kernel_from_row("linear", {{"b", 1}, {"m", 4096}, {"n", 4096}, {"k", 4096}}, Precision::bf16);
    Kernel odd = kernel_from_row("linear", {{"b", 1}, {"m", 4096}, {"n", 1000}, {"k", 4095}}, Precision::bf16);
    EXPECT_EQ(feature(gemm, "tensor_core_aligned"), 1.0);
    EXPECT_EQ(feature(odd, "tensor_core_aligned"), 0.0);
    EXPECT_EQ(feature(prenet::testing::conv_row(64, 128, 3, Precision::fp32), "winograd"), 1.0);
    EXPECT_EQ(feature(prenet::testing::conv_row(64, 128, 1, Precision::fp32), "winograd"), 0.0);
    EXPECT_EQ(feature(prenet::testing::conv_row(64, 128, 3, Precision::fp16), "winograd"), 0.0);  // V100 tensor cores: implicit GEMM
}

// Batch norm's streaming passes are timed by the elementwise model; layer norm keeps the norm model.
TEST(KernelFeatures, BatchNormUsesTheElementwiseModel) {
    Kernel bn;
    bn.family = Family::norm;
    bn.op = "batchnorm_backward";
    Kernel ln = bn;
    ln.op = "layernorm";
    EXPECT_EQ(model_family(bn), Family::elementwise);
    EXPECT_EQ(model_family(ln), Family::norm);
    EXPECT_EQ(model_family(Family::norm), Family::norm);
    // Fused attention has a model of its own (LearnedPredictor falls back to gemm's when a file lacks it).
    EXPECT_EQ(model_family(Family::attention), Family::attention);
    EXPECT_EQ(model_family(Family::rnn), Family::gemm);
}
