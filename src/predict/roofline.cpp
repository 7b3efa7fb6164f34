#include <algorithm>

#include "core/error.hpp"
#include "predict/predictor.hpp"

namespace prenet {

bool uses_matrix_units(Family family) {
    return family == Family::gemm || family == Family::conv || family == Family::attention || family == Family::rnn;
}

double roofline_bound_ms(const Kernel& kernel, const HardwareSpec& hw) {
    double peak = uses_matrix_units(kernel.family) ? hw.matmul_flops(kernel.precision) : hw.vector_flops();
    double compute_s = kernel.flops / peak;
    double memory_s = kernel.bytes / hw.bandwidth_bytes_per_s();
    return 1e3 * std::max(compute_s, memory_s);
}

double RooflinePredictor::kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const {
    return roofline_bound_ms(kernel, hw) + kLaunchMs;
}


}  // namespace prenet
