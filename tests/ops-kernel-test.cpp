// Kernels (ops/kernel.hpp): family names and typed shapes.
#include "ops/kernel.hpp"

#include <gtest/gtest.h>

#include <set>

#include "graph/builder.hpp"
#include "ops/catalogue.hpp"

using namespace prenet;

TEST(Kernel, FamilyNamesRoundTrip) {
    for (Family f : {Family::gemm, Family::conv, Family::elementwise, Family::norm, Family::softmax, Family::gather,
                     Family::attention, Family::rnn, Family::pool, Family::optimizer, Family::loss})
        EXPECT_EQ(family_from_string(to_string(f)), f) << to_string(f);
    EXPECT_FALSE(family_from_string("gemmm"));
}

TEST(Kernel, ConvolutionsCarryTheirNamedShape) {
    ModelBuilder b("t", {2, 3, 9, 12}, infer_shape);
    b.add("conv2d", "c", {{"out_channels", 8}, {"kernel_size", {3, 5}}, {"stride", {1, 2}}, {"padding", {1, 2}},
                         {"groups", 1}});
    Model m = b.finish("vision", 0);
    const Layer& l = m.blocks[0].layers[0];
    LayerCost cost = layer_cost(l, Precision::fp32);
    int convs = 0;
    for (const Kernel& k : cost.kernels) {
        if (k.family != Family::conv) {
            EXPECT_FALSE(k.conv) << k.op;
            continue;
        }
        ++convs;
        ASSERT_TRUE(k.conv) << k.op;
        const ConvShape& c = *k.conv;
        EXPECT_EQ(c.n, l.input[0]);
        EXPECT_EQ(c.c, l.input[1]);
        EXPECT_EQ(c.h, l.input[2]);
        EXPECT_EQ(c.w, l.input[3]);
        EXPECT_EQ(c.k, l.output[1]);
        EXPECT_EQ(c.r, 3);
        EXPECT_EQ(c.s, 5);
        EXPECT_EQ(c.stride_h, 1);
        EXPECT_EQ(c.stride_w, 2);
        EXPECT_EQ(c.pad_h, 1);
        EXPECT_EQ(c.pad_w, 2);
        EXPECT_EQ(c.groups, 1);
    }
    EXPECT_EQ(convs, 2);  // forward and weight gradient (the first layer computes no input gradient)
}

namespace {
AttentionShape gqa_shape(bool causal) {
    AttentionShape s;
    s.batch = 2, s.heads = 32, s.kv_heads = 8, s.q_len = 1024, s.kv_len = 1024, s.qk_dim = s.v_dim = 128;
    s.causal = causal;
    return s;
}
}  // namespace

// K and V are read once per key/value head: GQA's 8 KV heads move a quarter of MHA's K and V bytes.
TEST(FlashAttentionKernels, CountKeysAndValuesPerKeyValueHead) {
    AttentionShape gqa = gqa_shape(false), mha = gqa;
    mha.kv_heads = mha.heads;
    FlashAttentionKernels a = flash_attention_kernels(gqa, Precision::bf16), b = flash_attention_kernels(mha, Precision::bf16);
    double q = 2.0 * 32 * 1024 * 128 * 2, kv_mha = 2.0 * 32 * 1024 * (128 + 128) * 2;
    EXPECT_DOUBLE_EQ(b.forward_bytes_read, q + kv_mha);
    EXPECT_DOUBLE_EQ(a.forward_bytes_read, q + kv_mha / 4);
    EXPECT_DOUBLE_EQ(a.forward.flops, b.forward.flops);  // every query head still does its products
    EXPECT_LT(a.backward.bytes, b.backward.bytes);
    EXPECT_LT(a.saved_bytes, b.saved_bytes);
}

// Causal masking counts the unmasked score elements exactly: (seq + 1) / (2 seq) of the full products.
TEST(FlashAttentionKernels, CausalCountsTheUnmaskedScores) {
    FlashAttentionKernels full = flash_attention_kernels(gqa_shape(false), Precision::bf16);
    FlashAttentionKernels causal = flash_attention_kernels(gqa_shape(true), Precision::bf16);
    EXPECT_DOUBLE_EQ(full.forward.flops, 2.0 * 2 * 32 * 1024.0 * 1024 * (128 + 128));
    EXPECT_NEAR(causal.forward.flops / full.forward.flops, 1025.0 / 2048.0, 1e-12);
    EXPECT_DOUBLE_EQ(causal.backward.flops, 2.5 * causal.forward.flops);
    EXPECT_EQ(causal.backward.phase, Phase::backward_input);
    EXPECT_EQ(causal.forward.family, Family::attention);
    // FlashAttention-2's work decomposition: batch x heads, m = queries, n = value head dim, k = keys.
    EXPECT_EQ(causal.forward.batch, 64);
    EXPECT_EQ(causal.forward.m, 1024);
    EXPECT_EQ(causal.forward.n, 128);
    EXPECT_EQ(causal.forward.k, 1024);
    EXPECT_FALSE(same_timing(full.forward, causal.forward));
    AttentionShape other = gqa_shape(true);
    other.kv_heads = 4;  // same FLOPs, other bytes and shape
    EXPECT_FALSE(same_timing(causal.forward, flash_attention_kernels(other, Precision::bf16).forward));
}

// The attention layer with flash runs exactly the kernels flash_attention_kernels builds for its shape.
TEST(FlashAttentionKernels, AreTheKernelsTheAttentionLayerRuns) {
    ModelBuilder b("t", {2, 1024, 4096}, infer_shape);
    b.add("attention", "attn", {{"heads", 32}, {"kv_heads", 8}, {"causal", true}, {"flash", true}});
    Model m = b.finish("language", 1024);
    LayerCost cost = layer_cost(m.blocks[0].layers[0], Precision::bf16);
    FlashAttentionKernels expected = flash_attention_kernels(gqa_shape(true), Precision::bf16);
    int found = 0;
    for (const auto& k : cost.kernels) {
        if (k.op == "flash_attention") {
            EXPECT_TRUE(same_timing(k, expected.forward));
            ++found;
        }
        if (k.op == "flash_attention_backward") {
            EXPECT_TRUE(same_timing(k, expected.backward));
            ++found;
        }
    }
    EXPECT_EQ(found, 2);
}

// Kernels equal in every number but their op (an imported graph's thousands of distinct unknown ops, each costed
// memory-bound over one shape) must not share a hash: the kernel-time caches key on it, and one bucket for all of
// them made a step's lookups quadratic (40,000 op types took minutes, issue 27).
TEST(Kernel, TimingHashTellsOpsApart) {
    std::set<size_t> hashes;
    for (int i = 0; i < 1000; ++i) {
        Kernel k = streaming_kernel(Family::elementwise, Phase::forward, "Op" + std::to_string(i), Precision::fp32,
                                    4096, 4096, 32768);
        hashes.insert(timing_hash(k));
    }
    EXPECT_GT(hashes.size(), 990u);
}
