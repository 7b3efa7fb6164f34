#pragma once
// Accelerator power while training, from its TDP and what the step spends its time on:
//   power = TDP x (b + (1 - b) x s),  b = kBasePowerShare, s = the step's share of time in matrix-unit kernels
//   (gemm, conv, attention, rnn). Matmul-bound time runs near the power limit; memory-bound kernels, launch gaps
//   and waiting for input draw about b of TDP. The accelerator only: no host, network or cooling (no PUE).
#include <string>

#include "hardware/spec.hpp"
#include "run/step.hpp"

namespace prenet {

constexpr double kBasePowerShare = 0.3;  // of TDP, outside matrix-unit kernels

// Share of TDP the step draws on average, in [kBasePowerShare, 1].
double power_share(const StepTime& step);
// The formula in words, with its numbers (the replies' settings.energy_model): "TDP x (0.3 + 0.7 x share of
// step time in matmul/conv kernels), accelerator only".
std::string energy_model_text();
// Average power in watts; 0 when the sheet has no TDP. A power limit below the TDP (`power.limit_w`) is what
// matrix-unit time draws.
double average_power_w(const HardwareSpec& hw, const StepTime& step);

}  // namespace prenet
