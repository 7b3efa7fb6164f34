#include <gtest/gtest.h>

#include <sstream>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "predict/op_rows.hpp"

using namespace prenet;

TEST(OpRows, LinearSharesItsWeightAcrossTheBatch) {
    Kernel k = kernel_from_row("linear", {{"b", 4}, {"m", 10}, {"n", 20}, {"k", 30}}, Precision::fp32);
    EXPECT_EQ(k.family, Family::gemm);
    EXPECT_DOUBLE_EQ(k.flops, 2.0 * 4 * 10 * 20 * 30);
    EXPECT_DOUBLE_EQ(k.bytes, (4.0 * 10 * 30 + 30 * 20 + 4 * 10 * 20) * 4);
}

TEST(OpRows, HalfPrecisionHalvesTheBytes) {
    Kernel a = kernel_from_row("bmm", {{"b", 2}, {"m", 64}, {"n", 64}, {"k", 64}}, Precision::fp32);
    Kernel b = kernel_from_row("bmm", {{"b", 2}, {"m", 64}, {"n", 64}, {"k", 64}}, Precision::bf16);
    EXPECT_DOUBLE_EQ(a.bytes, 2 * b.bytes);
    EXPECT_DOUBLE_EQ(a.flops, b.flops);
}

TEST(OpRows, ConvOutputSizeFollowsStrideAndPadding) {
    Kernel k = kernel_from_row("conv", {{"b", 1}, {"in_channels", 3}, {"out_channels", 8}, {"kernel_size", 3},
                                        {"input_size", 32}, {"stride", 2}, {"padding", 1}},
                               Precision::fp32);
    EXPECT_DOUBLE_EQ(k.flops, 2.0 * 16 * 16 * 8 * 3 * 9);
}

TEST(OpRows, SquareConvolutionsUseTheirSizeStrideAndPaddingOnBothAxes) {
    Kernel k = kernel_from_row("conv", {{"b", 4}, {"in_channels", 3}, {"out_channels", 8}, {"kernel_size", 3},
                                        {"input_size", 32}, {"stride", 2}, {"padding", 1}},
                               Precision::fp32);
    ASSERT_TRUE(k.conv);
    EXPECT_EQ(k.conv->n, 4);
    EXPECT_EQ(k.conv->h, k.conv->w);
    EXPECT_EQ(k.conv->r, k.conv->s);
    EXPECT_EQ(k.conv->stride_w, k.conv->stride_h);
    EXPECT_EQ(k.conv->pad_w, k.conv->pad_h);
    Kernel rect = kernel_from_row("conv2d", {{"n", 4}, {"c", 3}, {"h", 32}, {"w", 20}, {"k", 8}, {"filter_h", 3},
                                             {"filter_w", 1}, {"pad_h", 1}, {"pad_w", 0}, {"stride_h", 2},
                                             {"stride_w", 1}},
                                  Precision::fp32);
    ASSERT_TRUE(rect.conv);
    EXPECT_EQ(rect.conv->w, 20);
    EXPECT_EQ(rect.conv->s, 1);
    EXPECT_EQ(rect.conv->stride_w, 1);
    EXPECT_EQ(rect.conv->pad_w, 0);
    EXPECT_NE(*rect.conv, *k.conv);
    EXPECT_TRUE(kernel_from_row("gemm", {{"m", 8}, {"n", 8}, {"k", 8}}, Precision::fp32).conv == std::nullopt);
}

TEST(OpRows, MissingDimOrUnknownOpIsAnError) {
    EXPECT_THROW(kernel_from_row("linear", {{"b", 1}, {"m", 2}}, Precision::fp32), Error);
    EXPECT_THROW(kernel_from_row("fft", {{"b", 1}}, Precision::fp32), Error);
}

TEST(OpRows, TableReadsPrecisionColumnAndIgnoresOthers) {
    std::istringstream in("op,latency_ms,b,h,m,n,k,precision\nadd,0.1,4,8,,,,\nbmm,0.2,1,,16,16,16,bf16\n");
    CsvTable t = read_csv(in, "test");
    auto kernels = kernels_from_table(t, Precision::fp32, "test");
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0].family, Family::elementwise);
    EXPECT_EQ(kernels[1].precision, Precision::bf16);
}

namespace {
DimMap flash_dims() {
    return {{"b", 2}, {"seq", 1024}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 128}, {"causal", 1}};
}
}  // namespace

// A flash_attention row is the kernel the attention layer runs for that shape (ops/kernel.hpp's
// flash_attention_kernels): forward by default, FlashAttention-2's backward with phase backward.
TEST(OpRows, FlashAttentionRowsAreTheLayersKernels) {
    AttentionShape s;
    s.batch = 2, s.heads = 32, s.kv_heads = 8, s.q_len = s.kv_len = 1024, s.qk_dim = s.v_dim = 128, s.causal = true;
    FlashAttentionKernels k = flash_attention_kernels(s, Precision::bf16);
    EXPECT_TRUE(same_timing(kernel_from_row("flash_attention", flash_dims(), Precision::bf16), k.forward));
    EXPECT_TRUE(same_timing(kernel_from_row("flash_attention", flash_dims(), Precision::bf16, Phase::backward_input),
                            k.backward));
    DimMap cross = flash_dims();
    cross["kv_seq"] = 4096;
    s.kv_len = 4096;
    EXPECT_TRUE(same_timing(kernel_from_row("flash_attention", cross, Precision::bf16),
                            flash_attention_kernels(s, Precision::bf16).forward));
    DimMap bad = flash_dims();
    bad["kv_heads"] = 5;
    EXPECT_THROW(kernel_from_row("flash_attention", bad, Precision::bf16), Error);
    bad = flash_dims();
    bad["causal"] = 2;
    EXPECT_THROW(kernel_from_row("flash_attention", bad, Precision::bf16), Error);
    // Only flash_attention takes a phase.
    EXPECT_THROW(kernel_from_row("gemm", {{"m", 8}, {"n", 8}, {"k", 8}}, Precision::fp32, Phase::backward_input), Error);
}

TEST(OpRows, TableReadsThePhaseOfFlashAttentionRowsOnly) {
    std::istringstream in(
        "op,phase,b,seq,heads,kv_heads,head_dim,causal,m,n,k\n"
        "flash_attention,forward,2,1024,32,8,128,1,,,\n"
        "flash_attention,backward,2,1024,32,8,128,1,,,\n"
        "flash_attention,,2,1024,32,8,128,0,,,\n"
        "gemm,backward,,,,,,,8,8,8\n");  // other ops have no phase: the column is not read for them
    auto kernels = kernels_from_table(read_csv(in, "test"), Precision::bf16, "test");
    ASSERT_EQ(kernels.size(), 4u);
    EXPECT_EQ(kernels[0].phase, Phase::forward);
    EXPECT_EQ(kernels[1].phase, Phase::backward_input);
    EXPECT_EQ(kernels[1].op, "flash_attention_backward");
    EXPECT_EQ(kernels[2].phase, Phase::forward);
    EXPECT_GT(kernels[2].flops, kernels[0].flops);  // not causal: every score
    EXPECT_EQ(kernels[3].phase, Phase::forward);

    std::istringstream bad("op,phase,b,seq,heads,kv_heads,head_dim,causal\nflash_attention,sideways,1,16,4,4,64,1\n");
    try {
        kernels_from_table(read_csv(bad, "t.csv"), Precision::bf16, "t.csv");
        FAIL() << "a bad phase word must be an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("column 'phase'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("row 2"), std::string::npos) << e.what();
    }
}
