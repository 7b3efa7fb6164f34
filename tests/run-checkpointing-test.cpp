// Activation checkpointing (run/checkpointing.hpp): which tensors a checkpointed model keeps.
#include <gtest/gtest.h>

#include "test-helpers.hpp"

#include <cmath>

#include "graph/builder.hpp"
#include "hardware/spec.hpp"
#include "importers/zoo.hpp"
#include "importers/resolve.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "run/checkpointing.hpp"
#include "run/memory.hpp"

using namespace prenet;

namespace {

using prenet::testing::blocks_model;
using prenet::testing::memory_options;
using prenet::testing::model_states;

}  // namespace

TEST(Checkpointing, KeepsBlockInputsAndOneBlock) {
    Model model = blocks_model(8);
    ModelFeatures f = compute_features(model, Precision::bf16);
    EXPECT_EQ(checkpoint_units(f), 6);
    ActivationMemory off = activation_memory(f, Precision::bf16, false);
    ActivationMemory on = activation_memory(f, Precision::bf16, true);
    EXPECT_DOUBLE_EQ(off.saved, f.saved_activation_bytes);
    EXPECT_EQ(off.checkpointed_blocks, 0);
    EXPECT_EQ(on.checkpointed_blocks, 6);
    // Each of the 6 copies keeps its input [8, 64, 256] in bf16.
    EXPECT_DOUBLE_EQ(on.block_inputs, 6.0 * 8 * 64 * 256 * 2);
    double block = 0, outside = 0;
    for (const auto& lf : f.layers) (is_checkpointed(lf) ? block : outside) += lf.cost.saved_activation_bytes * (is_checkpointed(lf) ? 1 : lf.repeat);
    EXPECT_DOUBLE_EQ(on.recompute_block, block);
    EXPECT_DOUBLE_EQ(on.saved, outside + on.block_inputs + on.recompute_block);
    EXPECT_LT(on.saved, off.saved);
    EXPECT_LT(on.saved, 0.5 * off.saved);

    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");
    MemoryOptions o = memory_options(Precision::bf16, "adamw");
    MemoryUse plain = estimate_memory(f, hw, o);
    o.checkpointing = true;
    MemoryUse ckpt = estimate_memory(f, hw, o);
    EXPECT_DOUBLE_EQ(ckpt.activations, on.saved);
    EXPECT_EQ(ckpt.checkpointed_blocks, 6);
    EXPECT_LT(ckpt.peak, plain.peak);
    EXPECT_DOUBLE_EQ(model_states(ckpt), model_states(plain));
}

TEST(Checkpointing, ModelsWithoutBlocksAreUnchanged) {
    ModelBuilder b("mlp", {32, 784}, infer_shape);
    b.add("linear", "fc1", {{"out_features", 256}});
    b.add("activation", "act", {{"function", "relu"}});
    b.add("linear", "fc2", {{"out_features", 10}});
    Model model = b.finish("custom", 0);
    ModelFeatures f = compute_features(model, Precision::fp32);
    EXPECT_EQ(checkpoint_units(f), 0);
    EXPECT_DOUBLE_EQ(activation_memory(f, Precision::fp32, true).saved, f.saved_activation_bytes);
}
