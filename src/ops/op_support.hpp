#pragma once
// Shared helpers for the op family files: reading validated attributes and emitting the common kernel shapes
// (a GEMM with its two backward GEMMs; a vector kernel with its backward).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "ops/kernel.hpp"

namespace prenet::ops {

[[noreturn]] void fail(const Layer& layer, const std::string& message);

std::int64_t int_attr(const Layer& layer, const char* key);                        // required, > 0
std::int64_t int_attr(const Layer& layer, const char* key, std::int64_t fallback);  // optional, >= 0
double number_attr(const Layer& layer, const char* key, double fallback);
bool bool_attr(const Layer& layer, const char* key, bool fallback);
std::string string_attr(const Layer& layer, const char* key, const std::string& fallback);
// An int or a list of `rank` ints (kernel_size: 3 or [3, 3]).
std::vector<std::int64_t> ints_attr(const Layer& layer, const char* key, size_t rank, std::int64_t fallback);

void require_rank(const Layer& layer, size_t min_rank, size_t max_rank);
std::int64_t last_dim(const Shape& s);
std::int64_t leading_elements(const Shape& s);  // product of all but the last dim

// A (batch x) (m x k)(k x n) product. `weight_operand` says the k x n operand is a trainable weight (its
// gradient is a weight gradient); otherwise both operands are activations and both gradients are input
// gradients. The layer's features are accumulated too.
void add_gemm(LayerCost& cost, const Layer& layer, Precision p, const std::string& op, std::int64_t batch,
              std::int64_t m, std::int64_t n, std::int64_t k, bool weight_operand, bool needs_input_grad);

// The bias gradient of a GEMM with a bias over its `features` output columns: PyTorch's linear backward sums
// the output gradient over its rows (`grad.sum(0)`), a reduction pass of its own; the forward adds the bias in
// the GEMM's epilogue.
void add_bias_grad(LayerCost& cost, Precision p, const std::string& op, double rows, double features);

// Autograd's sum of two gradients that reach one tensor (read 2, write 1), in the tensor's type.
Kernel gradient_sum_kernel(const std::string& op, Precision p, double elements);

// Dropout over `elements` elements: forward reads x and writes y and a one-byte mask; backward reads dy and the
// mask and writes dx. The mask is kept for the backward (counted in the saved activations).
void add_dropout(LayerCost& cost, const Layer& layer, Precision p, const std::string& op, double elements);

// A memory-bound kernel over `elements` elements: reads `reads` tensors, writes `writes` tensors of that size,
// `flops_per_element` arithmetic each. Backward reads `reads + 1` and writes `reads` (gradient per input).
// `row_length` is the reduced dim of a row-wise kernel (norm, softmax), which decides its launch shape.
void add_vector(LayerCost& cost, const Layer& layer, Precision p, Family family, const std::string& op,
                double elements, double reads, double writes, double flops_per_element, bool with_backward = true,
                std::int64_t row_length = 0);

}  // namespace prenet::ops
