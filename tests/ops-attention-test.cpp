// ops/attention.hpp: the share of a FlashAttention backward that recomputes the forward's scores.
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

}  // namespace
}  // namespace prenet
