#include <algorithm>

#include "core/error.hpp"
#include "predict/predictor.hpp"

namespace prenet {

bool uses_matrix_units(Family family) {
    return family == Family::gemm || family == Family::conv || family == Family::attention || family == Family::rnn;
}

bool winograd_eligible(const Kernel& kernel, const HardwareSpec& hw) {
    if (kernel.family != Family::conv || !kernel.conv) return false;
    // Only where the convolution runs on the vector units: FP32, or a half precision on a device without matrix
    // units for it (P100's fp16, at twice FP32). Tensor cores (TF32/FP16/BF16 at 8x or more) run implicit GEMMs,
    // and the measured tensor-core convolutions never beat their direct-FLOP peak.
    if (hw.matmul_flops(kernel.precision) > 2.0 * hw.vector_flops()) return false;
    const ConvShape& c = *kernel.conv;
    return c.r == 3 && c.s == 3 && c.stride_h == 1 && c.stride_w == 1 && c.groups == 1;
}

double bound_flops(const Kernel& kernel, const HardwareSpec& hw) {
    constexpr double kWinogradSaving = 2.25;  // F(2x2, 3x3): 16 multiplies per 2x2 output tile instead of 36
    return winograd_eligible(kernel, hw) ? kernel.flops / kWinogradSaving : kernel.flops;
}

namespace {

double bound_ms(const Kernel& kernel, const HardwareSpec& hw, double flops) {
    double peak = uses_matrix_units(kernel.family) ? hw.matmul_flops(kernel.precision) : hw.vector_flops();
    double memory_s = kernel.bytes / hw.bandwidth_bytes_per_s();
    return 1e3 * std::max(flops / peak, memory_s);
}

}  // namespace

double roofline_bound_ms(const Kernel& kernel, const HardwareSpec& hw) { return bound_ms(kernel, hw, kernel.flops); }

double lower_bound_ms(const Kernel& kernel, const HardwareSpec& hw) {
    return bound_ms(kernel, hw, bound_flops(kernel, hw));
}

double RooflinePredictor::kernel_ms(const Kernel& kernel, const HardwareSpec& hw) const {
    return roofline_bound_ms(kernel, hw) + kLaunchMs;
}


}  // namespace prenet
