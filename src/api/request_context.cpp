#include "api/request_context.hpp"

#include "core/error.hpp"
#include "importers/resolve.hpp"
#include "ops/catalogue.hpp"
#include "predict/learned.hpp"
#include "run/checkpointing.hpp"
#include "run/grad_accumulation.hpp"
#include "run/overhead.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

using nlohmann::json;

namespace {
// Whether the model builds with `inputs` (an error path's second try, so its cost is of no concern).
bool builds(const json& model_argument, const ModelInputs& inputs) {
    try {
        resolve_model(model_argument, inputs);
        return true;
    } catch (const Error&) {
        return false;
    }
}

// `--attention flash1` asked for: every fused attention layer, whichever importer made it, runs the first-generation
// kernel, unless the layer names its own generation (as a layer's `flash` wins); a config's own choice of kernel is
// the importer's to read (importers/transformer.cpp).
Model with_flash_generation(Model m, const ModelInputs& inputs) {
    if (!inputs.attention_given || inputs.flash_generation == 2) return m;
    for (auto& block : m.blocks)
        for (auto& layer : block.layers)
            if (is_attention(layer.kind) && layer.attrs.value("flash", false) && !layer.attrs.contains("flash_generation"))
                layer.attrs["flash_generation"] = inputs.flash_generation;
    return m;
}
}  // namespace

Model build_model(const json& model_argument, const ModelInputs& inputs) {
    try {
        return attribute_errors("model", ErrorCode::invalid_model,
                                [&] { return with_flash_generation(resolve_model(model_argument, inputs), inputs); });
    } catch (const Error& e) {
        if (e.field() != "model") throw;
        // A model that builds at the model's own sequence length or image size, or at one sample, but not at the
        // request's is too large at that input (a tensor over the limit, a sequence past the position table):
        // the error is that field's, so the CLI names the option and the page marks its field, not the model.
        auto too_large = [&](const char* field, std::int64_t value, ModelInputs smaller) {
            if (!builds(model_argument, smaller)) return;
            throw Error("'" + std::string(field) + "' " + std::to_string(value) + " is too large for this model: " +
                            e.what(),
                        ErrorCode::invalid_value, field);
        };
        auto with = [&](std::int64_t ModelInputs::*input, std::int64_t value) {
            ModelInputs other = inputs;
            other.*input = value;
            return other;
        };
        if (inputs.seq) too_large("seq", inputs.seq, with(&ModelInputs::seq, 0));
        if (inputs.image) too_large("image", inputs.image, with(&ModelInputs::image, 0));
        if (inputs.batch > 1) too_large("batch", inputs.batch, with(&ModelInputs::batch, 1));
        throw;
    }
}

Model build_request_model(const json& model_argument, Settings& s) {
    Model m = build_model(model_argument, s.inputs);
    if (s.finetune.mode != FineTuneMode::none && s.inputs.seq == 0 && m.domain != "vision" &&
        m.tokens_per_sample > finetune_default_seq) {
        // Unless the model cannot take it (a vision-language model whose image tokens fill it): then its own.
        ModelInputs shorter = s.inputs;
        shorter.seq = finetune_default_seq;
        if (builds(model_argument, shorter)) {
            s.inputs = shorter;
            m = build_model(model_argument, s.inputs);
        }
    }
    return m;
}

ModelFeatures model_features(const Model& model, Precision precision, MixedRecipe mixed, const FineTune& finetune) {
    return attribute_errors("model", ErrorCode::invalid_model,
                            [&] { return compute_features(model, precision, mixed, finetune); });
}

RequestContext make_request_context(const json& model_argument, const json& kernel_models, Settings s) {
    RequestContext p;
    p.model_argument = &model_argument;
    p.model = build_request_model(model_argument, s);
    if (s.inputs.image == 0 && p.model.domain == "vision") {
        // Report the image size the model was built at.
        const Shape& in = p.model.blocks.front().layers.front().input;
        if (p.model.image) s.inputs.image = p.model.image;
        else if (in.size() == 4) s.inputs.image = in[3];
    }
    resolve_budget(s, p.model);
    s.mixed = effective_mixed_recipe(s.precision, s.mixed, s.finetune.adapters());
    p.features = model_features(p.model, s.precision, s.mixed, s.finetune);
    if (s.finetune.adapters() && p.features.adapter_params == 0)
        throw Error("model '" + p.model.name + "' has no projection LoRA can adapt among '" +
                        targets_text(s.finetune.targets) + "' (targets: " + lora_target_list_text() + ")",
                    ErrorCode::conflict, "lora_targets");
    if (!kernel_models.is_null()) {
        p.predictor = attribute_errors("kernel_models", ErrorCode::invalid_value,
                                       [&] { return std::make_unique<LearnedPredictor>(kernel_models); });
        s.predictor = "learned (custom models)";
    } else {
        p.predictor = attribute_errors("predictor", ErrorCode::invalid_value, [&] { return make_predictor(s.predictor); });
    }
    if (s.calibration) {
        // read_settings checked that it was fitted with these kernel models.
        p.predictor = std::make_unique<CalibratedPredictor>(std::move(p.predictor), s.calibration);
    }
    p.global_batch = global_batch(p.model.batch, s.grad_accum);
    if (s.run.given())
        p.run = attribute_errors(s.run.tokens > 0 ? "tokens" : "samples", ErrorCode::invalid_value,
                                 [&] { return run_steps(s.run, p.global_batch, p.model.tokens_per_sample); });

    TrainingSetup setup;
    setup.precision = s.precision;
    setup.mixed = s.mixed;
    setup.optimizer = &find_optimizer(s.optimizer);
    setup.optimizer_impl = s.optimizer_impl;
    setup.grad_accum = s.grad_accum;
    setup.checkpointing = s.checkpointing;
    // One device runs the named kinds; `selective` is a cluster question (the parallel step resolves it).
    if (!s.checkpointing) setup.other_checkpointing = checkpoint_kind(s.recompute, s.framework);
    setup.adapters = s.finetune.adapters();
    setup.half_adapters = s.finetune.mode == FineTuneMode::qlora;
    setup.framework = s.framework;
    setup.compile = s.compile;
    setup.channels_last = s.channels_last;
    setup.loss = s.loss;
    static_cast<TrainingSetup&>(p.step) = setup;
    p.step.micro_batch = p.model.batch;
    p.step.input_samples_per_s = s.input_samples_per_s;
    p.step.overhead = overhead_for(s.overhead);
    p.step.layer_breakdown = s.breakdown;
    static_cast<TrainingSetup&>(p.memory) = setup;
    p.memory.reserve = s.reserve;
    p.memory.paged_optimizer = s.finetune.mode == FineTuneMode::qlora;

    p.memory_use = estimate_memory(p.features, p.memory);
    if (!std::isfinite(p.memory_use.peak))
        throw Error("the memory peak of '" + p.model.name + "' is not a finite number; check the sizes",
                    ErrorCode::not_finite, "model");
    p.has_checkpoint_blocks = checkpoint_units(p.features) > 0;
    p.settings = std::move(s);
    p.peaks[p.settings_with({})] = p.memory_use;  // the request's own settings
    return p;
}

namespace {

// A change's settings on the request's (what the change leaves unset stays).
void apply(const SettingsChange& c, TrainingSetup& setup) {
    if (c.checkpointing) {
        setup.checkpointing = *c.checkpointing == CheckpointKind::full;
        setup.other_checkpointing = setup.checkpointing ? CheckpointKind::none : *c.checkpointing;
    }
    if (c.loss) setup.loss = *c.loss;
    if (c.grad_accum) setup.grad_accum = *c.grad_accum;
}

}  // namespace

const ModelFeatures& RequestContext::features_at(std::int64_t batch) const {
    if (batch == model.batch) return features;
    auto& b = built[batch];
    if (!b) {
        ModelInputs inputs = settings.inputs;
        inputs.batch = batch;
        b = std::make_unique<Built>(Built{build_model(*model_argument, inputs), {}});
        b->features = model_features(b->model, settings.precision, settings.mixed, settings.finetune);
    }
    return b->features;
}

double RequestContext::peak_at(std::int64_t batch, bool checkpointing) const {
    SettingsChange c;
    c.checkpointing = checkpointing ? CheckpointKind::full : memory.other_checkpointing;
    c.batch = batch;
    c.grad_accum = (global_batch + batch - 1) / batch;  // the accumulation that keeps the global batch
    return memory_with(c).peak;
}

SettingsChange RequestContext::settings_with(const SettingsChange& change) const {
    SettingsChange c = change;
    c.checkpointing = c.checkpointing.value_or(memory.checkpoint_kind());
    c.loss = c.loss.value_or(memory.loss);
    c.batch = c.batch.value_or(model.batch);
    c.grad_accum = c.grad_accum.value_or(memory.grad_accum);
    return c;
}

const MemoryUse& RequestContext::memory_with(const SettingsChange& change) const {
    SettingsChange c = settings_with(change);
    auto it = peaks.find(c);
    if (it != peaks.end()) return it->second;
    MemoryOptions o = memory;
    apply(c, o);
    return peaks[c] = estimate_memory(features_at(*c.batch), o);
}

StepTime RequestContext::step_with(const SettingsChange& c, const HardwareSpec& hw,
                                   const KernelPredictor& predictor) const {
    StepOptions o = step;
    apply(c, o);
    o.micro_batch = c.batch.value_or(model.batch);
    o.layer_breakdown = false;
    return predict_step(features_at(o.micro_batch), hw, predictor, o);
}

}  // namespace prenet

namespace prenet {

std::vector<FineTuneOption> RequestContext::finetune_options() const {
    if (finetune_alternatives) return *finetune_alternatives;
    finetune_alternatives.emplace();
    const FineTune& now = settings.finetune;
    if (now.mode == FineTuneMode::none || now.mode == FineTuneMode::qlora) return *finetune_alternatives;
    struct Try { FineTuneMode mode; bool checkpointing; };
    std::vector<Try> tries;
    if (now.mode != FineTuneMode::lora) tries.push_back({FineTuneMode::lora, settings.checkpointing});
    tries.push_back({FineTuneMode::qlora, settings.checkpointing});
    if (!settings.checkpointing && has_checkpoint_blocks) tries.push_back({FineTuneMode::qlora, true});
    for (const auto& t : tries) {
        FineTune ft;
        ft.mode = t.mode;
        ft.rank = now.adapters() ? now.rank : advised_lora_rank;
        if (now.adapters()) ft.targets = now.targets, ft.dropout = now.dropout;
        if (t.mode == FineTuneMode::qlora) ft.quantization = Quantization::nf4;
        MemoryOptions o = memory;
        o.checkpointing = t.checkpointing;
        o.adapters = true;
        o.half_adapters = o.paged_optimizer = t.mode == FineTuneMode::qlora;
        MixedRecipe mixed = effective_mixed_recipe(settings.precision, settings.mixed, true);
        o.mixed = mixed;
        try {
            ModelFeatures f = compute_features(model, settings.precision, mixed, ft);
            if (f.adapter_params == 0) continue;
            std::string words = std::string(t.mode == FineTuneMode::qlora ? "QLoRA" : "LoRA") + " rank " +
                                std::to_string(ft.rank) + (t.checkpointing && !settings.checkpointing ? " and checkpointing" : "");
            std::string flags = std::string("--finetune ") + to_string(t.mode) + " --lora-rank " + std::to_string(ft.rank) +
                                (t.checkpointing && !settings.checkpointing ? " --checkpointing" : "");
            finetune_alternatives->push_back({words, flags, estimate_memory(f, o).peak, to_string(t.mode), ft.rank,
                                              t.checkpointing && !settings.checkpointing,
                                              ft.quantization == Quantization::nf4});
        } catch (const Error&) {
            continue;  // a rank the model's projections cannot take: no such advice
        }
    }
    return *finetune_alternatives;
}

}  // namespace prenet
