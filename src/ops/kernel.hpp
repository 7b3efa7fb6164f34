#pragma once
// What the op catalogue produces for a layer: its computational features (the PreNeT paper's operations and
// memory, split by pass) and the list of kernels a training step runs for it, which the predictor times.
#include <cstdint>
#include <string>
#include <vector>

#include "core/precision.hpp"

namespace prenet {

enum class Family { gemm, conv, elementwise, norm, softmax, gather, attention, rnn, pool, optimizer, loss };
enum class Phase { forward, backward_input, backward_weight, optimizer };

const char* to_string(Family f);
const char* to_string(Phase p);

struct Kernel {
    Family family = Family::elementwise;
    Phase phase = Phase::forward;
    std::string op;          // "linear", "bmm", "conv2d", "layernorm", "gelu", ...
    double flops = 0;        // FLOPs = 2 x multiply-accumulates for matmul-like work
    double bytes = 0;        // bytes read + written (each operand once)
    Precision precision = Precision::fp32;
    // GEMM-like dims: count independent (m x k)(k x n) products; conv: n,c,h,w,k,r,s,stride,pad in conv_dims.
    std::int64_t batch = 1, m = 0, n = 0, k = 0;
    std::vector<std::int64_t> conv_dims;
    std::int64_t elements = 0;  // elements touched, for vector kernels
};

// A kernel that streams `elements` values once (element-wise passes, casts, accumulations, optimizer steps):
// no matmul dims, just its arithmetic and the bytes it moves.
Kernel streaming_kernel(Family family, Phase phase, std::string op, Precision precision, double elements,
                        double flops, double bytes);

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
