#include "run/energy.hpp"

#include <algorithm>

namespace prenet {

double power_share(const StepTime& step) {
    double total = step.total_ms();
    double s = total > 0 ? std::clamp(step.matmul_ms / total, 0.0, 1.0) : 0.0;
    return kBasePowerShare + (1.0 - kBasePowerShare) * s;
}

double average_power_w(const HardwareSpec& hw, const StepTime& step) {
    return hw.tdp_w > 0 ? hw.tdp_w * power_share(step) : 0.0;
}

}  // namespace prenet
