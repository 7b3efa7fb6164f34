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
#include "parallel/layout.hpp"
#include "parallel/tensor_parallel.hpp"
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
    ActivationMemory off = activation_memory(f, Precision::bf16, CheckpointKind::none);
    ActivationMemory on = activation_memory(f, Precision::bf16, CheckpointKind::full);
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
    EXPECT_DOUBLE_EQ(activation_memory(f, Precision::fp32, CheckpointKind::full).saved, f.saved_activation_bytes);
}

TEST(Checkpointing, EachBlockOfAStageIsAUnitOfItsOwn) {
    // A pipeline stage of interleaved chunks holds consecutive blocks with one name and one repeat (each chunk
    // a copy of the same block): each is a checkpoint unit, not one unit spanning them.
    Model model = blocks_model(8);
    Block copy = model.blocks[1];
    copy.repeat = 1;
    model.blocks[1] = copy;
    model.blocks.insert(model.blocks.begin() + 1, copy);
    ModelFeatures f = compute_features(model, Precision::bf16);
    ActivationMemory on = activation_memory(f, Precision::bf16, CheckpointKind::full);
    EXPECT_EQ(on.checkpointed_blocks, 2);
    EXPECT_DOUBLE_EQ(on.block_inputs, 2.0 * 8 * 64 * 256 * 2);
    double one_block = 0;
    for (const auto& lf : f.layers)
        if (lf.block_index == 1) one_block += lf.cost.saved_activation_bytes;
    EXPECT_DOUBLE_EQ(on.recompute_block, one_block);
}

TEST(Checkpointing, TheEndsAreTheLayersBeforeAndAfterTheBlocks) {
    // blocks_model: the linear "in" before the blocks, the linear "head" after them (each keeps its input).
    ModelFeatures f = compute_features(blocks_model(8), Precision::bf16);
    for (CheckpointKind kind : {CheckpointKind::none, CheckpointKind::full}) {
        ActivationMemory m = activation_memory(f, Precision::bf16, kind);
        EXPECT_DOUBLE_EQ(m.leading, f.layers.front().cost.saved_activation_bytes);
        EXPECT_DOUBLE_EQ(m.trailing, f.layers.back().cost.saved_activation_bytes);
        EXPECT_GT(m.trailing, 0.0);
    }
}

TEST(Checkpointing, OffloadKeepsOneBlockAndRecomputesNothing) {
    ModelFeatures f = compute_features(blocks_model(8), Precision::bf16);
    ActivationMemory full = activation_memory(f, Precision::bf16, CheckpointKind::full);
    ActivationMemory offload = activation_memory(f, Precision::bf16, CheckpointKind::offload);
    EXPECT_DOUBLE_EQ(offload.block_inputs, 0.0);
    EXPECT_DOUBLE_EQ(offload.recompute_block, full.recompute_block);
    EXPECT_DOUBLE_EQ(offload.saved, full.saved - full.block_inputs);
    for (const auto& lf : f.layers)
        for (const Kernel& k : lf.cost.kernels) EXPECT_FALSE(is_recomputed(lf, k, CheckpointKind::offload));
}

// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", arXiv 2205.05198),
// Table 2: activation bytes per transformer layer of a GPT layer (LayerNorm, attention with dropout, a 4h GELU
// MLP, two residual dropouts) in 16-bit precision with 1-byte dropout masks, for s tokens, micro-batch b, hidden
// h, a heads, t tensor-parallel ranks. GPT-3 6.7B (h 4096, a 32) at s 2048, b 1, in Megatron's half-precision
// model, counted in units of sbh bytes; 5as/h = 80.
namespace {

struct KorthikantiLayer {
    ModelFeatures features;
    double sbh = 2048.0 * 4096.0;

    explicit KorthikantiLayer(std::int64_t tp = 1, bool sequence_parallel = false) {
        ModelInputs in;
        in.seq = 2048;
        in.attention_given = true;  // eager: the paper's attention materialises its scores
        Model model = resolve_model(prenet::testing::source_json("tests/fixtures/hf/gpt3_67.json"), in);
        ParallelLayout l;
        l.tp = tp;
        l.sequence_parallel = sequence_parallel;
        features = compute_features(tp > 1 ? shard_model(model, l) : model, Precision::bf16, MixedRecipe::half_model);
    }
    // One layer's activations under `kind`, in sbh: what the 32 layers keep (outside the blocks excluded) / 32;
    // for the kinds that recompute, what each layer keeps between its forward and backward.
    double per_layer(CheckpointKind kind) const {
        ActivationMemory m = activation_memory(features, Precision::bf16, kind);
        double outside = 0;
        for (const auto& lf : features.layers)
            if (lf.block.empty()) outside += double(lf.repeat) * lf.cost.saved_activation_bytes;
        double kept = kind == CheckpointKind::none || kind == CheckpointKind::attention_core ? m.saved - outside
                                                                                              : m.block_inputs;
        return kept / 32.0 / sbh;
    }
    double recompute_block() const {
        return activation_memory(features, Precision::bf16, CheckpointKind::full).recompute_block / sbh;
    }
};

}  // namespace

TEST(Checkpointing, KorthikantiTable2WithoutParallelism) {
    KorthikantiLayer layer;
    // No recomputation: sbh (34 + 5as/h). Attention 11 sbh + 5as^2b (QKV input 2, Q and K 4, V 2, softmax
    // output 2as^2b, its dropout mask as^2b and output 2as^2b, the output projection's input 2, its dropout
    // mask 1), MLP 19 sbh (input 2, GELU input 8, second linear's input 8, dropout mask 1), two LayerNorms 4.
    EXPECT_NEAR(layer.per_layer(CheckpointKind::none), 34.0 + 80.0, 1e-9);
    // Full recomputation: each layer keeps its input, 2 sbh; the layer recomputed holds all 114 again.
    EXPECT_NEAR(layer.per_layer(CheckpointKind::full), 2.0, 1e-9);
    EXPECT_NEAR(layer.recompute_block(), 114.0, 1e-9);
    // Selective (the attention core recomputed): the paper's 34 sbh. Ours keeps what the fused kernel keeps:
    // q, k, v and its output O, which is the output projection's input (one tensor, counted once), and its fp32
    // log-sum-exp per query and head (4 ab s bytes = 1/32 sbh here), which the paper's unfused core has not.
    EXPECT_NEAR(layer.per_layer(CheckpointKind::attention_core), 34.0 + 1.0 / 32.0, 1e-9);
    // Per-op (PyTorch's selective checkpointing, not in the paper): the input 2 and the projections' outputs,
    // QKV 6, output projection 2, the MLP's 4h up-projection 8 and its down-projection 2: 20 sbh.
    EXPECT_NEAR(layer.per_layer(CheckpointKind::op_level), 20.0, 1e-9);
}

TEST(Checkpointing, KorthikantiTable2WithTensorParallelism) {
    // Tensor parallelism alone (t = 8): sbh (10 + 24/t + 5as/(ht)) = 23 sbh; the LayerNorms (4), the two dropout
    // masks (2) and the attention and MLP inputs (2 + 2) stay whole on every rank.
    EXPECT_NEAR(KorthikantiLayer(8).per_layer(CheckpointKind::none), 10.0 + 24.0 / 8 + 80.0 / 8, 1e-9);
    // With sequence parallelism everything is split: sbh (34/t + 5as/(ht)) = 14.25 sbh; selective 34/t (ours
    // + the fused kernel's log-sum-exp as above); full: the input, 2/t sbh.
    KorthikantiLayer sp(8, true);
    EXPECT_NEAR(sp.per_layer(CheckpointKind::none), (34.0 + 80.0) / 8, 1e-9);
    EXPECT_NEAR(sp.per_layer(CheckpointKind::attention_core), (34.0 + 1.0 / 32.0) / 8, 1e-9);
    EXPECT_NEAR(sp.per_layer(CheckpointKind::full), 2.0 / 8, 1e-9);
}
