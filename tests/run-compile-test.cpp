// run/compile.hpp: torch.compile's fusion of a block's memory-bound chains, counted kernel by kernel, and its
// effect on a step's memory-bound kernels and time.
#include "run/compile.hpp"

#include <gtest/gtest.h>

#include "graph/builder.hpp"
#include "hardware/spec.hpp"
#include "importers/resolve.hpp"
#include "predict/predictor.hpp"
#include "run/step.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

// A block whose residual add is followed by a norm (one chain each way), then a matmul and an activation.
struct Built {
    Model model;
    ModelFeatures features;
};
const Built& residual_norm_block() {
    static const Built built = [] {
        ModelBuilder b("chain", {4, 128, 256}, infer_shape);
        b.begin_block("layers", 2);
        b.add("linear", "proj", {{"out_features", 256}, {"bias", false}});
        b.add("residual_add", "res");
        b.add("layernorm", "ln");
        b.add("linear", "up", {{"out_features", 512}, {"bias", false}});
        b.add("activation", "act", {{"function", "gelu"}});
        b.end_block();
        Built out;
        out.model = b.finish("custom", 128);
        out.features = compute_features(out.model, Precision::fp32);
        return out;
    }();
    return built;
}

const Kernel& kernel_of(const ModelFeatures& f, const std::string& layer, const std::string& op) {
    for (const auto& lf : f.layers)
        if (lf.layer.name == layer)
            for (const auto& k : lf.cost.kernels)
                if (k.op == op) return k;
    throw std::runtime_error("no kernel " + op + " in " + layer);
}

struct Count {
    double kernels = 0, memory_bound_kernels = 0, memory_bound_bytes = 0, flops = 0;
};
Count count(const ModelFeatures& f) {
    Count c;
    for (const auto& lf : f.layers)
        for (const auto& k : lf.cost.kernels) {
            double n = double(lf.repeat);
            c.kernels += n;
            c.flops += n * k.flops;
            if (is_fusable(k)) c.memory_bound_kernels += n, c.memory_bound_bytes += n * k.bytes;
        }
    return c;
}

TEST(Compile, TheResidualAddAndTheNormRunAsOneKernelEachWay) {
    const ModelFeatures& f = residual_norm_block().features;
    ModelFeatures fused = fuse_memory_bound_kernels(f);
    // Forward: add (read 2, write 1) then norm (read 1, write 1); the norm reads the add's output from registers:
    // 3n + 2n - n = 4n elements of 4 bytes.
    const Kernel& add = kernel_of(f, "res", "add");
    const Kernel& norm = kernel_of(f, "ln", "layernorm");
    double n = double(add.elements);
    const Kernel& one = kernel_of(fused, "res", "layernorm");
    EXPECT_EQ(one.phase, Phase::forward);
    EXPECT_DOUBLE_EQ(one.bytes, add.bytes + norm.bytes - 4.0 * n);
    EXPECT_DOUBLE_EQ(one.bytes, 4.0 * n * 4.0);
    EXPECT_DOUBLE_EQ(one.flops, add.flops + norm.flops);
    // Per copy: forward add + norm -> 1; backward norm input and weight gradients + the residual's gradient sum
    // -> 1; the activation stays alone each way: 7 memory-bound kernels become 4.
    Count before = count(f), after = count(fused);
    EXPECT_EQ(before.memory_bound_kernels, 2 * 7.0);
    EXPECT_EQ(after.memory_bound_kernels, 2 * 4.0);
    EXPECT_EQ(before.kernels - after.kernels, 2 * 3.0);
    EXPECT_LT(after.memory_bound_bytes, before.memory_bound_bytes);
    EXPECT_DOUBLE_EQ(after.flops, before.flops);
    EXPECT_EQ(fused.params, f.params);
    EXPECT_EQ(fused.saved_activation_bytes, f.saved_activation_bytes);
}

TEST(Compile, MatrixKernelsAndAttentionBreakChains) {
    Kernel gemm;
    gemm.family = Family::gemm;
    Kernel norm;
    norm.family = Family::norm;
    EXPECT_FALSE(is_fusable(gemm));
    EXPECT_TRUE(is_fusable(norm));
    // The activation follows a matmul and precedes none: nothing to fuse it with.
    ModelFeatures fused = fuse_memory_bound_kernels(residual_norm_block().features);
    EXPECT_NO_THROW(kernel_of(fused, "act", "gelu"));
}

TEST(Compile, AStepUnderCompileRunsFewerAndShorterMemoryBoundKernels) {
    ModelInputs in;
    in.batch = 4;
    in.seq = 512;
    Model gpt2 = resolve_model("gpt2", in);
    ModelFeatures f = compute_features(gpt2, Precision::bf16);
    StepOptions o;
    o.precision = Precision::bf16;
    o.optimizer = &find_optimizer("adamw");
    RooflinePredictor roofline;
    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");
    StepTime eager = predict_step(f, hw, roofline, o);
    o.compile = true;
    StepTime compiled = predict_step(f, hw, roofline, o);
    auto memory_bound = [](const StepTime& t) {
        return t.by_family_ms.at(Family::elementwise) + t.by_family_ms.at(Family::norm);
    };
    EXPECT_LT(compiled.kernels, eager.kernels);
    EXPECT_LT(memory_bound(compiled), memory_bound(eager));
    EXPECT_DOUBLE_EQ(compiled.matmul_ms, eager.matmul_ms);
    EXPECT_LT(compiled.total_ms(), eager.total_ms());
}

}  // namespace
}  // namespace prenet
