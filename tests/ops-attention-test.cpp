// ops/attention.hpp: the share of a FlashAttention backward that recomputes the forward's scores; the score elements
// a sliding or chunked window leaves; the first generation's slowdown.
#include "ops/attention.hpp"

#include <gtest/gtest.h>

namespace prenet {
namespace {

// The backward's recomputed q k^T: 2 x scores x qk_dim, one of its five products when qk_dim = v_dim.
TEST(FlashAttentionKernels, BackwardRecomputeIsTheScoresProduct) {
    AttentionShape s;
    s.batch = 1, s.heads = s.kv_heads = 2, s.q_len = s.kv_len = 4, s.qk_dim = s.v_dim = 8;
    FlashAttentionKernels k = flash_attention_kernels(s, Precision::bf16);
    // scores 1 x 2 x 4 x 4 = 32: forward 2 x 32 x 16 = 1024, backward 2560, recompute 2 x 32 x 8 = 512.
    EXPECT_DOUBLE_EQ(k.backward.flops, 2560.0);
    EXPECT_DOUBLE_EQ(flash_backward_recompute_flops(k.backward), 512.0);
    EXPECT_EQ(flash_backward_recompute_flops(k.forward), 0.0);
    s.v_dim = 4;  // forward 2 x 32 x 12 = 768, backward 1920; q k^T is still 2 x 32 x 8
    EXPECT_DOUBLE_EQ(flash_backward_recompute_flops(flash_attention_kernels(s, Precision::bf16).backward), 512.0);
}

// A causal query i sees min(i + 1, w) keys under a sliding window of w, and (i mod w) + 1 under Llama 4's chunks of w.
// At 16384 tokens and w 8192: 8192 x 8193 / 2 + 8192 x 8192 = 100,667,392 scores sliding, 2 x 8192 x 8193 / 2 =
// 67,117,056 chunked (two whole chunks), against 16384 x 16385 / 2 = 134,225,920 unwindowed.
TEST(FlashAttentionKernels, ChunkedWindowSeesTheKeysOfItsOwnChunk) {
    AttentionShape s;
    s.batch = s.heads = s.kv_heads = 1, s.q_len = s.kv_len = 16384, s.qk_dim = s.v_dim = 64, s.causal = true;
    auto scores = [](const AttentionShape& shape) {
        return flash_attention_kernels(shape, Precision::bf16).forward.flops / (2.0 * 128);
    };
    EXPECT_DOUBLE_EQ(scores(s), 134225920.0);
    s.window = 8192;
    EXPECT_DOUBLE_EQ(scores(s), 100667392.0);
    s.chunked = true;
    EXPECT_DOUBLE_EQ(scores(s), 67117056.0);
    s.q_len = s.kv_len = 10000;  // one whole chunk and 1808 tokens of the next
    EXPECT_DOUBLE_EQ(scores(s), 8192.0 * 8193 / 2 + 1808.0 * 1809 / 2);
    s.q_len = s.kv_len = 4096;  // shorter than a chunk: plain causal attention
    EXPECT_DOUBLE_EQ(scores(s), 4096.0 * 4097 / 2);
}

// A first-generation fused kernel (FlashAttention 1, Triton's of 2022) does the same work as FlashAttention-2 at
// the published 230 / 124 TFLOP/s ratio; every other kernel keeps its time. The generation is part of a kernel's
// timing identity, so that caches keep the two apart.
TEST(FlashAttentionKernels, FirstGenerationIsThePublishedRatioSlower) {
    AttentionShape s;
    s.batch = 2, s.heads = s.kv_heads = 8, s.q_len = s.kv_len = 1024, s.qk_dim = s.v_dim = 128, s.causal = true;
    FlashAttentionKernels second = flash_attention_kernels(s, Precision::bf16);
    s.generation = 1;
    FlashAttentionKernels first = flash_attention_kernels(s, Precision::bf16);
    EXPECT_EQ(flash_generation_slowdown(second.forward), 1.0);
    EXPECT_EQ(flash_generation_slowdown(second.backward), 1.0);
    EXPECT_DOUBLE_EQ(flash_generation_slowdown(first.forward), 230.0 / 124.0);
    EXPECT_DOUBLE_EQ(flash_generation_slowdown(first.backward), 230.0 / 124.0);
    EXPECT_DOUBLE_EQ(first.forward.flops, second.forward.flops);  // the same work
    EXPECT_FALSE(same_timing(first.forward, second.forward));
    Kernel gemm;
    gemm.family = Family::gemm;
    EXPECT_EQ(flash_generation_slowdown(gemm), 1.0);
}

}  // namespace
}  // namespace prenet
