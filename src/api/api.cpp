#include "api/api.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "importers/resolve.hpp"
#include "importers/zoo.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "predict/learned.hpp"
#include "predict/predictor.hpp"
#include "run/checkpointing.hpp"
#include "run/energy.hpp"
#include "run/grad_accumulation.hpp"
#include "run/memory.hpp"
#include "run/memory_advice.hpp"
#include "run/precision_recipe.hpp"
#include "run/run_estimate.hpp"
#include "run/run_length.hpp"
#include "run/step.hpp"

namespace prenet {
namespace {

using nlohmann::json;

std::int64_t size_option(const json& r, const char* key, std::int64_t fallback, std::int64_t max) {
    if (!r.contains(key) || r[key].is_null()) return fallback;
    const json& v = r[key];
    double x = v.is_number() ? v.get<double>() : NAN;
    if (!(x >= 1) || x != std::floor(x))
        throw Error(std::string("'") + key + "' must be a positive integer, got " + v.dump());
    if (x > double(max)) throw Error(std::string("'") + key + "' is absurdly large: " + v.dump());
    return static_cast<std::int64_t>(x);
}

std::string text_option(const json& r, const char* key, const std::string& fallback) {
    if (!r.contains(key) || r[key].is_null()) return fallback;
    if (!r[key].is_string()) throw Error(std::string("'") + key + "' must be a string");
    return r[key];
}

// A finite number in [min, max] (min excluded when `positive`); `fallback` when absent or null.
double number_option(const json& r, const char* key, double fallback, bool positive, double max) {
    if (!r.contains(key) || r[key].is_null()) return fallback;
    const json& v = r[key];
    double x = v.is_number() ? v.get<double>() : NAN;
    if (!std::isfinite(x) || x < 0 || (positive && x == 0))
        throw Error(std::string("'") + key + "' must be a " + (positive ? "positive" : "non-negative") +
                    " number, got " + v.dump());
    if (x > max) throw Error(std::string("'") + key + "' is absurdly large: " + v.dump());
    return x;
}

// A positive whole count that may be written as 2e12 (samples, tokens).
double count_option(const json& r, const char* key) {
    double x = number_option(r, key, 0, true, 1e18);
    if (x != std::floor(x)) throw Error(std::string("'") + key + "' must be a whole number, got " + r[key].dump());
    return x;
}

bool bool_option(const json& r, const char* key, bool fallback) {
    if (!r.contains(key) || r[key].is_null()) return fallback;
    if (!r[key].is_boolean()) throw Error(std::string("'") + key + "' must be true or false");
    return r[key].get<bool>();
}

struct Settings {
    ModelInputs inputs;
    Precision precision = Precision::fp32;
    MixedRecipe mixed = MixedRecipe::autocast;
    std::string optimizer = "adamw", predictor;
    OptimizerImpl optimizer_impl = OptimizerImpl::fused;
    std::int64_t grad_accum = 1;
    bool checkpointing = false;
    bool breakdown = false;  // per-layer times in each result's step
    RunLength run;
    double price_per_hour = -1;       // < 0: the sheet's cheapest cloud price
    double input_samples_per_s = 0;   // 0: unlimited
    double kernel_overhead_ms = 0;    // framework overhead per kernel (hook; 0 by default)
    FrameworkReserve reserve = FrameworkReserve::pytorch_default();
};

Settings read_settings(const json& r) {
    Settings s;
    s.inputs.batch = size_option(r, "batch", 1, std::int64_t{1} << 40);
    s.inputs.seq = r.contains("seq") ? size_option(r, "seq", 0, std::int64_t{1} << 40) : 0;
    s.inputs.image = r.contains("image") ? size_option(r, "image", 0, 1 << 20) : 0;
    std::string attention = text_option(r, "attention", "eager");
    if (attention != "eager" && attention != "flash")
        throw Error("'attention' must be eager or flash, got '" + attention + "'");
    s.inputs.flash_attention = attention == "flash";
    s.precision = parse_precision(text_option(r, "precision", "fp32"));
    // fp8 runs as a bf16 model (Transformer Engine); fp16 and bf16 default to PyTorch's autocast.
    s.mixed = s.precision == Precision::fp8 ? MixedRecipe::half_model : MixedRecipe::autocast;
    if (r.contains("mixed") && !r["mixed"].is_null()) {
        MixedRecipe asked = parse_mixed_recipe(text_option(r, "mixed", "autocast"));
        if (s.precision == Precision::fp32 || s.precision == Precision::tf32)
            throw Error(std::string("'mixed' applies to fp16 and bf16 (the precision is ") + to_string(s.precision) +
                        ")");
        if (s.precision == Precision::fp8 && asked == MixedRecipe::autocast)
            throw Error("fp8 runs as a bf16 model with fp32 master weights; 'mixed' autocast applies to fp16 and bf16");
        s.mixed = asked;
    }
    s.optimizer = text_option(r, "optimizer", "adamw");
    find_optimizer(s.optimizer);
    s.optimizer_impl = parse_optimizer_impl(text_option(r, "optimizer_impl", "fused"));
    s.grad_accum = size_option(r, "grad_accum", 1, std::int64_t{1} << 30);
    global_batch(s.inputs.batch, s.grad_accum);  // overflow check
    s.checkpointing = bool_option(r, "checkpointing", false);
    s.breakdown = bool_option(r, "breakdown", false);
    s.run.samples = count_option(r, "samples");
    s.run.epochs = number_option(r, "epochs", 0, true, 1e9);
    s.run.tokens = count_option(r, "tokens");
    if (s.run.samples > 0 && s.run.tokens > 0) throw Error("give either 'samples' (with 'epochs') or 'tokens', not both");
    if (s.run.epochs > 0 && !(s.run.samples > 0)) throw Error("'epochs' needs 'samples' (samples per epoch)");
    s.price_per_hour = number_option(r, "price_per_hour", -1, false, 1e6);
    s.input_samples_per_s = number_option(r, "input_samples_per_s", 0, true, 1e15);
    s.kernel_overhead_ms = number_option(r, "kernel_overhead_ms", 0, false, 1e3);
    // Only a request without a predictor pays for looking at the built-in models (parsed on first use).
    s.predictor = r.contains("predictor") && !r["predictor"].is_null() ? text_option(r, "predictor", "")
                                                                     : default_predictor_name();
    return s;
}

const json& model_argument(const json& r) {
    if (!r.contains("model") || r["model"].is_null())
        throw Error("missing 'model' (a zoo id, a Hugging Face config.json or a layers JSON document)");
    return r["model"];
}

std::vector<HardwareSpec> resolve_hardware(const json& r) {
    std::vector<HardwareSpec> out;
    json arg = r.contains("hardware") ? r["hardware"] : json("all");
    auto add_id = [&](const std::string& id) {
        if (id == "all") out.insert(out.end(), hardware_catalogue().begin(), hardware_catalogue().end());
        else out.push_back(find_hardware(id));
    };
    if (arg.is_string()) {
        add_id(arg.get<std::string>());
    } else if (arg.is_array()) {
        for (const auto& a : arg) {
            if (a.is_string()) add_id(a.get<std::string>());
            else out.push_back(parse_hardware(a, "hardware spec"));
        }
    } else if (arg.is_object()) {
        out.push_back(parse_hardware(arg, "hardware spec"));
    } else if (!arg.is_null()) {
        throw Error("'hardware' must be an id, \"all\", a spec object or a list of those");
    }
    if (r.contains("custom_hardware") && r["custom_hardware"].is_array())
        for (const auto& sheet : r["custom_hardware"]) out.push_back(parse_hardware(sheet, "custom hardware spec"));
    if (out.empty()) throw Error("no hardware selected");
    return out;
}

json settings_json(const Settings& s, const Model& m) {
    const OptimizerDef& opt = find_optimizer(s.optimizer);
    auto given = [](double x) { return x > 0 ? json(x) : json(nullptr); };
    return {{"batch", s.inputs.batch},
            {"seq", m.tokens_per_sample ? json(m.tokens_per_sample) : json(nullptr)},
            {"image", m.tokens_per_sample ? json(nullptr) : (s.inputs.image ? json(s.inputs.image) : json(nullptr))},
            {"precision", to_string(s.precision)},
            {"mixed", precision_recipe(s.precision, s.mixed).mixed ? json(to_string(s.mixed)) : json(nullptr)},
            {"attention", s.inputs.flash_attention ? "flash" : "eager"},
            {"optimizer", s.optimizer},
            {"optimizer_impl", to_string(s.optimizer_impl)},
            {"optimizer_impl_used", to_string(effective_impl(opt, s.optimizer_impl))},
            {"grad_accum", s.grad_accum},
            {"global_batch", global_batch(s.inputs.batch, s.grad_accum)},
            {"checkpointing", s.checkpointing},
            {"breakdown", s.breakdown},
            {"samples", given(s.run.samples)},
            {"epochs", s.run.samples > 0 ? json(s.run.epochs > 0 ? s.run.epochs : 1.0) : json(nullptr)},
            {"tokens", given(s.run.tokens)},
            {"price_per_hour", s.price_per_hour >= 0 ? json(s.price_per_hour) : json(nullptr)},
            {"price_source", s.price_per_hour >= 0 ? "--price-per-hour" : "cheapest cloud price on the spec sheet"},
            {"input_samples_per_s", given(s.input_samples_per_s)},
            {"kernel_overhead_ms", s.kernel_overhead_ms},
            {"memory_reserve",
             {{"context_bytes", s.reserve.context_bytes},
              {"fraction", s.reserve.fraction},
              {"assumption", "CUDA context and library workspaces plus a fraction of the tensor peak for "
                             "allocator fragmentation (docs/training-model.md)"}}},
            {"energy_model", "TDP x (0.3 + 0.7 x share of step time in matmul/conv kernels), accelerator only"},
            {"predictor", s.predictor},
            {"devices", 1},
            {"flops_convention", "FLOPs = 2 x multiply-accumulates"}};
}

json layers_json(const std::vector<LayerTime>& layers) {
    json out = json::array();
    for (const auto& l : layers)
        out.push_back({{"name", l.name},
                       {"block", l.block},
                       {"kind", l.kind},
                       {"repeat", l.repeat},
                       {"forward_ms", l.forward_ms},
                       {"backward_ms", l.backward_ms},
                       {"total_ms", l.total_ms()},
                       {"kernels", l.kernels}});
    return out;
}

json batch_advice_json(const std::optional<BatchAdvice>& a) {
    if (!a) return nullptr;
    return {{"batch", a->batch},
            {"grad_accum", a->grad_accum},
            {"peak_bytes", a->peak_bytes},
            {"largest_fitting_batch", a->largest_fitting_batch}};
}

json advice_json(const MemoryAdvice& a) {
    json ckpt = nullptr;
    if (a.checkpointing)
        ckpt = {{"peak_bytes", a.checkpointing->peak_bytes},
                {"fits", a.checkpointing->fits},
                {"micro_batch", batch_advice_json(a.checkpointing->micro_batch)}};
    json hw = nullptr;
    if (a.smallest_hardware)
        hw = {{"id", a.smallest_hardware->hardware.id},
              {"capacity_bytes", a.smallest_hardware->hardware.memory_bytes()},
              {"price_per_hour", a.smallest_hardware->hardware.price_per_hour()},
              {"batch", a.smallest_hardware->batch},
              {"grad_accum", a.smallest_hardware->grad_accum},
              {"checkpointing", a.smallest_hardware->checkpointing},
              {"peak_bytes", a.smallest_hardware->peak_bytes}};
    return {{"over_bytes", a.over_bytes},
            {"micro_batch", batch_advice_json(a.micro_batch)},
            {"checkpointing", ckpt},
            {"smallest_hardware", hw},
            {"summary", a.summary}};
}

json run_json(const RunEstimate& e, const StepTime& t) {
    return {{"steps", e.steps.steps},
            {"samples", e.steps.samples},
            {"tokens", e.steps.tokens > 0 ? json(e.steps.tokens) : json(nullptr)},
            {"hours", e.hours},
            {"gpu_hours", e.gpu_hours},
            {"price_per_hour_used", e.price_known ? json(e.price_per_hour) : json(nullptr)},
            {"cost_usd", e.price_known ? json(e.cost_usd) : json(nullptr)},
            {"power_share_of_tdp", power_share(t)},
            {"average_power_w", e.has_energy() ? json(e.average_power_w) : json(nullptr)},
            {"energy_kwh", e.has_energy() ? json(e.energy_kwh) : json(nullptr)}};
}

json model_json(const Model& m, const ModelFeatures& f) {
    return {{"name", m.name},
            {"domain", m.domain},
            {"params", f.params},
            {"forward_flops", f.forward_flops},
            {"backward_flops", f.backward_flops()},
            {"tokens_per_sample", m.tokens_per_sample}};
}

// The range a learned prediction carries (docs/accuracy.md explains it); null for the roofline.
json uncertainty_json(const KernelPredictor& predictor, const StepTime& t, const HardwareSpec& hw) {
    std::optional<double> relative = predictor.relative_uncertainty(t.by_family_ms, hw);
    if (!relative) return nullptr;
    double r = *relative;
    return {{"low_ms", t.total_ms() / (1.0 + r)}, {"high_ms", t.total_ms() * (1.0 + r)}, {"relative", r}};
}

json predict(const json& r) {
    Settings s = read_settings(r);
    Model model = resolve_model(model_argument(r), s.inputs);
    if (s.inputs.image == 0 && model.domain == "vision") {
        // Report the image size the model was built at.
        const Shape& in = model.blocks.front().layers.front().input;
        if (in.size() == 4) s.inputs.image = in[3];
    }
    ModelFeatures features = compute_features(model, s.precision, s.mixed);
    std::unique_ptr<KernelPredictor> predictor;
    if (r.contains("kernel_models")) predictor = std::make_unique<LearnedPredictor>(r["kernel_models"]);
    else predictor = make_predictor(s.predictor);
    if (r.contains("kernel_models")) s.predictor = "learned (custom models)";
    const OptimizerDef& optimizer = find_optimizer(s.optimizer);
    const std::int64_t global = global_batch(model.batch, s.grad_accum);
    std::optional<RunSteps> run;
    if (s.run.given()) run = run_steps(s.run, global, model.tokens_per_sample);

    TrainingSetup setup;
    setup.precision = s.precision;
    setup.mixed = s.mixed;
    setup.optimizer = &optimizer;
    setup.optimizer_impl = s.optimizer_impl;
    setup.grad_accum = s.grad_accum;
    setup.checkpointing = s.checkpointing;
    StepOptions step_options;
    static_cast<TrainingSetup&>(step_options) = setup;
    step_options.micro_batch = model.batch;
    step_options.input_samples_per_s = s.input_samples_per_s;
    step_options.kernel_overhead_ms = s.kernel_overhead_ms;
    step_options.layer_breakdown = s.breakdown;
    MemoryOptions memory_options;
    static_cast<TrainingSetup&>(memory_options) = setup;
    memory_options.reserve = s.reserve;

    // The peak at another micro-batch or checkpointing setting (for advice): the model rebuilt at that
    // batch; the peak does not depend on the accelerator, so one cache serves every result.
    std::map<std::pair<std::int64_t, bool>, double> peaks;
    const HardwareSpec& any_hw = hardware_catalogue().front();
    PeakAt peak_at = [&](std::int64_t batch, bool checkpointing) {
        auto key = std::make_pair(batch, checkpointing);
        auto it = peaks.find(key);
        if (it != peaks.end()) return it->second;
        ModelInputs inputs = s.inputs;
        inputs.batch = batch;
        Model m = resolve_model(model_argument(r), inputs);  // outlives f, which points into it
        ModelFeatures f = compute_features(m, s.precision, s.mixed);
        MemoryOptions o = memory_options;
        o.checkpointing = checkpointing;
        o.grad_accum = (global + batch - 1) / batch;  // the accumulation that keeps the global batch
        return peaks[key] = estimate_memory(f, any_hw, o).peak;
    };
    bool has_blocks = checkpoint_units(features) > 0;

    json results = json::array();
    for (const auto& hw : resolve_hardware(r)) {
        StepTime t = predict_step(features, hw, *predictor, step_options);
        MemoryUse mem = estimate_memory(features, hw, memory_options);
        peaks.emplace(std::make_pair(model.batch, s.checkpointing), mem.peak);
        double samples_per_s = double(global) / (t.total_ms() / 1e3);
        // Absurd spec sheets (peaks or bandwidth near zero) must not turn into inf/NaN (null in JSON).
        if (!std::isfinite(t.total_ms()) || !std::isfinite(mem.peak) || !std::isfinite(samples_per_s) ||
            !(samples_per_s > 0))
            throw Error("the prediction for hardware '" + hw.id +
                        "' is not a finite number; check its peak FLOP/s and bandwidth");
        std::string peak_used;
        hw.matmul_flops(s.precision, &peak_used);
        json advice = nullptr;
        if (!mem.fits()) {
            AdviceRequest q;
            q.peak_bytes = mem.peak;
            q.capacity_bytes = mem.capacity;
            q.batch = model.batch;
            q.grad_accum = s.grad_accum;
            q.checkpointing = s.checkpointing;
            q.has_checkpoint_blocks = has_blocks;
            advice = advice_json(advise_memory(q, peak_at, hardware_catalogue()));
        }
        json run_result = nullptr;
        if (run) run_result = run_json(estimate_run(*run, t, hw, s.price_per_hour), t);
        results.push_back(
            {{"hardware", hw.id},
             {"name", hw.name},
             {"step",
              {{"forward_ms", t.forward_ms},
               {"backward_ms", t.backward_ms},
               {"optimizer_ms", t.optimizer_ms},
               {"communication_ms", t.communication_ms},
               {"input_stall_ms", t.input_stall_ms},
               {"total_ms", t.total_ms()},
               {"micro_batch_ms", t.micro_batch_ms},
               {"grad_accum", t.grad_accum},
               {"recompute_ms", t.recompute_ms},
               {"grad_accumulation_ms", t.grad_accumulation_ms},
               {"input_ms", s.input_samples_per_s > 0 ? json(t.input_ms) : json(nullptr)},
               {"input_bound", t.input_bound()},
               {"matmul_ms", t.matmul_ms},
               {"kernels", t.kernels},
               {"by_family_ms", by_family_json(t.by_family_ms)},
               {"layers", s.breakdown ? layers_json(t.layers) : json(nullptr)}}},
             {"throughput",
              {{"samples_per_s", samples_per_s},
               {"tokens_per_s", model.tokens_per_sample ? json(samples_per_s * double(model.tokens_per_sample))
                                                        : json(nullptr)}}},
             {"memory",
              {{"peak_bytes_per_device", mem.peak},
               {"capacity_bytes", mem.capacity},
               {"fits", mem.fits()},
               {"weights_bytes", mem.weights},
               {"gradients_bytes", mem.gradients},
               {"optimizer_state_bytes", mem.optimizer_states},
               {"activation_bytes", mem.activations},
               {"temporary_bytes", mem.temporary},
               {"weight_copies_bytes", mem.weight_copies},
               {"framework_reserve_bytes", mem.framework_reserve},
               {"layer_temporary_bytes", mem.layer_temporary},
               {"optimizer_scratch_bytes", mem.optimizer_scratch},
               {"peak_phase", mem.peak_phase},
               {"checkpointed_blocks", mem.checkpointed_blocks},
               {"advice", advice}}},
             {"run", run_result},
             {"uncertainty", uncertainty_json(*predictor, t, hw)},
             {"matmul_peak_used", peak_used},
             {"price_per_hour", hw.price_per_hour()}});
    }
    return {{"model", model_json(model, features)}, {"settings", settings_json(s, model)}, {"results", results}};
}

json features(const json& r) {
    Settings s = read_settings(r);
    Model model = resolve_model(model_argument(r), s.inputs);
    json out = to_json(compute_features(model, s.precision, s.mixed));
    out["model"] = model.name;
    out["settings"] = settings_json(s, model);
    return out;
}

json zoo_list() {
    json out = json::array();
    for (const auto& e : zoo()) {
        json item = {{"id", e.id}, {"domain", e.domain}, {"description", e.description}};
        if (e.default_seq) item["default_seq"] = e.default_seq;
        if (e.default_image) item["default_image"] = e.default_image;
        out.push_back(item);
    }
    return {{"models", out}};
}

json hardware_list() {
    json out = json::array();
    for (const auto& h : hardware_catalogue()) out.push_back(to_json(h));
    return {{"hardware", out}};
}

json layer_kinds() {
    json out = json::array();
    const auto& catalogue = OpCatalogue::instance();
    for (const auto& kind : catalogue.kinds()) out.push_back({{"kind", kind}, {"summary", catalogue.find(kind).summary}});
    return {{"layers", out}};
}

}  // namespace

json handle_request(const json& request) {
    try {
        if (!request.is_object() || !request.contains("command") || !request["command"].is_string())
            throw Error("request must be a JSON object with a string field 'command'");
        const std::string command = request["command"];
        if (command == "version") return {{"version", PRENET_VERSION}};
        if (command == "zoo") return zoo_list();
        if (command == "hardware") return hardware_list();
        if (command == "layers") return layer_kinds();
        if (command == "features") return features(request);
        if (command == "predict") return predict(request);
        throw Error("unknown command '" + command + "' (expected predict, features, zoo, hardware, layers, version)");
    } catch (const std::exception& e) {
        return {{"error", e.what()}};
    }
}

std::string handle_request_text(const std::string& request) {
    auto parsed = json::parse(request, nullptr, false);
    if (parsed.is_discarded()) return json{{"error", "request is not valid JSON"}}.dump();
    return handle_request(parsed).dump();
}

}  // namespace prenet
