// Optimizer kernels, states and scratch memory (run/optimizer.hpp, run/precision_recipe.hpp): the bytes each
// implementation moves per parameter, worked out by hand from torch.optim's fused and foreach code.
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

namespace {

double total_bytes(const std::vector<Kernel>& ks) {
    double b = 0;
    for (const auto& k : ks) b += k.bytes;
    return b;
}

using prenet::testing::params_only;

}  // namespace

TEST(Optimizer, CatalogueAndImplementations) {
    for (const char* name : {"sgd", "adam", "adamw", "adafactor", "lion"}) EXPECT_EQ(find_optimizer(name).name, name);
    EXPECT_THROW(find_optimizer("lamb"), Error);
    EXPECT_EQ(parse_optimizer_impl("fused"), OptimizerImpl::fused);
    EXPECT_EQ(parse_optimizer_impl("foreach"), OptimizerImpl::foreach);
    EXPECT_THROW(parse_optimizer_impl("single_tensor"), Error);  // not a user choice
    EXPECT_THROW(parse_optimizer_impl("apex"), Error);
    // Adafactor has no fused kernel: "fused" runs its passes tensor by tensor.
    EXPECT_EQ(effective_impl(find_optimizer("adafactor"), OptimizerImpl::fused), OptimizerImpl::single_tensor);
    EXPECT_EQ(effective_impl(find_optimizer("adafactor"), OptimizerImpl::foreach), OptimizerImpl::foreach);
    EXPECT_EQ(effective_impl(find_optimizer("lion"), OptimizerImpl::fused), OptimizerImpl::fused);
}

TEST(Optimizer, FusedIsOneKernelReadingAndWritingEachTensorOnce) {
    const std::int64_t n = 1000;
    // gradient + weight + states read, weight + states written, 4 bytes each.
    const std::pair<const char*, double> expected[] = {{"sgd", 20}, {"adam", 28}, {"adamw", 28}, {"lion", 20}};
    for (const auto& [name, bytes] : expected) {
        for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16, Precision::fp8}) {
            auto ks = optimizer_kernels(find_optimizer(name), n, p, OptimizerImpl::fused);
            ASSERT_EQ(ks.size(), 1u) << name;
            EXPECT_EQ(ks[0].family, Family::optimizer);
            EXPECT_EQ(ks[0].phase, Phase::optimizer);
            EXPECT_EQ(ks[0].precision, Precision::fp32);
            // Mixed precision reads a 2-byte gradient and also writes the 2-byte model copy: same total.
            EXPECT_DOUBLE_EQ(ks[0].bytes, bytes * n) << name << " " << to_string(p);
        }
    }
    // The three-argument form is the fused implementation.
    EXPECT_DOUBLE_EQ(total_bytes(optimizer_kernels(find_optimizer("adamw"), n, Precision::bf16)), 28.0 * n);
}

TEST(Optimizer, ForeachRunsTorchOptimSequence) {
    const std::int64_t n = 1000;
    // SGD: mul_(buf) 2 + add_(buf, grad) 3 + add_(param, buf) 3 tensors = 32 bytes.
    // Adam: lerp_ 3, mul_ 2, addcmul_ 3, sqrt 2, div_ 2, add_ 2, addcdiv_ 4 = 18 tensors = 72 bytes.
    // AdamW: plus the decoupled weight decay mul_(param) 2 = 80 bytes.
    // Lion (lion-pytorch foreach): mul_ 2, clone 2, lerp_ 3, sign_ 2, add_ 3, lerp_ 3 = 60 bytes.
    // Adafactor (torch.optim): norms 1+1+1, outer 1, div 2, clamp 2, rsqrt 2, mul 3, norm 1, mul 2, add 3 = 76.
    const std::pair<const char*, std::pair<double, size_t>> expected[] = {
        {"sgd", {32, 3}}, {"adam", {72, 7}}, {"adamw", {80, 8}}, {"lion", {60, 6}}, {"adafactor", {76, 11}}};
    for (const auto& [name, want] : expected) {
        auto ks = optimizer_kernels(find_optimizer(name), n, Precision::fp32, OptimizerImpl::foreach);
        EXPECT_EQ(ks.size(), want.second) << name;
        EXPECT_DOUBLE_EQ(total_bytes(ks), want.first * n) << name;
        for (const auto& k : ks) EXPECT_EQ(k.elements, n);
        EXPECT_GT(total_bytes(ks), total_bytes(optimizer_kernels(find_optimizer(name), n, Precision::fp32)) - 1e-9)
            << name << ": foreach never moves less than fused";
    }
    // A half-precision model: copy the 2-byte gradients to fp32 first (6 bytes) and the master weights back
    // (6 bytes).
    PrecisionRecipe half = precision_recipe(Precision::bf16, MixedRecipe::half_model);
    auto mixed = optimizer_kernels(find_optimizer("adamw"), n, half, OptimizerImpl::foreach);
    ASSERT_EQ(mixed.size(), 10u);
    EXPECT_EQ(mixed.front().op, "grad_to_fp32");
    EXPECT_EQ(mixed.back().op, "master_to_model_copy");
    EXPECT_DOUBLE_EQ(total_bytes(mixed), (80.0 + 6.0 + 6.0) * n);
    // Autocast's weights and gradients are fp32: the fp32 sequence.
    auto autocast = optimizer_kernels(find_optimizer("adamw"), n, Precision::bf16, OptimizerImpl::foreach);
    EXPECT_EQ(autocast.size(), 8u);
    EXPECT_DOUBLE_EQ(total_bytes(autocast), 80.0 * n);
    // Adafactor's single-tensor loop has the foreach passes and traffic.
    EXPECT_DOUBLE_EQ(total_bytes(optimizer_kernels(find_optimizer("adafactor"), n, Precision::fp32)), 76.0 * n);
    EXPECT_TRUE(optimizer_kernels(find_optimizer("adam"), 0, Precision::fp32).empty());
}

TEST(Optimizer, StateBytesPerParameter) {
    ModelFeatures f = params_only(1'000'000);
    EXPECT_DOUBLE_EQ(optimizer_state_bytes(find_optimizer("sgd"), f), 4e6);   // momentum
    EXPECT_DOUBLE_EQ(optimizer_state_bytes(find_optimizer("adam"), f), 8e6);  // m and v
    EXPECT_DOUBLE_EQ(optimizer_state_bytes(find_optimizer("adamw"), f), 8e6);
    EXPECT_DOUBLE_EQ(optimizer_state_bytes(find_optimizer("lion"), f), 4e6);  // momentum only
}

TEST(Optimizer, AdafactorFactorsMatricesAndKeepsVectors) {
    ModelBuilder b("m", {4, 16, 1024}, infer_shape);
    b.add("linear", "fc", {{"out_features", 1024}, {"bias", false}});
    b.add("layernorm", "ln");
    Model model = b.finish("custom", 16);  // features point into the model: keep it alive
    ModelFeatures f = compute_features(model, Precision::fp32);
    const OptimizerDef& ada = find_optimizer("adafactor");
    // The 1024 x 1024 matrix keeps a row and a column statistic (2 x 1024 x 4 bytes); the norm's weight and
    // bias (2 x 1024) keep a full fp32 variance.
    EXPECT_DOUBLE_EQ(optimizer_state_bytes(ada, f), 4.0 * 2.0 * 1024.0 + 4.0 * 2048.0);
    EXPECT_LT(optimizer_state_bytes(ada, f), 0.01 * 8.0 * double(f.params));  // far below Adam's 8 bytes
}

TEST(Optimizer, ScratchMemory) {
    ModelBuilder b("m", {4, 1024}, infer_shape);
    b.add("linear", "fc1", {{"out_features", 4096}});
    b.add("linear", "fc2", {{"out_features", 1024}});
    Model model = b.finish("custom", 0);
    ModelFeatures f = compute_features(model, Precision::fp32);
    double n = double(f.params), largest = 1024.0 * 4096.0 + 4096.0;
    const OptimizerDef& adam = find_optimizer("adam");
    EXPECT_DOUBLE_EQ(optimizer_scratch_bytes(adam, f, Precision::fp32, OptimizerImpl::fused), 0.0);
    // foreach Adam allocates sqrt(v) for every parameter at once (_foreach_sqrt).
    EXPECT_DOUBLE_EQ(optimizer_scratch_bytes(adam, f, Precision::fp32, OptimizerImpl::foreach), 4.0 * n);
    // ... plus the fp32 gradient copy of a half-precision model; autocast's gradients are fp32 already.
    PrecisionRecipe half = precision_recipe(Precision::bf16, MixedRecipe::half_model);
    EXPECT_DOUBLE_EQ(optimizer_scratch_bytes(adam, f, half, OptimizerImpl::foreach), 8.0 * n);
    EXPECT_DOUBLE_EQ(optimizer_scratch_bytes(adam, f, Precision::bf16, OptimizerImpl::foreach), 4.0 * n);
    EXPECT_DOUBLE_EQ(optimizer_scratch_bytes(find_optimizer("sgd"), f, Precision::fp32, OptimizerImpl::foreach), 0.0);
    // Tensor by tensor (Adafactor "fused"): one layer's worth at a time.
    const OptimizerDef& ada = find_optimizer("adafactor");
    EXPECT_DOUBLE_EQ(optimizer_scratch_bytes(ada, f, Precision::fp32, OptimizerImpl::fused), 4.0 * largest);
    EXPECT_DOUBLE_EQ(optimizer_scratch_bytes(ada, f, Precision::fp32, OptimizerImpl::foreach), 4.0 * n);
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
