#pragma once
// The features the learned efficiency sees: PreNeT's operations, memory and operations-over-peak, the
// roofline terms, GPU wave quantisation, the kernel's dims, and the device's spec-sheet numbers. All are
// dimension-free logs or ratios so that they carry over to devices outside the fitting data.
#include <string>
#include <vector>

#include "hardware/spec.hpp"
#include "ops/kernel.hpp"

namespace prenet {

// Kernel families that get their own fitted model.
std::string model_family(Family family);  // gemm | conv | elementwise | norm | softmax

const std::vector<std::string>& kernel_feature_names();
std::vector<double> kernel_features(const Kernel& kernel, const HardwareSpec& hw);

// GEMM view of a kernel for wave counting: conv as implicit GEMM (M = N*P*Q, N = K, K = C*R*S).
struct GemmView {
    double batch = 1, m = 1, n = 1, k = 1;
};
GemmView gemm_view(const Kernel& kernel);

}  // namespace prenet
