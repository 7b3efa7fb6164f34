#include "run/step.hpp"

#include <algorithm>

namespace prenet {

StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      Precision precision, const OptimizerDef& optimizer) {
    StepTime t;
    for (const auto& lf : features.layers) {
        double repeat = double(lf.repeat);
        for (const auto& k : lf.cost.kernels) {
            double ms = repeat * predictor.kernel_ms(k, hw);
            (k.phase == Phase::forward ? t.forward_ms : t.backward_ms) += ms;
            t.by_family_ms[to_string(k.family)] += ms;
        }
    }
    for (const auto& k : optimizer_kernels(optimizer, features.params, precision)) {
        double ms = predictor.kernel_ms(k, hw);
        t.optimizer_ms += ms;
        t.by_family_ms[to_string(k.family)] += ms;
    }
    return t;
}

MemoryUse estimate_memory(const ModelFeatures& features, const HardwareSpec& hw, Precision precision,
                          const OptimizerDef& optimizer) {
    MemoryUse m;
    double n = double(features.params);
    bool mixed = precision != Precision::fp32 && precision != Precision::tf32;
    // Mixed precision keeps an fp32 master copy beside the half-precision weights and gradients
    // (2 + 2 + 4 bytes per parameter, plus the optimizer's fp32 states).
    m.weights = n * (mixed ? 2.0 + 4.0 : 4.0);
    m.gradients = n * (mixed ? 2.0 : 4.0);
    m.optimizer_states = n * optimizer.state_bytes_per_param;
    m.activations = features.saved_activation_bytes;
    // The largest single layer's transient output and its gradient live beside everything else.
    for (const auto& lf : features.layers)
        m.temporary = std::max(m.temporary, 2.0 * lf.cost.forward_bytes_written);
    m.peak = m.weights + m.gradients + m.optimizer_states + m.activations + m.temporary;
    m.capacity = hw.memory_bytes();
    return m;
}

}  // namespace prenet
