#pragma once
// The core clock matrix-unit kernels sustain in a training step (docs/clocks.md), from sheet facts only: the
// clock the sheet's matrix peaks are quoted at, a published sustained clock under matrix load, the base clock,
// the TDP and a power limit the user sets below it. No fitted factors: a sheet without these facts gets 1.
#include <string>

#include "hardware/spec.hpp"

namespace prenet {

struct SustainedClock {
    double reference_mhz = 0;  // the clock the sheet's matrix peaks (and so the fitted kernel data) stand for
    double sustained_mhz = 0;  // the clock matrix-bound kernels run at in a long run, under the power limit
    double factor = 1;         // sustained / reference, at most 1: the matrix-unit peak a step sees is peak x factor
    // Whether any clock fact moved the factor off 1 or the sheet asks for a power limit (the reply then shows it).
    bool shown = false;
    std::string basis;  // one line: which facts gave the clock, or why none applied
};

// The clock a power limit leaves, from the clock at TDP. Above the base clock voltage scales with frequency, so
// dynamic power ~ f x V^2 ~ f^3 and f = f_tdp x (limit / tdp)^(1/3); below it the voltage is at its floor and
// power ~ f, so from the base clock on f falls in proportion to the power. A limit at or above the TDP leaves
// f_tdp. `base_mhz` 0 (unpublished): the cube root all the way down.
double power_limited_clock_mhz(double clock_at_tdp_mhz, double base_mhz, double tdp_w, double limit_w);

// The sustained matrix clock of a sheet (docs/clocks.md).
SustainedClock sustained_matrix_clock(const HardwareSpec& hw);

}  // namespace prenet
