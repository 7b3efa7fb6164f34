#pragma once
// One training step on one accelerator: forward, backward and optimizer times from a kernel predictor,
// and the peak memory that step needs.
#include <map>
#include <string>

#include "hardware/spec.hpp"
#include "ops/features.hpp"
#include "predict/predictor.hpp"
#include "run/optimizer.hpp"

namespace prenet {

struct StepTime {
    double forward_ms = 0, backward_ms = 0, optimizer_ms = 0, communication_ms = 0;
    std::map<std::string, double> by_family_ms;  // summed over passes
    double total_ms() const { return forward_ms + backward_ms + optimizer_ms + communication_ms; }
};

struct MemoryUse {
    double weights = 0, gradients = 0, optimizer_states = 0, activations = 0, temporary = 0;
    double peak = 0, capacity = 0;
    bool fits() const { return peak <= capacity; }
};

StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      Precision precision, const OptimizerDef& optimizer);

MemoryUse estimate_memory(const ModelFeatures& features, const HardwareSpec& hw, Precision precision,
                          const OptimizerDef& optimizer);

}  // namespace prenet
