#include "run/energy.hpp"

#include <algorithm>
#include <cstdio>

namespace prenet {

double power_share(const StepTime& step) {
    double total = step.total_ms();
    double s = total > 0 ? std::clamp(step.matmul_ms / total, 0.0, 1.0) : 0.0;
    return kBasePowerShare + (1.0 - kBasePowerShare) * s;
}

std::string energy_model_text() {
    char text[160];
    std::snprintf(text, sizeof text, "TDP x (%g + %g x share of step time in matmul/conv kernels), accelerator only",
                  kBasePowerShare, 1.0 - kBasePowerShare);
    return text;
}

double average_power_w(const HardwareSpec& hw, const StepTime& step) {
    return hw.tdp_w > 0 ? hw.tdp_w * power_share(step) : 0.0;
}

}  // namespace prenet
