#include "api/settings.hpp"

#include "core/error.hpp"
#include "predict/predictor.hpp"
#include "run/grad_accumulation.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

using nlohmann::json;

Settings read_settings(const RequestOptions& o) {
    Settings s;
    s.inputs.batch = o.count("batch");
    s.inputs.seq = o.count("seq");      // 0: the model's own
    s.inputs.image = o.count("image");  // 0: the model's own
    s.inputs.flash_attention = o.text("attention") == "flash";
    s.precision = parse_precision(o.text("precision"));
    // fp8 runs as a bf16 model (Transformer Engine); fp16 and bf16 default to PyTorch's autocast.
    s.mixed = s.precision == Precision::fp8 ? MixedRecipe::half_model : MixedRecipe::autocast;
    if (o.has("mixed")) {
        MixedRecipe asked = parse_mixed_recipe(o.text("mixed"));
        if (s.precision == Precision::fp32 || s.precision == Precision::tf32)
            throw Error(std::string("'mixed' applies to fp16 and bf16 (the precision is ") + to_string(s.precision) + ")",
                        ErrorCode::conflict, "mixed");
        if (s.precision == Precision::fp8 && asked == MixedRecipe::autocast)
            throw Error("fp8 runs as a bf16 model with fp32 master weights; 'mixed' autocast applies to fp16 and bf16",
                        ErrorCode::conflict, "mixed");
        s.mixed = asked;
    }
    s.optimizer = o.text("optimizer");
    s.optimizer_impl = parse_optimizer_impl(o.text("optimizer_impl"));
    s.grad_accum = o.count("grad_accum");
    attribute_errors("grad_accum", ErrorCode::invalid_value, [&] { return global_batch(s.inputs.batch, s.grad_accum); });
    s.checkpointing = o.flag("checkpointing");
    s.breakdown = o.flag("breakdown");
    s.run.samples = o.number("samples");
    s.run.epochs = o.number("epochs");
    s.run.tokens = o.number("tokens");
    if (s.run.epochs > 0 && !(s.run.samples > 0))
        throw Error("'epochs' needs 'samples' (samples per epoch)", ErrorCode::conflict, "epochs");
    s.price_per_hour = o.has("price_per_hour") ? o.number("price_per_hour") : -1;
    s.input_samples_per_s = o.number("input_samples_per_s");
    s.kernel_overhead_ms = o.number("kernel_overhead_ms");
    // Only a request without a predictor pays for looking at the built-in models (parsed on first use).
    s.predictor = o.has("predictor") ? o.text("predictor") : default_predictor_name();
    return s;
}

void resolve_budget(Settings& s, const Model& model) {
    bool language = model.tokens_per_sample > 0;
    if (s.run.tokens > 0 && s.run.samples > 0) {
        // Both given: each model trains on the budget it counts in.
        if (language) s.run.samples = s.run.epochs = 0;
        else s.run.tokens = 0;
    }
    if (s.run.tokens > 0 && !language)
        throw Error("'tokens' needs a language model ('" + model.name +
                        "' has no tokens per sample); give 'samples' (with 'epochs') instead",
                    ErrorCode::conflict, "tokens");
}

json settings_json(const Settings& s, const Model& m, unsigned command_bit) {
    auto given = [](double x) { return x > 0 ? json(x) : json(nullptr); };
    json resolved = {
        {"batch", s.inputs.batch},
        {"seq", m.tokens_per_sample ? json(m.tokens_per_sample) : json(nullptr)},
        {"image", m.tokens_per_sample ? json(nullptr) : (s.inputs.image ? json(s.inputs.image) : json(nullptr))},
        {"precision", to_string(s.precision)},
        {"mixed", precision_recipe(s.precision, s.mixed).mixed ? json(to_string(s.mixed)) : json(nullptr)},
        {"attention", s.inputs.flash_attention ? "flash" : "eager"},
        {"optimizer", s.optimizer},
        {"optimizer_impl", to_string(s.optimizer_impl)},
        {"grad_accum", s.grad_accum},
        {"checkpointing", s.checkpointing},
        {"breakdown", s.breakdown},
        {"samples", given(s.run.samples)},
        {"epochs", s.run.samples > 0 ? json(s.run.epochs > 0 ? s.run.epochs : 1.0) : json(nullptr)},
        {"tokens", given(s.run.tokens)},
        {"price_per_hour", s.price_per_hour >= 0 ? json(s.price_per_hour) : json(nullptr)},
        {"input_samples_per_s", given(s.input_samples_per_s)},
        {"kernel_overhead_ms", s.kernel_overhead_ms},
        {"predictor", s.predictor}};
    json derived = {{"flops_convention", "FLOPs = 2 x multiply-accumulates"}};
    if (command_bit & kPredict) {
        const OptimizerDef& opt = find_optimizer(s.optimizer);
        derived.update(
            {{"optimizer_impl_used", to_string(effective_impl(opt, s.optimizer_impl))},
             {"global_batch", global_batch(s.inputs.batch, s.grad_accum)},
             {"price_source", s.price_per_hour >= 0 ? "--price-per-hour" : "cheapest cloud price on the spec sheet"},
             {"memory_reserve",
              {{"context_bytes", s.reserve.context_bytes},
               {"fraction", s.reserve.fraction},
               {"assumption", "CUDA context and library workspaces plus a fraction of the tensor peak for "
                              "allocator fragmentation (docs/training-model.md)"}}},
             {"energy_model", "TDP x (0.3 + 0.7 x share of step time in matmul/conv kernels), accelerator only"},
             {"devices", 1}});
    }
    return echo_settings(resolved, derived, command_bit);
}

}  // namespace prenet
