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
Family model_family(Family family);  // gemm | conv | elementwise | norm | softmax | attention
// The fitted model that times `kernel`: its family's, except batch norm's passes. Those stream a whole
// activation tensor (per-channel sums over batch x space, 10^7-10^8 elements in a CNN); the measured norms
// are layer norms over rows of at most a few thousand features, so the streaming elementwise model, measured
// up to ~10^8 elements, is the one that has seen such kernels.
Family model_family(const Kernel& kernel);

const std::vector<std::string>& kernel_feature_names();
std::vector<double> kernel_features(const Kernel& kernel, const HardwareSpec& hw);

// GEMM view of a kernel for wave counting: conv as implicit GEMM (M = N*P*Q, N = K, K = C*R*S).
struct GemmView {
    double batch = 1, m = 1, n = 1, k = 1;
};
GemmView gemm_view(const Kernel& kernel);

// Waves of output tiles a matrix-unit kernel runs in on `hw` (the tile the features assume). A convolution's
// input gradient is counted on its own output (the input image), its forward on the output image; a weight
// gradient's output does not grow with the batch, so it returns 0 there: no wave count applies.
double output_tile_waves(const Kernel& kernel, const HardwareSpec& hw);

}  // namespace prenet
