#pragma once
// Optimizer update kernels and state sizes. The update is one fused (multi-tensor) elementwise pass over all
// parameters, as PyTorch's foreach/fused implementations run it.
#include <cstdint>
#include <string>
#include <vector>

#include "ops/kernel.hpp"

namespace prenet {

struct OptimizerDef {
    std::string name;
    double state_bytes_per_param;  // fp32 optimizer states (momentum, variances)
    double bytes_per_param;        // memory traffic of one update per parameter
    double flops_per_param;
};

const OptimizerDef& find_optimizer(const std::string& name);  // sgd | adam | adamw; throws Error
std::vector<Kernel> optimizer_kernels(const OptimizerDef& opt, std::int64_t params, Precision precision);

}  // namespace prenet
