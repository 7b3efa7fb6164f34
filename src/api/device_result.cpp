#include "api/device_result.hpp"

#include <cmath>

#include "api/reply_json.hpp"
#include "core/error.hpp"
#include "run/memory_advice.hpp"
#include "run/run_estimate.hpp"

namespace prenet {

using nlohmann::json;

namespace {

json memory_advice(const StepPlan& plan, const MemoryUse& mem) {
    if (mem.fits()) return nullptr;
    AdviceRequest q;
    q.peak_bytes = mem.peak;
    q.capacity_bytes = mem.capacity;
    q.batch = plan.model.batch;
    q.grad_accum = plan.settings.grad_accum;
    q.checkpointing = plan.settings.checkpointing;
    q.has_checkpoint_blocks = plan.has_checkpoint_blocks;
    // Sharding is modelled for full training only (fine-tuning with frozen parts runs on one device).
    q.model_state_bytes = plan.settings.finetune.freezes() ? 0.0 : mem.weights + mem.gradients + mem.optimizer_states;
    q.finetune_options = plan.finetune_options();
    PeakAt peak_at = [&plan](std::int64_t batch, bool checkpointing) { return plan.peak_at(batch, checkpointing); };
    return advice_json(advise_memory(q, peak_at, hardware_catalogue()));
}

}  // namespace

double samples_per_second(double samples, const StepTime& t, const HardwareSpec& hw, const char* what_to_check) {
    double samples_per_s = samples / (t.total_ms() / 1e3);
    if (!std::isfinite(t.total_ms()) || !std::isfinite(samples_per_s) || !(samples_per_s > 0))
        throw Error("the prediction for hardware '" + hw.id + "' is not a finite number; check its " + what_to_check,
                    ErrorCode::not_finite, "hardware");
    return samples_per_s;
}

json device_result(const StepPlan& plan, const HardwareSpec& hw) {
    const Settings& s = plan.settings;
    StepTime t = predict_step(plan.features, hw, *plan.predictor, plan.step);
    MemoryUse mem = with_capacity(plan.memory_use, hw);
    double samples_per_s = samples_per_second(double(plan.global_batch), t, hw, "peak FLOP/s and bandwidth");
    std::string peak_used;
    hw.matmul_flops(s.precision, &peak_used);
    json run_result = nullptr;
    if (plan.run) run_result = run_json(estimate_run(*plan.run, t, hw, s.price_per_hour), t);
    std::int64_t tokens = plan.model.tokens_per_sample;
    return {{"hardware", hw.id},
            {"name", hw.name},
            {"step", step_json(t, s.input_samples_per_s > 0, s.breakdown)},
            {"throughput",
             {{"samples_per_s", samples_per_s},
              {"tokens_per_s", tokens ? json(samples_per_s * double(tokens)) : json(nullptr)}}},
            {"memory", memory_json(mem, memory_advice(plan, mem))},
            {"run", run_result},
            {"uncertainty", uncertainty_json(*plan.predictor, t, hw)},
            {"matmul_peak_used", peak_used},
            {"price_per_hour", hw.price_per_hour()}};
}

}  // namespace prenet
