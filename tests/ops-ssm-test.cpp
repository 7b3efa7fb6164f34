// ops/ssm.cpp: the state-space kinds' shapes, parameters and FLOPs against hand counts from the papers' formulas,
// and the attributes they refuse.
#include "ops/ssm.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

Layer make(const std::string& kind, Shape input, json attrs) {
    Layer l;
    l.kind = kind;
    l.name = kind;
    l.input = std::move(input);
    l.attrs = std::move(attrs);
    infer_shape(l);
    return l;
}

double sum_flops(const LayerCost& c, const std::string& op_part, Phase phase) {
    double f = 0;
    for (const auto& k : c.kernels)
        if (k.phase == phase && k.op.find(op_part) != std::string::npos) f += k.flops;
    return f;
}

std::string refusal(const std::string& kind, Shape input, json attrs) {
    try {
        make(kind, std::move(input), std::move(attrs));
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(OpsSsm, SelectiveScanFlopsAreTheReferenceCount) {
    // B 2, L 1024, D 1536, N 16: 9 B L D N + B L D (D skip) + B L D (z gate).
    Layer scan = make("selective_scan", {2, 1024, 1536}, {{"d_state", 16}});
    EXPECT_EQ(scan.output, (Shape{2, 1024, 1536}));
    LayerCost c = layer_cost(scan, Precision::bf16);
    const double bld = 2.0 * 1024 * 1536;
    EXPECT_DOUBLE_EQ(c.forward_flops, 9 * bld * 16 + 2 * bld);
    EXPECT_DOUBLE_EQ(selective_scan_reference_flops(2, 1024, 1536, 16, true), 9 * bld * 16 + 2 * bld);
    EXPECT_DOUBLE_EQ(c.backward_input_flops + c.backward_weight_flops, 2 * c.forward_flops);
    EXPECT_EQ(c.params, 1536 * 16 + 1536);  // A and D
    // One fused kernel: it reads u, delta, z, B and C once and writes y (bf16, 2 bytes per element).
    ASSERT_EQ(c.kernels.front().family, Family::elementwise);
    EXPECT_GT(c.kernels.front().bytes, 4 * bld * 2.0);
    EXPECT_LT(c.kernels.front().bytes, 5 * bld * 2.0);
    // Ungated, one flop per element less and no z.
    Layer plain = make("selective_scan", {2, 1024, 1536}, {{"d_state", 16}, {"gated", false}});
    EXPECT_DOUBLE_EQ(layer_cost(plain, Precision::bf16).forward_flops, 9 * bld * 16 + bld);
}

TEST(OpsSsm, SelectiveScanIsTimedByItsLaneInstructionsNotItsFlops) {
    // The kernel is timed by 22 FP32 slots per state element and 32 per channel element (the gate, softplus and
    // skip), 2.4x its 9 B L D N FLOPs at N 16; the backward by 52 and 64.
    Layer scan = make("selective_scan", {2, 1024, 1536}, {{"d_state", 16}});
    LayerCost c = layer_cost(scan, Precision::bf16);
    const double bld = 2.0 * 1024 * 1536;
    EXPECT_DOUBLE_EQ(selective_scan_forward_slots(2, 1024, 1536, 16, true), bld * (22 * 16 + 32));
    EXPECT_DOUBLE_EQ(selective_scan_forward_slots(2, 1024, 1536, 16, false), bld * (22 * 16 + 20));
    EXPECT_DOUBLE_EQ(sum_flops(c, "selective_scan", Phase::forward), bld * (22 * 16 + 32));
    EXPECT_DOUBLE_EQ(sum_flops(c, "selective_scan_backward", Phase::backward_input), bld * (52 * 16 + 64));
    // The FLOPs the step reports (and its MFU) stay the reference count.
    EXPECT_DOUBLE_EQ(c.forward_flops, selective_scan_reference_flops(2, 1024, 1536, 16, true));
    EXPECT_GT(selective_scan_forward_slots(2, 1024, 1536, 16, true),
              2.3 * selective_scan_reference_flops(2, 1024, 1536, 16, true));
    // The backward's atomic adds into dB and dC (every channel's share of each, B L D N apiece) are memory
    // traffic, 8 bytes each: they outweigh its streamed tensors.
    double backward_bytes = 0;
    for (const auto& k : c.kernels)
        if (k.op == "selective_scan_backward") backward_bytes = k.bytes;
    EXPECT_GT(backward_bytes, 2.0 * bld * 16 * 8.0);
    EXPECT_LT(backward_bytes, 2.0 * bld * 16 * 8.0 + 10.0 * bld * 2.0);
}

TEST(OpsSsm, SsdMatmulsFollowTheChunkedAlgorithm) {
    // Mamba-2 2.7B's mixer: 80 heads of 64, N 128, one group, chunks of 256; 2 sequences of 2048 tokens.
    Layer ssd = make("ssd", {2, 2048, 5120}, {{"head_dim", 64}, {"d_state", 128}, {"chunk", 256}});
    LayerCost c = layer_cost(ssd, Precision::bf16);
    // 2 B L [G Q N + H Q P + 2 H N P]
    const double hand = 2.0 * 2 * 2048 * (1.0 * 256 * 128 + 80.0 * 256 * 64 + 2.0 * 80 * 128 * 64);
    EXPECT_DOUBLE_EQ(ssd_reference_matmul_flops(2, 2048, 80, 64, 128, 1, 256), hand);
    double gemm = 0;
    for (const auto& k : c.kernels)
        if (k.phase == Phase::forward && k.family == Family::gemm) gemm += k.flops;
    EXPECT_DOUBLE_EQ(gemm, hand);
    EXPECT_EQ(c.params, 3 * 80);  // A, D, dt bias per head
    // Each head weighs its group's C B^T by its decays over the causal half of every chunk: 14 FP32 slots per
    // element forward, twice that backward, reading the fp32 C B^T again per head.
    const double decays = 2.0 * (2048 / 256) * 80 * 256.0 * 257 / 2;
    EXPECT_DOUBLE_EQ(sum_flops(c, "ssd_chunk_scan_decay", Phase::forward), 14 * decays);
    EXPECT_DOUBLE_EQ(sum_flops(c, "ssd_chunk_scan_decay_backward", Phase::backward_input), 28 * decays);
    // Each product's two gradients: the backward matmuls are twice the forward's.
    double backward_gemm = 0;
    for (const auto& k : c.kernels)
        if (k.phase != Phase::forward && k.family == Family::gemm) backward_gemm += k.flops;
    EXPECT_DOUBLE_EQ(backward_gemm, 2 * hand);
    // A sequence not a whole number of chunks pays for the last one whole.
    Layer ragged = make("ssd", {1, 300, 128}, {{"head_dim", 64}, {"d_state", 16}, {"chunk", 256}});
    EXPECT_DOUBLE_EQ(ssd_reference_matmul_flops(1, 300, 2, 64, 16, 1, 256),
                     2.0 * 512 * (256.0 * 16 + 2.0 * 256 * 64 + 2.0 * 2 * 16 * 64));
    EXPECT_GT(sum_flops(layer_cost(ragged, Precision::fp32), "ssd_chunk_cb", Phase::forward), 0);
}

TEST(OpsSsm, CausalConvIsDepthwise) {
    Layer conv = make("causal_conv1d", {2, 64, 256}, {{"kernel_size", 4}});
    LayerCost c = layer_cost(conv, Precision::bf16);
    EXPECT_EQ(c.params, 256 * 4 + 256);
    EXPECT_DOUBLE_EQ(c.forward_flops, 2.0 * 64 * 256 * (2 * 4 + 1 + 8));
    EXPECT_EQ(layer_cost(make("causal_conv1d", {2, 64, 256}, {{"bias", false}}), Precision::bf16).params, 256 * 4);
}

TEST(OpsSsm, MambaMixerParametersAreTheCheckpointsTensors) {
    // Mamba-130M's mixer: d 768, d_inner 1536, N 16, dt_rank 48, conv 4 with bias; in_proj 768 x 3072,
    // conv 1536 x 5, x_proj 1536 x 80, dt_proj 48 x 1536 + 1536, A_log 1536 x 16, D 1536, out_proj 1536 x 768.
    Layer m = make("mamba", {1, 128, 768}, {{"intermediate", 1536}, {"d_state", 16}, {"dt_rank", 48}});
    LayerCost c = layer_cost(m, Precision::fp32);
    EXPECT_EQ(c.params, 768 * 3072 + 1536 * 5 + 1536 * 80 + 48 * 1536 + 1536 + 1536 * 16 + 1536 + 1536 * 768);
    // The scan inside is the standalone kind's.
    EXPECT_DOUBLE_EQ(sum_flops(c, "selective_scan", Phase::forward),
                     selective_scan_forward_slots(1, 128, 1536, 16, true));
    // mamba_inner_fn's einops copies between the scan's [b, d, l] and the projections' [(b l), d]: 2 forward,
    // 4 backward, each reading and writing [128, 1536] (fp32 here).
    double forward_copy = 0, backward_copy = 0;
    for (const auto& k : c.kernels) {
        if (k.op == "layout_copies") forward_copy += k.bytes;
        if (k.op == "layout_copies_backward") backward_copy += k.bytes;
    }
    EXPECT_DOUBLE_EQ(forward_copy, 2 * 128.0 * 1536 * 2 * 4);
    EXPECT_DOUBLE_EQ(backward_copy, 4 * 128.0 * 1536 * 2 * 4);
    // Jamba's weighted dt/B/C norms add dt_rank + 2 N.
    Layer jamba = make("mamba", {1, 128, 768},
                       {{"intermediate", 1536}, {"d_state", 16}, {"dt_rank", 48}, {"inner_norms", "weighted"}});
    EXPECT_EQ(layer_cost(jamba, Precision::fp32).params, c.params + 48 + 32);
    EXPECT_EQ(op_traits(m).tensor_split, TensorSplit::hidden_units);
    EXPECT_FALSE(is_attention("mamba"));
}

TEST(OpsSsm, MixersKeepWhatTheFusedFunctionsKeep) {
    // mamba_inner_fn (checkpoint_lvl 1): xz (2 d_inner), x_proj's output (R + 2N), the scan's output (d_inner) and
    // its fp32 chunk states (2N per channel per 2048 tokens), plus the layer's input; the convolution and dt_proj
    // run again in the backward pass.
    Layer m = make("mamba", {1, 128, 768}, {{"intermediate", 1536}, {"d_state", 16}, {"dt_rank", 48}});
    LayerCost c = layer_cost(m, Precision::fp32);
    EXPECT_DOUBLE_EQ(c.saved_activation_bytes, 128.0 * (768 + 2 * 1536 + 48 + 32 + 1536) * 4 + 1536.0 * 2 * 16 * 4);
    auto has = [&](const LayerCost& cost, const std::string& op) {
        for (const auto& k : cost.kernels)
            if (k.op == op && k.phase == Phase::backward_input) return true;
        return false;
    };
    EXPECT_TRUE(has(c, "causal_conv1d_recompute"));
    EXPECT_TRUE(has(c, "dt_proj_recompute"));
    // mamba_split_conv1d_scan_combined: in_proj's output, SSD's output and the norm's rstd, plus the layer's input.
    Layer m2 = make("mamba2", {1, 256, 256}, {{"intermediate", 512}, {"head_dim", 64}, {"d_state", 16}});
    LayerCost c2 = layer_cost(m2, Precision::fp32);
    EXPECT_DOUBLE_EQ(c2.saved_activation_bytes, 256.0 * ((256 + (2 * 512 + 2 * 16 + 8) + 512) * 4 + 4));
    EXPECT_TRUE(has(c2, "causal_conv1d_recompute"));
}

TEST(OpsSsm, Mamba2MixerParametersAreTheCheckpointsTensors) {
    // Mamba-2 2.7B's mixer: d 2560, d_inner 5120, 80 heads of 64, N 128, one group: in_proj 2560 x
    // (2 x 5120 + 2 x 128 + 80), conv (5120 + 256) x 5, A, D, dt bias 3 x 80, norm 5120, out_proj 5120 x 2560.
    Layer m = make("mamba2", {1, 512, 2560}, {{"intermediate", 5120}, {"head_dim", 64}, {"d_state", 128}});
    EXPECT_EQ(layer_cost(m, Precision::fp32).params,
              2560LL * 10576 + 5376 * 5 + 240 + 5120 + 5120LL * 2560);
}

TEST(OpsSsm, BadAttributesAreRefused) {
    EXPECT_NE(refusal("selective_scan", {1, 8, 16}, json::object()).find("d_state"), std::string::npos);
    EXPECT_NE(refusal("selective_scan", {1, 8, 16}, {{"d_state", 4096}}).find("d_state"), std::string::npos);
    EXPECT_NE(refusal("selective_scan", {8, 16}, {{"d_state", 16}}).find("rank"), std::string::npos);
    EXPECT_NE(refusal("ssd", {1, 8, 100}, {{"head_dim", 64}}).find("head_dim"), std::string::npos);
    EXPECT_NE(refusal("ssd", {1, 8, 192}, {{"head_dim", 64}, {"ssm_groups", 2}}).find("ssm_groups"), std::string::npos);
    EXPECT_NE(refusal("ssd", {1, 8, 128}, {{"chunk", 0}}).find("chunk"), std::string::npos);
    EXPECT_NE(refusal("causal_conv1d", {1, 8, 16}, {{"kernel_size", 1000}}).find("kernel_size"), std::string::npos);
    EXPECT_NE(refusal("mamba", {1, 8, 16}, {{"intermediate", 32}, {"d_state", 16}}).find("dt_rank"), std::string::npos);
    EXPECT_NE(refusal("mamba", {1, 8, 16}, {{"intermediate", 32}, {"d_state", 16}, {"dt_rank", 1}, {"inner_norms", "x"}})
                  .find("inner_norms"),
              std::string::npos);
    EXPECT_NE(refusal("mamba2", {1, 8, 16}, {{"d_state", 16}}).find("intermediate"), std::string::npos);
    EXPECT_NE(refusal("mamba2", {1, 8, 16}, {{"intermediate", 96}, {"head_dim", 64}}).find("head_dim"),
              std::string::npos);
}

}  // namespace
}  // namespace prenet
