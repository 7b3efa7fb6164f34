#pragma once
// The accelerators a request asks about: ids, "all", spec sheets, or a list of those, plus any custom sheets.
#include <vector>

#include "api/options.hpp"
#include "hardware/spec.hpp"

namespace prenet {

// Throws Error with field "hardware" or "custom_hardware" (code invalid_hardware, or missing when the
// selection is empty).
std::vector<HardwareSpec> select_hardware(const RequestOptions& options);

}  // namespace prenet
