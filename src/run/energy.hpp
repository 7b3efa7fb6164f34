#pragma once
// Accelerator power while training, from its TDP and what the step spends its time on:
//   power = TDP x (0.3 + 0.7 x s),  s = the step's share of time in matrix-unit kernels (gemm, conv,
//   attention, rnn). Matmul-bound time runs near the power limit; memory-bound kernels, launch gaps and
//   waiting for input draw about 30% of TDP. The accelerator only: no host, network or cooling (no PUE).
#include "hardware/spec.hpp"
#include "run/step.hpp"

namespace prenet {

constexpr double kBasePowerShare = 0.3;  // of TDP, outside matrix-unit kernels

// Share of TDP the step draws on average, in [0.3, 1].
double power_share(const StepTime& step);
// Average power in watts; 0 when the sheet has no TDP.
double average_power_w(const HardwareSpec& hw, const StepTime& step);

}  // namespace prenet
