#pragma once
// A PyTorch profiler trace (`torch.profiler` ... `export_chrome_trace`, the Chrome trace-event JSON) as measured
// kernel time per kernel family and step (docs/calibration.md "Profiler traces"): each GPU kernel (events of
// category "kernel", durations in microseconds) is put in a family by its name (cuBLAS/CUTLASS GEMMs, cuDNN
// convolutions, FlashAttention, PyTorch's norm, softmax, loss, optimizer and element-wise kernels), and the sums
// are divided by the profiled steps (the `ProfilerStep#N` spans; one when the trace has none). Shapes are not read:
// the trace keeps them on CPU operators, not on the kernels a calibration compares.
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ops/kernel.hpp"

namespace prenet {

struct ProfiledKernels {
    std::map<Family, double> ms_per_step;  // GPU kernel time per step by family
    double steps = 1;                      // profiled steps the sums were divided by
    std::int64_t kernels = 0;              // GPU kernel events read
    std::int64_t unrecognised = 0;         // of which named like no family (counted as element-wise)
};

// The family a GPU kernel's name belongs to; none for a name like no family's.
std::optional<Family> kernel_family_from_name(const std::string& name);

// Throws Error (field "measurements", naming `where`) for a document that is not a trace or has no GPU kernel.
ProfiledKernels read_profiler_trace(const nlohmann::json& trace, const std::string& where);

}  // namespace prenet
