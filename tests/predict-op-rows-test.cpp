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
