#pragma once
// A PyTorch profiler trace (`torch.profiler` ... `export_chrome_trace`, the Chrome trace-event JSON) as measured
// kernel time per kernel family and step (docs/calibration.md "Profiler traces"): each GPU kernel (events of
// category "kernel", durations in microseconds) is put in a family by its name (cuBLAS/CUTLASS GEMMs, cuDNN
// convolutions, FlashAttention, PyTorch's norm, softmax, loss, optimizer and element-wise kernels), and the sums
// are divided by the profiled steps (the `ProfilerStep#N` spans; one when the trace has none).
// Where the trace recorded shapes (`record_shapes=True`), a kernel is matched by shape instead: its "External id"
// names the CPU operator that launched it, whose "Input Dims", "Input type" and "Concrete Inputs" say which of
// PreNeT's kernels it is (a matrix product, a convolution and its backward, FlashAttention-2 forward and backward,
// a layer norm, a softmax, an element-wise operation: shaped_operator_kernels()), so that it is compared with the
// kernel model's time for that very shape rather than with a model's family total.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/kernel.hpp"
#include "predict/op_rows.hpp"

namespace prenet {

// One of PreNeT's kernels as a row of a kernel table (predict/op_rows.hpp): what kernel_from_row builds.
struct KernelRow {
    std::string op;
    DimMap dims;
    Phase phase = Phase::forward;  // backward_input: FlashAttention-2's backward (the one op that takes a phase)
};

// Calls of one CPU operator with the same shapes and element type, matched by shape: the kernels PreNeT times
// one call as, and the GPU time of every kernel those calls launched.
struct ShapedOperator {
    std::string name;               // the operator as the trace names it (aten::mm)
    std::vector<KernelRow> kernels;  // one call's kernels (a convolution's backward: its data and weight gradients)
    Precision precision = Precision::fp32;  // of its inputs (fp32 runs as TF32 where the run allowed it)
    double calls_per_step = 0;
    double ms_per_step = 0;
    std::int64_t gpu_kernels = 0;  // GPU kernel events of those calls, all steps
};

struct ProfiledKernels {
    std::map<Family, double> ms_per_step;  // GPU kernel time per step by family, kernels not matched by shape
    std::vector<ShapedOperator> shaped;    // kernels matched by shape, by operator, shapes and element type
    double steps = 1;                      // profiled steps the sums were divided by
    std::int64_t kernels = 0;              // GPU kernel events read
    std::int64_t unrecognised = 0;         // of the name-matched ones, named like no family (counted as element-wise)
};

// The kernels one call of a CPU operator runs, from its recorded input shapes (`dims`: "Input Dims"), element
// types ("Input type") and scalar arguments ("Concrete Inputs", strings; may be empty where the trace has none);
// none where the operator is not one PreNeT can time by shape or its arguments are not what that needs (a
// convolution with groups or dilation, a softmax over another dimension than the last, broadcasting operands).
std::optional<ShapedOperator> shaped_operator_kernels(const std::string& name, const nlohmann::json& dims,
                                                      const nlohmann::json& types, const nlohmann::json& concrete);

// The family a GPU kernel's name belongs to; none for a name like no family's.
std::optional<Family> kernel_family_from_name(const std::string& name);

// Throws Error (field "measurements", naming `where`) for a document that is not a trace or has no GPU kernel.
ProfiledKernels read_profiler_trace(const nlohmann::json& trace, const std::string& where);

}  // namespace prenet
