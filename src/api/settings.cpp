#include "api/settings.hpp"

#include <set>

#include "core/error.hpp"
#include "importers/hf_config.hpp"
#include "ops/catalogue.hpp"
#include "predict/predictor.hpp"
#include "run/energy.hpp"
#include "run/grad_accumulation.hpp"
#include "run/overhead.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

using nlohmann::json;

namespace {

std::optional<std::int64_t> count_if_given(const RequestOptions& o, const char* name) {
    if (!o.has(name)) return std::nullopt;
    return o.count(name);
}

void read_layout(Settings& s, const RequestOptions& o, Recompute recompute) {
    LayoutRequest& l = s.layout;
    l.gpus = o.count("gpus");
    l.dp = count_if_given(o, "dp");
    l.tp = count_if_given(o, "tp");
    l.pp = count_if_given(o, "pp");
    l.cp = count_if_given(o, "cp");
    l.ep = count_if_given(o, "ep");
    l.vp = count_if_given(o, "vp");
    l.first_stage_blocks = count_if_given(o, "first_stage_blocks");
    l.last_stage_blocks = count_if_given(o, "last_stage_blocks");
    if (o.has("zero")) l.zero = int(o.count("zero"));
    // true, false or the CLI's word "off" (the flag alone is on; the option table allows no other word).
    if (o.has("sequence_parallel")) {
        const json& v = o.value("sequence_parallel");
        l.sequence_parallel = v.is_string() ? v.get<std::string>() != "off" : o.flag("sequence_parallel");
    }
    if (o.has("schedule")) l.schedule = parse_schedule(o.text("schedule"));
    l.micro_batch = count_if_given(o, "batch");
    l.grad_accum = count_if_given(o, "grad_accum");
    if (o.has("checkpointing")) l.recompute = recompute;
    l.global_batch = count_if_given(o, "global_batch");
    l.global_batch_tokens = count_if_given(o, "global_batch_tokens");
    if (l.global_batch && l.global_batch_tokens)
        throw Error("give the global batch in samples or in tokens, not both", ErrorCode::conflict, "global_batch_tokens");
    s.cluster.gpus = l.gpus;
    s.cluster.gpus_per_node = count_if_given(o, "gpus_per_node");
    if (o.has("network")) s.cluster.network = o.text("network");
    if (o.has("topology")) s.cluster.topology = o.text("topology");
    if (o.has("ep_overlap")) s.ep_overlap = parse_expert_overlap(o.text("ep_overlap"));
    s.tp_comm_overlap = o.flag("tp_comm_overlap");
    if (s.tp_comm_overlap && l.sequence_parallel == false)
        throw Error("--tp-comm-overlap pipelines the sequence-parallel all-gathers and reduce-scatters with the GEMMs: "
                    "it needs sequence parallelism, given off here (Megatron refuses the pair too)",
                    ErrorCode::conflict, "tp_comm_overlap");
    // More than one device, any other option of the cluster given, or selective recomputation (the parallel step
    // costs it: one device is a layout too): the rows' cluster_question, which the page reads as well.
    s.parallel = false;
    for (const auto& row : option_table())
        if (o.has(row.name) && asks_cluster(row, o.value(row.name))) s.parallel = true;
}

// The fine-tuning options, and the rules between them: adapter options need lora or qlora, --freeze needs
// freeze, a quantised base needs adapters (QLoRA's is NF4).
FineTune read_finetune(const RequestOptions& o, Precision precision) {
    FineTune ft;
    ft.mode = parse_finetune_mode(o.text("finetune"));
    const std::string mode = to_string(ft.mode);
    for (const auto& row : option_table()) check_applies(row, o);
    if (o.has("lora_rank")) ft.rank = o.count("lora_rank");
    if (o.has("lora_alpha")) ft.alpha = o.number("lora_alpha");
    if (o.has("lora_dropout")) {
        ft.dropout = o.number("lora_dropout");
        if (ft.dropout >= 1)
            throw Error("'lora_dropout' must be below 1, got " + std::to_string(ft.dropout), ErrorCode::invalid_value,
                        "lora_dropout");
    }
    if (o.has("lora_targets")) ft.targets = parse_lora_targets(o.text("lora_targets"));
    if (ft.mode == FineTuneMode::freeze) ft.freeze = parse_freeze(o.has("freeze") ? o.text("freeze") : "embeddings");
    if (ft.mode == FineTuneMode::qlora) ft.quantization = Quantization::nf4;
    if (o.has("quantization")) {
        Quantization q = parse_quantization(o.text("quantization"));
        if (!ft.adapters() && q != Quantization::none)
            throw Error("'quantization' " + std::string(to_string(q)) + " applies to --finetune lora or qlora: a "
                        "quantised base cannot train (the mode is " + mode + ")", ErrorCode::conflict, "quantization");
        if (ft.mode == FineTuneMode::qlora && q != Quantization::nf4)
            throw Error("QLoRA's base is 4-bit NF4; for a LoRA over an " + std::string(to_string(q)) +
                            " base give --finetune lora --quantization " + to_string(q),
                        ErrorCode::conflict, "quantization");
        ft.quantization = q;
    }
    if (ft.quantization != Quantization::none && precision == Precision::fp8)
        throw Error("a quantised base computes in bf16, fp16 or fp32, not fp8", ErrorCode::conflict, "quantization");
    return ft;
}

}  // namespace

Settings settings_on_device(const Settings& s, const std::string& device_kind) {
    if (!s.framework_auto) return s;
    Settings on = s;
    on.framework = preset_for(usual_framework(device_kind));
    // What read_settings derives from the framework: --compile (none of the usual ones changes the loss).
    on.compile = s.compile || on.framework.fuses_elementwise;
    return on;
}

Settings read_settings(const RequestOptions& o) {
    Settings s;
    s.inputs.batch = o.count("batch");
    s.inputs.seq = o.count("seq");      // 0: the model's own
    s.inputs.image = o.count("image");  // 0: the model's own
    s.inputs.cached_encoders = o.text("encoders") == "cached";
    s.inputs.flash_attention = o.text("attention") == "flash" || o.text("attention") == "flash1";
    s.inputs.flash_generation = o.text("attention") == "flash1" ? 1 : 2;
    s.inputs.attention_given = o.has("attention");  // asked for: wins over a config's attn_implementation
    s.precision = parse_precision(o.text("precision"));
    if (o.has("precision")) s.precision_source = "--precision";
    else if (o.has("model")) {
        // A Hugging Face config's torch_dtype is the default precision when none is asked for.
        std::string dtype = attribute_errors("model", ErrorCode::invalid_model, [&] {
            return looks_like_hf_config(o.value("model")) ? document_dtype(o.value("model")) : std::string();
        });
        if (!dtype.empty()) s.precision = parse_precision(dtype), s.precision_source = "config.json torch_dtype";
    }
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
    s.finetune = read_finetune(o, s.precision);
    // A LoRA base is loaded in half precision (torch_dtype) and trained as a half model: autocast's fp32 model
    // is not what runs (effective_mixed_recipe applies it).
    if (s.finetune.adapters() && o.has("mixed") && s.mixed == MixedRecipe::autocast)
        throw Error("with LoRA the frozen base is stored in half precision and the adapters in fp32 (a half model, "
                    "--mixed half); --mixed autocast applies to full training",
                    ErrorCode::conflict, "mixed");
    s.optimizer = o.text("optimizer");
    s.optimizer_impl = parse_optimizer_impl(o.text("optimizer_impl"));
    s.grad_accum = o.count("grad_accum");
    attribute_errors("grad_accum", ErrorCode::invalid_value, [&] { return global_batch(s.inputs.batch, s.grad_accum); });
    const nlohmann::json& ckpt = o.value("checkpointing");
    Recompute recompute = ckpt.is_string() ? parse_recompute(ckpt.get<std::string>())
                                           : (ckpt.is_boolean() && ckpt.get<bool>() ? Recompute::full : Recompute::none);
    s.checkpointing = recompute == Recompute::full;
    s.recompute = recompute;
    read_layout(s, o, recompute);
    if (s.parallel && s.finetune.freezes())
        throw Error(std::string("--finetune ") + to_string(s.finetune.mode) +
                        " is modelled on one device; drop --gpus and the layout options (full fine-tuning runs on many)",
                    ErrorCode::conflict, "finetune");
    s.breakdown = o.flag("breakdown");
    s.framework_auto = o.text("framework") == auto_framework;
    s.framework = preset_for(s.framework_auto ? "generic" : o.text("framework"));
    s.compile = o.flag("compile") || s.framework.fuses_elementwise;  // XLA compiles the whole program
    s.channels_last = o.flag("channels_last");
    // Unasked, the loss is the framework's (Megatron's in-place vocab-parallel cross-entropy), else PyTorch's.
    s.loss = o.has("loss") ? parse_loss_mode(o.text("loss"))
                           : (s.framework.in_place_loss ? LossMode::inplace : LossMode::full);
    s.run.samples = o.number("samples");
    s.run.epochs = o.number("epochs");
    s.run.tokens = o.number("tokens");
    if (s.run.epochs > 0 && !(s.run.samples > 0))
        throw Error("'epochs' needs 'samples' (samples per epoch)", ErrorCode::conflict, "epochs");
    s.price_per_hour = o.has("price_per_hour") ? o.number("price_per_hour") : -1;
    s.input_samples_per_s = o.number("input_samples_per_s");
    s.overhead = o.text("overhead");
    overhead_for(s.overhead);  // refuses an unknown name here, naming the option
    // Only a request without a predictor pays for looking at the built-in models (parsed on first use).
    s.predictor = o.has("predictor") ? o.text("predictor") : default_predictor_name();
    if (o.has("calibration"))
        s.calibration = read_calibration(o.value("calibration"), s.predictor, o.value("kernel_models"));
    return s;
}

std::shared_ptr<const Calibration> read_calibration(const json& document, const std::string& predictor,
                                                    const json& kernel_models) {
    auto c = std::make_shared<Calibration>(calibration_from_json(document));
    check_calibration_applies(*c, predictor, kernel_models);
    return c;
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

namespace {
// The attention kernel the model runs: the requested one, unless the config or a layer named its own (an
// attention layer's `flash` and `flash_generation`); "mixed" when its attention layers differ; null when the
// model has no attention (a CNN, a GRU: nothing the option changes, so nothing to report).
json attention_run(const Model& m) {
    std::set<std::string> kernels;  // eager, flash, flash1 (a first-generation fused kernel)
    for (const auto& block : m.blocks)
        for (const auto& layer : block.layers)
            if (is_attention(layer.kind))
                kernels.insert(!layer.attrs.value("flash", false)                ? "eager"
                               : layer.attrs.value("flash_generation", 2) == 1 ? "flash1"
                                                                               : "flash");
    if (kernels.size() > 1) return "mixed";
    if (kernels.size() == 1) return *kernels.begin();
    return nullptr;
}

// The devices a --calibration names, or null without one.
json calibrated_devices(const Settings& s) {
    if (!s.calibration) return nullptr;
    json ids = json::array();
    for (const auto& [id, device] : s.calibration->devices) ids.push_back(id);
    return ids;
}
}  // namespace

namespace {

// The mixed-precision recipe in words (null without one, and for fp8, whose precision's label says it): the option's
// label, except that with adapters the half recipe is the frozen base loaded in half precision, not a half model
// beside fp32 master weights (the adapters keep their own precision: run/precision_recipe.hpp's adapter_recipe).
json mixed_words(const Settings& s) {
    if (s.precision == Precision::fp8 || !precision_recipe(s.precision, s.mixed).mixed) return nullptr;
    if (s.finetune.adapters() && s.mixed == MixedRecipe::half_model) return "the frozen base in half precision";
    return find_option("mixed")->choice_labels.at(to_string(s.mixed));
}

}  // namespace

json settings_json(const Settings& s, const Model& m, unsigned command_bit) {
    auto given = [](double x) { return x > 0 ? json(x) : json(nullptr); };
    json resolved = {
        {"batch", s.inputs.batch},
        {"seq", m.tokens_per_sample ? json(m.tokens_per_sample) : json(nullptr)},
        {"image", m.tokens_per_sample ? json(nullptr) : (s.inputs.image ? json(s.inputs.image) : json(nullptr))},
        {"precision", to_string(s.precision)},
        {"mixed", precision_recipe(s.precision, s.mixed).mixed ? json(to_string(s.mixed)) : json(nullptr)},
        {"attention", attention_run(m)},
        {"optimizer", s.optimizer},
        {"optimizer_impl", to_string(s.optimizer_impl)},
        {"grad_accum", s.grad_accum},
        {"checkpointing", s.recompute == Recompute::none || s.recompute == Recompute::full
                              ? json(s.checkpointing)
                              : json(to_string(s.recompute))},
        {"gpus", s.layout.gpus},
        {"gpus_per_node", s.cluster.gpus_per_node ? json(*s.cluster.gpus_per_node) : json(nullptr)},
        {"network", s.cluster.network ? json(*s.cluster.network) : json(nullptr)},
        {"topology", s.cluster.topology ? json(*s.cluster.topology) : json(nullptr)},
        {"ep_overlap", to_string(s.ep_overlap)},
        {"tp_comm_overlap", s.tp_comm_overlap},
        {"global_batch", s.layout.global_batch ? json(*s.layout.global_batch)
                         : s.parallel ? json(nullptr) : json(global_batch(s.inputs.batch, s.grad_accum))},
        {"breakdown", s.breakdown},
        {"framework", s.framework_auto ? std::string(auto_framework) : s.framework.name},
        {"compile", s.compile},
        {"channels_last", s.channels_last},
        {"loss", to_string(s.loss)},
        {"finetune", to_string(s.finetune.mode)},
        {"lora_rank", s.finetune.adapters() ? json(s.finetune.rank) : json(nullptr)},
        {"lora_targets", s.finetune.adapters() ? json(targets_text(s.finetune.targets)) : json(nullptr)},
        {"lora_alpha", s.finetune.adapters() ? json(s.finetune.alpha) : json(nullptr)},
        {"lora_dropout", s.finetune.adapters() ? json(s.finetune.dropout) : json(nullptr)},
        {"quantization", to_string(s.finetune.quantization)},
        {"freeze", s.finetune.mode == FineTuneMode::freeze ? json(freeze_text(s.finetune.freeze)) : json(nullptr)},
        {"samples", given(s.run.samples)},
        {"epochs", s.run.samples > 0 ? json(s.run.epochs > 0 ? s.run.epochs : 1.0) : json(nullptr)},
        {"tokens", given(s.run.tokens)},
        {"price_per_hour", s.price_per_hour >= 0 ? json(s.price_per_hour) : json(nullptr)},
        {"input_samples_per_s", given(s.input_samples_per_s)},
        {"overhead", s.overhead},
        {"predictor", s.predictor}};
    json derived = {{"flops_convention", "FLOPs = 2 x multiply-accumulates"},
                    {"precision_source", s.precision_source},
                    {"mixed_words", mixed_words(s)}};
    if (command_bit & kPredict) {
        const OptimizerDef& opt = find_optimizer(s.optimizer);
        derived.update(
            {{"optimizer_impl_used", to_string(effective_impl(opt, s.optimizer_impl))},
             {"price_source", s.price_per_hour >= 0 ? "--price-per-hour" : "cheapest cloud price on the spec sheet"},
             {"memory_reserve",
              {{"cuda_context_bytes", s.reserve.cuda_context_bytes},
               {"library_workspace_bytes", s.reserve.library_workspace_bytes},
               {"rounding_bytes_per_tensor", s.reserve.rounding_bytes_per_tensor},
               {"fragmentation", s.reserve.fragmentation},
               {"nccl_bytes_per_group", s.reserve.nccl_bytes_per_group},
               {"assumption", "outside PyTorch's caching allocator: the CUDA context and NCCL's buffers per process "
                              "group; inside it: cuBLAS workspaces, 1 MiB rounding per large persistent tensor and "
                              "a fraction of the transient tensors for fragmentation (docs/training-model.md)"}}},
             {"energy_model", energy_model_text()},
             {"devices", s.layout.gpus},
             {"calibrated_devices", calibrated_devices(s)},
             {"layout", s.parallel ? "per result: plan (docs/parallel.md)" : "one device"}});
    }
    return echo_settings(resolved, derived, command_bit);
}

}  // namespace prenet
