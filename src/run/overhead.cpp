#include "run/overhead.hpp"

#include <algorithm>

#include "core/embedded.hpp"
#include "core/error.hpp"

namespace prenet {

double launch_and_step_ms(const OverheadModel& m, double kernels) { return m.launch_gap_ms * kernels + m.step_fixed_ms; }

double overlap_loss_ms(const OverheadModel& m, double hidden_communication_ms) {
    return m.overlap_loss * std::max(0.0, hidden_communication_ms);
}

double overhead_ms(const OverheadModel& m, double kernels, double hidden_communication_ms) {
    return launch_and_step_ms(m, kernels) + overlap_loss_ms(m, hidden_communication_ms);
}

std::string host_pace_warning(double device_ms, double kernels, bool compiled) {
    if (compiled || !(kernels > 0) || !(device_ms > 0)) return {};
    double per_kernel_ms = device_ms / kernels;
    if (per_kernel_ms >= kHostBoundKernelMs) return {};
    return "this step's kernels average " + std::to_string(int(per_kernel_ms * 1e3 + 0.5)) +
           " µs each: an eager framework's host (Python dispatch and a launch per op) can take longer than that "
           "per kernel, and the step then waits for it, which this time leaves out (Megatron-LM's own 66M-parameter "
           "tests ran 7-13x slower than their kernels); a larger micro-batch, --compile or CUDA graphs shrink the gap";
}

OverheadModel overhead_from_json(const nlohmann::json& doc) {
    auto parameter = [&](const char* name, double hi) {
        const nlohmann::json* p = doc.contains("parameters") ? &doc["parameters"] : nullptr;
        if (!p || !p->contains(name) || !(*p)[name].contains("value") || !(*p)[name]["value"].is_number())
            throw Error(std::string("models/overhead.json: parameters.") + name + ".value is missing");
        double v = (*p)[name]["value"].get<double>();
        if (!(v >= 0 && v <= hi))
            throw Error(std::string("models/overhead.json: parameters.") + name + " must be in [0, " +
                        std::to_string(hi) + "]");
        return v;
    };
    OverheadModel m;
    m.launch_gap_ms = parameter("launch_gap_ms", 10.0);
    m.step_fixed_ms = parameter("step_fixed_ms", 1e4);
    m.overlap_loss = parameter("overlap_loss", 1.0);
    return m;
}

const OverheadModel& fitted_overhead() {
    static const OverheadModel model = [] {
        for (const auto& f : embedded_files())
            if (f.path == "models/overhead.json") return overhead_from_json(nlohmann::json::parse(f.contents));
        return OverheadModel{};
    }();
    return model;
}

std::vector<std::string> overhead_names() { return {"fitted", "none"}; }

OverheadModel overhead_for(const std::string& name) {
    if (name == "fitted") return fitted_overhead();
    if (name == "none") return OverheadModel{};
    throw Error("overhead must be fitted or none, got '" + name + "'", ErrorCode::invalid_value, "overhead");
}

}  // namespace prenet
