#include "api/api.hpp"

#include <cmath>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "importers/resolve.hpp"
#include "importers/zoo.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "predict/learned.hpp"
#include "predict/predictor.hpp"
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

struct Settings {
    ModelInputs inputs;
    Precision precision = Precision::fp32;
    std::string optimizer = "adamw", predictor;
};

Settings read_settings(const json& r) {
    Settings s;
    s.inputs.batch = size_option(r, "batch", 1, std::int64_t{1} << 40);
    s.inputs.seq = r.contains("seq") ? size_option(r, "seq", 0, std::int64_t{1} << 40) : 0;
    s.inputs.image = r.contains("image") ? size_option(r, "image", 0, 1 << 20) : 0;
    s.precision = parse_precision(text_option(r, "precision", "fp32"));
    s.optimizer = text_option(r, "optimizer", "adamw");
    find_optimizer(s.optimizer);
    s.predictor = text_option(r, "predictor", default_predictor_name());
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
    return {{"batch", s.inputs.batch},
            {"seq", m.tokens_per_sample ? json(m.tokens_per_sample) : json(nullptr)},
            {"image", m.tokens_per_sample ? json(nullptr) : (s.inputs.image ? json(s.inputs.image) : json(nullptr))},
            {"precision", to_string(s.precision)},
            {"optimizer", s.optimizer},
            {"predictor", s.predictor},
            {"devices", 1},
            {"flops_convention", "FLOPs = 2 x multiply-accumulates"}};
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
    const LearnedPredictor* learned = dynamic_cast<const LearnedPredictor*>(&predictor);
    if (auto* shared = dynamic_cast<const SharedPredictor*>(&predictor))
        learned = dynamic_cast<const LearnedPredictor*>(&shared->inner());
    if (!learned) return nullptr;
    double r = learned->relative_uncertainty(t.by_family_ms, hw);
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
    ModelFeatures features = compute_features(model, s.precision);
    std::unique_ptr<KernelPredictor> predictor;
    if (r.contains("kernel_models")) predictor = std::make_unique<LearnedPredictor>(r["kernel_models"]);
    else predictor = make_predictor(s.predictor);
    if (r.contains("kernel_models")) s.predictor = "learned (custom models)";
    const OptimizerDef& optimizer = find_optimizer(s.optimizer);
    json results = json::array();
    for (const auto& hw : resolve_hardware(r)) {
        StepTime t = predict_step(features, hw, *predictor, s.precision, optimizer);
        MemoryUse mem = estimate_memory(features, hw, s.precision, optimizer);
        double samples_per_s = double(model.batch) / (t.total_ms() / 1e3);
        // Absurd spec sheets (peaks or bandwidth near zero) must not turn into inf/NaN (null in JSON).
        if (!std::isfinite(t.total_ms()) || !std::isfinite(mem.peak) || !std::isfinite(samples_per_s) ||
            !(samples_per_s > 0))
            throw Error("the prediction for hardware '" + hw.id +
                        "' is not a finite number; check its peak FLOP/s and bandwidth");
        std::string peak_used;
        hw.matmul_flops(s.precision, &peak_used);
        results.push_back(
            {{"hardware", hw.id},
             {"name", hw.name},
             {"step",
              {{"forward_ms", t.forward_ms},
               {"backward_ms", t.backward_ms},
               {"optimizer_ms", t.optimizer_ms},
               {"communication_ms", t.communication_ms},
               {"total_ms", t.total_ms()},
               {"by_family_ms", t.by_family_ms}}},
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
               {"temporary_bytes", mem.temporary}}},
             {"uncertainty", uncertainty_json(*predictor, t, hw)},
             {"matmul_peak_used", peak_used},
             {"price_per_hour", hw.price_per_hour()}});
    }
    return {{"model", model_json(model, features)}, {"settings", settings_json(s, model)}, {"results", results}};
}

json features(const json& r) {
    Settings s = read_settings(r);
    Model model = resolve_model(model_argument(r), s.inputs);
    json out = to_json(compute_features(model, s.precision));
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
