#include "api/device_result.hpp"

#include <cmath>

#include "api/reply_json.hpp"
#include "core/error.hpp"
#include "hardware/precision_support.hpp"
#include "predict/cached_predictor.hpp"
#include "run/memory_advice.hpp"
#include "run/run_estimate.hpp"

namespace prenet {

using nlohmann::json;

namespace {

// Every change that makes the step fit by the same models (the peak and the step on this accelerator),
// ranked by its step-time increase (run/memory_advice.hpp says the rule).
std::vector<MemoryChange> fitting_changes(const RequestContext& request, const MemoryUse& mem, const HardwareSpec& hw,
                                          const StepTime& step, const KernelPredictor& predictor) {
    ChangeRequest q;
    q.capacity_bytes = mem.capacity;
    q.step_ms = step.total_ms();
    q.checkpointing = request.step.checkpoint_kind();
    q.loss = request.settings.loss;
    q.has_checkpoint_blocks = request.has_checkpoint_blocks;
    q.has_full_loss_logits = mem.loss_temporary > 0;
    q.batch = request.model.batch;
    q.grad_accum = request.settings.grad_accum;
    ChangeModel model;
    model.memory = [&](const SettingsChange& c) { return with_capacity(request.memory_with(c), hw); };
    model.step_ms = [&](const SettingsChange& c) { return request.step_with(c, hw, predictor).total_ms(); };
    model.flags = change_flags;
    return ranked_changes(q, model);
}

json memory_advice(const RequestContext& request, const MemoryUse& mem, const HardwareSpec& hw, const StepTime& step,
                   const KernelPredictor& predictor, const std::vector<HardwareSpec>& selection) {
    if (mem.fits()) return nullptr;
    AdviceRequest q;
    q.peak_bytes = mem.peak;
    q.capacity_bytes = mem.capacity;
    q.batch = request.model.batch;
    q.grad_accum = request.settings.grad_accum;
    q.checkpointing = request.settings.checkpointing;
    q.has_checkpoint_blocks = request.has_checkpoint_blocks;
    // Sharding is modelled for full training only (fine-tuning with frozen parts runs on one device).
    q.model_state_bytes = request.settings.finetune.freezes() ? 0.0 : mem.weights + mem.gradients + mem.optimizer_states;
    q.finetune_options = request.finetune_options();
    q.nf4_kernels = has_nf4_kernels(hw);
    q.changes = fitting_changes(request, mem, hw, step, predictor);
    PeakAt peak_at = [&request](std::int64_t batch, bool checkpointing) { return request.peak_at(batch, checkpointing); };
    // Another accelerator only from those the request asked about (all of them with "all").
    return advice_json(advise_memory(q, peak_at, selection));
}

}  // namespace

double samples_per_second(double samples, const StepTime& t, const HardwareSpec& hw, const char* what_to_check) {
    double samples_per_s = samples / (t.total_ms() / 1e3);
    if (!std::isfinite(t.total_ms()) || !std::isfinite(samples_per_s) || !(samples_per_s > 0))
        throw Error("the prediction for hardware '" + hw.id + "' is not a finite number; check its " + what_to_check,
                    ErrorCode::not_finite, "hardware");
    return samples_per_s;
}

json device_result(const RequestContext& request, const HardwareSpec& hw, const std::vector<HardwareSpec>& selection) {
    const Settings& s = request.settings;
    MemoryUse mem = with_capacity(request.memory_use, hw);
    // A step that does not fit is timed again with each change its advice tries, which share most of its
    // kernels: then each kernel is predicted once (the same times, remembered).
    CachedPredictor remembered(*request.predictor, hw);
    const KernelPredictor& predictor = mem.fits() ? *request.predictor : remembered;
    StepTime t = predict_step(request.features, hw, predictor, request.step);
    double samples_per_s = samples_per_second(double(request.global_batch), t, hw, "peak FLOP/s and bandwidth");
    std::string peak_used;
    hw.matmul_flops(s.precision, &peak_used);
    json run_result = nullptr;
    if (request.run) run_result = run_json(estimate_run(*request.run, t, hw, s.price_per_hour), t);
    std::int64_t tokens = request.model.tokens_per_sample;
    json memory = memory_json(mem, memory_advice(request, mem, hw, t, predictor, selection));
    // With the breakdown, what the memory holds over the step (the page asks for it for one accelerator only).
    if (s.breakdown) memory["timeline"] = timeline_json(memory_timeline(mem, request.memory_profile(), request.memory.reserve));
    return {{"hardware", hw.id},
            {"name", hw.name},
            {"step", step_json(t, s.input_samples_per_s > 0, s.breakdown)},
            {"throughput",
             {{"samples_per_s", samples_per_s},
              {"tokens_per_s", tokens ? json(samples_per_s * double(tokens)) : json(nullptr)}}},
            {"memory", std::move(memory)},
            {"run", run_result},
            {"uncertainty", uncertainty_json(*request.predictor, t, hw)},
            {"matmul_peak_used", peak_used},
            {"price_per_hour", hw.price_per_hour()},
            {"warnings", step_warnings(batch_warnings(request.global_batch, tokens, s.run, request.run ? &*request.run : nullptr), t, request.step)}};
}

}  // namespace prenet
