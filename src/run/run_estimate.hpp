#pragma once
// A whole training run on one accelerator: steps x step time, accelerator-hours, cloud cost and energy.
#include "hardware/spec.hpp"
#include "run/run_length.hpp"
#include "run/step.hpp"

namespace prenet {

struct RunEstimate {
    RunSteps steps;
    double hours = 0;           // wall-clock
    double gpu_hours = 0;       // hours x devices
    double price_per_hour = 0;  // per device, the override or the sheet's cheapest cloud price
    bool price_known = false;   // false: no override and no price on the sheet
    double cost_usd = 0;        // gpu_hours x price; meaningful only when price_known
    double average_power_w = 0; // 0: TDP unknown
    double energy_kwh = 0;      // meaningful only when average_power_w > 0
    bool has_energy() const { return average_power_w > 0; }
};

// `price_override` < 0: use the sheet's cheapest cloud price (HardwareSpec::price_per_hour()).
RunEstimate estimate_run(const RunSteps& steps, const StepTime& step, const HardwareSpec& hw, double price_override,
                         int devices = 1);

}  // namespace prenet
