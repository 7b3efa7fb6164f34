#pragma once
// Kernels described as rows of a measurement table (the NeuSight layout: an `op` column and its dims), as
// `prenet kernels --csv` reads them and as the fitting data stores them.
#include <functional>
#include <map>
#include <string>

#include "core/csv.hpp"
#include "ops/kernel.hpp"

namespace prenet {

struct HardwareSpec;

using DimMap = std::map<std::string, double>;

// op: linear, bmm (b, m, n, k); gemm (m, n, k); conv (b, in_channels, out_channels, kernel_size, input_size,
// stride, padding); conv2d, conv2d_grad_input, conv2d_grad_weight (n, c, h, w, k, filter_h, filter_w, pad_h,
// pad_w, stride_h, stride_w); flash_attention (b, seq, heads, kv_heads, head_dim, causal 0|1, optional kv_seq =
// seq: fused attention as ops/kernel.hpp's flash_attention_kernels builds it, the forward kernel or, with phase
// backward, FlashAttention-2's backward); ln, softmax, add, mul, div, pow (two inputs), addu, mulu, divu, powu
// (tensor and scalar), gelu, relu, tanh (b, h). Throws Error for unknown ops, missing dims, or a phase on an op
// other than flash_attention.
Kernel kernel_from_row(const std::string& op, const DimMap& dims, Precision precision,
                       Phase phase = Phase::forward);
// The same kernel as it runs on `runs_on`: a matrix-unit kernel (GEMM, convolution, attention, RNN) at a precision
// that device has no units for is the kernel at the precision it runs as there (hardware/precision_support.hpp);
// its Kernel's precision says which.
Kernel kernel_from_row_on(const std::string& op, const DimMap& dims, Precision precision, Phase phase,
                          const HardwareSpec& runs_on);
bool is_known_row_op(const std::string& op);
// A table's `phase` column (forward | backward) for an op that takes one (flash_attention); throws Error
// naming the column otherwise.
Phase parse_row_phase(const std::string& op, const std::string& text);

// Kernels of a table in the NeuSight layout (column `op`, its dims, optional `precision`, and `phase` read for
// flash_attention rows only); other columns are ignored. `precision` is the default for rows without one.
// Rows whose op `skip` accepts (collectives, which `prenet kernels` times with the collective model) are left
// to the caller: their entry is a default Kernel, not read.
// With `runs_on`, a matrix-unit row (GEMM, convolution, attention, RNN) at a precision that device has no units
// for is the same row at the precision it runs as there (hardware/precision_support.hpp): its Kernel's
// precision says which.
std::vector<Kernel> kernels_from_table(const CsvTable& table, Precision precision, const std::string& origin,
                                       const std::function<bool(const std::string& op)>& skip = {},
                                       const HardwareSpec* runs_on = nullptr);
double parse_number(const std::string& text, const std::string& where);

}  // namespace prenet
