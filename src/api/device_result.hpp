#pragma once
// One accelerator's answer to a planned step: its step time, throughput, memory against its capacity (with
// advice when it does not fit), the run's length and cost, and the prediction's uncertainty, as JSON.
#include <vector>

#include <nlohmann/json.hpp>

#include "api/request_context.hpp"
#include "hardware/spec.hpp"

namespace prenet {

// Throws Error (code not_finite, field hardware) when an absurd sheet makes the prediction non-finite.
// `selection`: the request's accelerators, the only ones its memory advice may name instead of `hw`.
nlohmann::json device_result(const RequestContext& request, const HardwareSpec& hw,
                             const std::vector<HardwareSpec>& selection);

// Absurd spec sheets (peaks, bandwidth or links near zero) must not turn into inf/NaN (null in JSON): throws
// Error (not_finite, field hardware) naming `what_to_check` on the sheet.
double samples_per_second(double samples, const StepTime& step, const HardwareSpec& hw, const char* what_to_check);

}  // namespace prenet
