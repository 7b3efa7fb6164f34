#pragma once
// One accelerator's answer to a parallel request (several devices, or a layout asked for): the plan the
// search chose (or the one given) with its runners-up, the step with its communication and pipeline bubble,
// throughput per device and MFU, memory per device, and the run over every device (docs/parallel.md).
#include <nlohmann/json.hpp>

#include "api/request_context.hpp"
#include "hardware/spec.hpp"

namespace prenet {

// Throws Error naming the field at fault for an impossible layout or cluster.
nlohmann::json parallel_device_result(const RequestContext& request, const HardwareSpec& hw);

}  // namespace prenet
