#include "run/run_estimate.hpp"

#include "run/energy.hpp"

namespace prenet {

RunEstimate estimate_run(const RunSteps& steps, const StepTime& step, const HardwareSpec& hw, double price_override,
                         int devices) {
    RunEstimate r;
    r.steps = steps;
    r.hours = double(steps.steps) * step.total_ms() / 3.6e6;
    r.gpu_hours = r.hours * double(devices);
    r.price_per_hour = price_override >= 0 ? price_override : hw.price_per_hour();
    r.price_known = price_override >= 0 || r.price_per_hour > 0;
    if (r.price_known) r.cost_usd = r.gpu_hours * r.price_per_hour;
    r.average_power_w = average_power_w(hw, step);
    if (r.has_energy()) r.energy_kwh = r.average_power_w * double(devices) * r.hours / 1e3;
    return r;
}

}  // namespace prenet
