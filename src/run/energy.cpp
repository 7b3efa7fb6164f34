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
    if (hw.tdp_w <= 0) return 0.0;
    double share = power_share(step);
    if (hw.power_limit_w <= 0 || hw.power_limit_w >= hw.tdp_w) return hw.tdp_w * share;
    // A host's power limit below the TDP (docs/clocks.md): matrix-unit time draws the limit, the rest as before.
    double matmul = (share - kBasePowerShare) / (1.0 - kBasePowerShare);
    return hw.tdp_w * kBasePowerShare * (1.0 - matmul) + hw.power_limit_w * matmul;
}

}  // namespace prenet
