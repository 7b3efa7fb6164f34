#pragma once
// One accelerator's answer to a planned step: its step time, throughput, memory against its capacity (with
// advice when it does not fit), the run's length and cost, and the prediction's uncertainty, as JSON.
#include <nlohmann/json.hpp>

#include "api/step_plan.hpp"
#include "hardware/spec.hpp"

namespace prenet {

// Throws Error (code not_finite, field hardware) when an absurd sheet makes the prediction non-finite.
nlohmann::json device_result(const StepPlan& plan, const HardwareSpec& hw);

}  // namespace prenet
