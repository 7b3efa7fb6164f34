#pragma once
// What the op catalogue produces for a layer: its computational features (the PreNeT paper's operations and
// memory, split by pass) and the list of kernels a training step runs for it, which the predictor times.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/precision.hpp"

namespace prenet {

enum class Family { gemm, conv, elementwise, norm, softmax, gather, attention, rnn, pool, optimizer, loss };
enum class Phase { forward, backward_input, backward_weight, optimizer };

const char* to_string(Family f);
const char* to_string(Phase p);
std::optional<Family> family_from_string(const std::string& name);  // the inverse of to_string; none if unknown

// A convolution as cuDNN is handed it: batch n, input channels c, input h x w, output channels k, filter r x s,
// strides, paddings and groups. A 1-d convolution has w = s = 1, stride_w = 1, pad_w = 0; a 3-d one is described
// by its first two spatial dims.
struct ConvShape {
    std::int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
    std::int64_t stride_h = 1, pad_h = 0, groups = 1, stride_w = 1, pad_w = 0;
    bool operator==(const ConvShape& o) const {
        return n == o.n && c == o.c && h == o.h && w == o.w && k == o.k && r == o.r && s == o.s &&
               stride_h == o.stride_h && pad_h == o.pad_h && groups == o.groups && stride_w == o.stride_w &&
               pad_w == o.pad_w;
    }
    bool operator!=(const ConvShape& o) const { return !(*this == o); }
};

// A fused attention kernel's problem (FlashAttention-2, PyTorch SDPA): `heads` query heads over `kv_heads` key and
// value heads (fewer is GQA, 1 is MQA), queries of `q_len` tokens against `kv_len` keys, per-head dims.
struct AttentionShape {
    std::int64_t batch = 1, heads = 1, kv_heads = 1, q_len = 1, kv_len = 1, qk_dim = 1, v_dim = 1;
    bool causal = false;
    std::int64_t window = 0;  // sliding-window (local) attention: each query sees at most `window` keys; 0: all
    bool chunked = false;     // Llama 4's chunked attention: the window is a fixed chunk, not a band ending at the query
    // The kernel's generation: 2 for FlashAttention-2 and what matches it (SDPA's flash backend, cuDNN,
    // FlashAttention-3), 1 for FlashAttention 1 and Tri Dao's Triton FlashAttention of 2022 (the same work at
    // about half the speed: flash_generation_slowdown in ops/attention.hpp).
    int generation = 2;
    bool operator==(const AttentionShape& o) const {
        return batch == o.batch && heads == o.heads && kv_heads == o.kv_heads && q_len == o.q_len &&
               kv_len == o.kv_len && qk_dim == o.qk_dim && v_dim == o.v_dim && causal == o.causal &&
               window == o.window && chunked == o.chunked && generation == o.generation;
    }
    bool operator!=(const AttentionShape& o) const { return !(*this == o); }
};

struct Kernel {
    Family family = Family::elementwise;
    Phase phase = Phase::forward;
    std::string op;          // "linear", "bmm", "conv2d", "layernorm", "gelu", ...
    double flops = 0;        // FLOPs = 2 x multiply-accumulates for matmul-like work
    double bytes = 0;        // bytes read + written (each operand once)
    Precision precision = Precision::fp32;
    // GEMM-like dims: count independent (m x k)(k x n) products.
    std::int64_t batch = 1, m = 0, n = 0, k = 0;
    std::optional<ConvShape> conv;  // a convolution's shape (its forward and both gradients); none otherwise
    std::optional<AttentionShape> attention;  // a fused attention kernel's problem; none otherwise
    std::int64_t elements = 0;  // elements touched, for vector kernels
};

// A count of elements (computed in double, as FLOPs and bytes are) as a kernel's integer field: within
// limits::tensor_elements, else an Error naming the kernel (casting a larger double to int64 is undefined).
std::int64_t element_count(double elements, const std::string& op);

// A kernel that streams `elements` values once (element-wise passes, casts, accumulations, optimizer steps):
// no matmul dims, just its arithmetic and the bytes it moves.
Kernel streaming_kernel(Family family, Phase phase, std::string op, Precision precision, double elements,
                        double flops, double bytes);

// The fused attention kernels of one attention call, as the attention layer runs them and as a
// `flash_attention` row describes them (one function, so that a measured row and a layer's kernel are the same).
struct FlashAttentionKernels {
    Kernel forward, backward;
    double forward_bytes_read = 0, forward_bytes_written = 0;
    double saved_bytes = 0;  // kept for the backward: q, k, v, the output and the fp32 log-sum-exp per row
};
FlashAttentionKernels flash_attention_kernels(const AttentionShape& shape, Precision precision);

// Two kernels that take the same time on any accelerator: every field a predictor reads is equal. With its hash,
// the key of the kernel-time caches (run/step.cpp per step, predict/cached_predictor.hpp per plan search).
bool same_timing(const Kernel& a, const Kernel& b);
size_t timing_hash(const Kernel& k);

// Whether a kernel is part of an attention layer's core (scores, their scaling, mask, softmax and dropout, the
// context product, or the fused flash kernel) rather than its projections: what Megatron's selective
// recomputation runs again in the backward pass. Defined beside the attention ops that name these kernels.
bool is_attention_core(const Kernel& kernel);

struct LayerCost {
    std::int64_t params = 0;          // unique trainable parameters (tied weights count 0)
    double macs = 0;                  // forward multiply-accumulates of weight layers (linear, conv)
    double forward_flops = 0;
    double backward_input_flops = 0;
    double backward_weight_flops = 0;
    double forward_bytes_read = 0;
    double forward_bytes_written = 0;
    double saved_activation_bytes = 0;  // kept from forward for backward
    // Separate operations that read the layer's input (3 for attention with separate query, key and value
    // projections): autograd sums their input gradients, and autocast casts an fp32 input once per use.
    int input_uses = 1;
    std::vector<Kernel> kernels;         // forward and backward kernels of one execution of the layer
};

}  // namespace prenet
