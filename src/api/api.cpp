#include "api/api.hpp"

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "api/calibrate_command.hpp"
#include "api/device_result.hpp"
#include "api/parallel_result.hpp"
#include "api/hardware_selection.hpp"
#include "api/options.hpp"
#include "api/reply_json.hpp"
#include "api/settings.hpp"
#include "api/request_context.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "hardware/precision_support.hpp"
#include "hardware/spec.hpp"
#include "importers/zoo.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {
namespace {

using nlohmann::json;

const json& model_argument(const RequestOptions& o) {
    if (!o.has("model"))
        throw Error("missing 'model' (a zoo id, a Hugging Face or diffusers config.json or a layers JSON document)",
                    ErrorCode::missing, "model");
    return o.value("model");
}

// settings -> the request's context -> one result per accelerator -> the reply.
// The one place a device's precision support is applied: a device without units for the asked precision gets
// the whole step (time and memory, single-device or parallel) planned at the precision it runs as
// (hardware/precision_support.hpp), so it is exactly that precision's prediction and never faster.
json precision_fields(json result, const PrecisionSupport& support, const std::string& hardware_id) {
    result["matmul_precision_used"] = to_string(support.used);
    result["precision_fallback"] = support.fallback() ? json{{"requested", to_string(support.requested)},
                                                              {"used", to_string(support.used)},
                                                              {"reason", support.reason}}
                                                        : json(nullptr);
    json warnings = result.value("warnings", json::array());  // the result's own (batch_warnings) first
    if (support.fallback()) warnings.push_back(support.note(hardware_id) + " (" + support.reason + ")");
    result["warnings"] = warnings;
    return result;
}

// The framework a result's device ran under (settings_on_device: under --framework auto, its usual one), whether
// its element-wise chains were compiled into fused kernels, and whether auto chose it other than the request's
// (generic): the mark the page's badge and the CLI's table show.
json framework_fields(json result, const Settings& asked, const Settings& on_device) {
    result["framework_used"] = on_device.framework.name;
    result["compile_used"] = on_device.compile;
    result["framework_chosen"] = on_device.framework.name != asked.framework.name;
    return result;
}

// Whether a result's device was calibrated (--calibration), and on how many measured rows.
json calibration_fields(json result, const Settings& s, const std::string& hardware_id) {
    const DeviceCalibration* d = s.calibration ? s.calibration->device(hardware_id) : nullptr;
    result["calibrated"] = d != nullptr;
    result["calibration_rows"] = d ? json(d->rows) : json(nullptr);
    return result;
}

// A cluster question's error that refuses only the accelerator it ran on: its sheet cannot form the cluster (no
// published link bandwidth, nodes of another size, a device count its nodes do not fill). Any other error is the
// whole request's. The one rule for both: among several accelerators the refused one gets an error row; alone, or
// when every one is refused, the request's error names it (`hardware`), so a client that asks one accelerator
// at a time (the page) knows the refusal is that accelerator's, not the request's.
bool refuses_the_accelerator(const Error& e) {
    return e.field() == "hardware" || e.field() == "gpus" || e.field() == "gpus_per_node";
}

// The error of a request whose every accelerator was refused: the first refusal, with the accelerator it names.
struct AcceleratorRefused : Error {
    AcceleratorRefused(const Error& e, std::string id) : Error(e), hardware(std::move(id)) {}
    std::string hardware;
};

json predict(const json& request) {
    RequestOptions o(request, kPredict);
    const Settings asked = read_settings(o);
    const json& model = model_argument(o);
    const json& kernel_models = o.value("kernel_models");
    RequestContext context = make_request_context(model, kernel_models, asked);
    // A cluster question's searches share what does not depend on the accelerator (api/parallel_result.cpp): the
    // request without its accelerators says which question it is. (Not made for one device: a request carrying an
    // uploaded model can be megabytes.)
    if (context.settings.parallel) {
        json question = request;
        for (const char* which : {"hardware", "custom_hardware"}) question.erase(which);
        context.question = question.dump();
    }
    // Contexts for the devices that run the request otherwise: at a fallback precision, or (--framework auto)
    // under another framework than the request's generic one; made once per precision and framework.
    std::map<std::pair<Precision, std::string>, std::unique_ptr<RequestContext>> device_contexts;
    auto context_for = [&](const PrecisionSupport& support, const HardwareSpec& hw) -> const RequestContext& {
        Settings s = settings_on_device(asked, hw.kind);
        if (!support.fallback() && s.framework.name == context.settings.framework.name) return context;
        auto& p = device_contexts[{support.used, s.framework.name}];
        if (!p) {
            if (support.fallback()) {
                // The precision replaced: an explicit --mixed is kept, else the fallback's default recipe
                // (autocast; fp8's own default, a half model, is fp8's, not bf16's).
                s.precision = support.used;
                if (!o.has("mixed")) s.mixed = MixedRecipe::autocast;
            }
            p = std::make_unique<RequestContext>(make_request_context(model, kernel_models, s));
            // The precision is part of what parallel_result keys; the framework, which changes the layouts'
            // memory, goes into the question.
            p->question = context.question.empty() ? "" : context.question + "\nframework " + s.framework.name;
        }
        return *p;
    };
    json results = json::array();
    std::vector<HardwareSpec> selection = select_hardware(o);
    std::optional<AcceleratorRefused> first_refusal;
    size_t refused = 0;
    for (const auto& hw : selection) {
        PrecisionSupport support = precision_support(hw, asked.precision);
        const RequestContext& device_context = context_for(support, hw);
        if (!context.settings.parallel) {
            results.push_back(framework_fields(calibration_fields(
                precision_fields(device_result(device_context, hw, selection), support, hw.id), asked, hw.id),
                asked, device_context.settings));
            continue;
        }
        try {
            results.push_back(framework_fields(calibration_fields(
                precision_fields(parallel_device_result(device_context, hw), support, hw.id), asked, hw.id),
                asked, device_context.settings));
        } catch (const Error& e) {
            if (!refuses_the_accelerator(e)) throw;
            if (selection.size() == 1) throw AcceleratorRefused(e, hw.id);
            if (!first_refusal) first_refusal.emplace(e, hw.id);
            ++refused;
            results.push_back({{"hardware", hw.id},
                               {"name", hw.name},
                               {"error", {{"message", e.what()}, {"code", to_string(e.code())}, {"field", e.field()}}}});
        }
    }
    if (first_refusal && refused == selection.size()) throw *first_refusal;
    return {{"model", model_json(context.model, context.features)},
            {"settings", settings_json(context.settings, context.model, kPredict)},
            {"results", results}};
}

json features(const json& request) {
    RequestOptions o(request, kFeatures);
    Settings s = read_settings(o);
    Model model = build_request_model(model_argument(o), s);
    s.mixed = effective_mixed_recipe(s.precision, s.mixed, s.finetune.adapters());
    json out = to_json(model_features(model, s.precision, s.mixed, s.finetune));
    out["model"] = model.name;
    out["import_notes"] = model.notes;
    if (!model.unknown_ops.empty()) out["unknown_ops"] = unknown_ops_json(model);
    if (model.pipeline_encoders) out["pipeline_encoders"] = true;
    out["settings"] = settings_json(s, model, kFeatures);
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

// The catalogue; or, given `custom_hardware`, those spec sheets as a predict request reads them (hardware/spec.cpp's
// checks, errors with field custom_hardware), so a client checks a sheet by the API's rules before it keeps one.
json hardware_list(const json& request) {
    json listing = request;
    listing.erase("custom_hardware");
    RequestOptions(listing, kListing);  // rejects options a listing does not take
    json out = json::array();
    if (!request.contains("custom_hardware")) {
        for (const auto& h : hardware_catalogue()) out.push_back(to_json(h));
        return {{"hardware", out}};
    }
    const json sheets = check_option(*find_option("custom_hardware"), request["custom_hardware"], "'custom_hardware'");
    attribute_errors("custom_hardware", ErrorCode::invalid_hardware, [&] {
        for (const auto& sheet : sheets) out.push_back(to_json(parse_hardware(sheet, "custom hardware spec")));
    });
    return {{"hardware", out}};
}

json layer_kinds() {
    json out = json::array();
    const auto& catalogue = OpCatalogue::instance();
    for (const auto& kind : catalogue.kinds()) out.push_back({{"kind", kind}, {"summary", catalogue.find(kind).summary}});
    return {{"layers", out}};
}

json dispatch(const json& request) {
    if (!request.is_object() || !request.contains("command") || !request["command"].is_string())
        throw Error("request must be a JSON object with a string field 'command'", ErrorCode::bad_request);
    const std::string command = request["command"];
    if (command == "predict") return predict(request);
    if (command == "features") return features(request);
    if (command == "calibrate") return calibrate_reply(request);
    if (command == "version") return {{"version", PRENET_VERSION}};
    const CommandDef* def = find_command(command);
    if (def && def->api && def->bit == kListing) {
        if (command == "hardware") return hardware_list(request);
        RequestOptions(request, kListing);  // rejects options a listing does not take
        if (command == "zoo") return zoo_list();
        if (command == "layers") return layer_kinds();
        if (command == "options") return options_json();
    }
    std::string known;
    for (const auto& c : command_table())
        if (c.api) known += std::string(known.empty() ? "" : ", ") + c.name;
    throw Error("unknown command '" + command + "' (expected " + known + ", version)", ErrorCode::unknown_command,
                "command");
}

json error_reply(const std::string& message, ErrorCode code, const std::string& field, const std::string& path = "",
                 const std::string& attr = "") {
    auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
    return {{"error",
             {{"message", message},
              {"code", to_string(code)},
              {"field", or_null(field)},
              {"path", or_null(path)},
              {"attr", or_null(attr)}}}};
}

}  // namespace

json predict_reply(const json& request) { return predict(request); }

json handle_request(const json& request) {
    try {
        // A value built in C++ (the CLI, tests) has not been through parse_json_document.
        check_json_depth(request, "request");
        return dispatch(request);
    } catch (const AcceleratorRefused& e) {
        json reply = error_reply(e.what(), e.code(), e.field(), e.path(), e.attr());
        reply["error"]["hardware"] = e.hardware;
        return reply;
    } catch (const Error& e) {
        return error_reply(e.what(), e.code(), e.field(), e.path(), e.attr());
    } catch (const std::bad_alloc&) {
        // A size no limit caught: an answer that says so, not a crash (and, in wasm, not an aborted module).
        return error_reply("out of memory: the model or option values are too large to evaluate (limits: "
                           "docs/limits.md)",
                           ErrorCode::invalid_value, "");
    } catch (const std::length_error& e) {
        return error_reply(std::string("too large to evaluate: ") + e.what(), ErrorCode::invalid_value, "");
    } catch (const std::exception& e) {
        // Not raised as an Error: an input no check caught, or a bug; still an answer, never a crash.
        return error_reply(e.what(), ErrorCode::internal, "");
    }
}

std::string handle_request_text(const std::string& request) {
    json parsed;
    try {
        parsed = parse_json_document(request, "request");
    } catch (const Error& e) {
        return error_reply(e.what(), e.code(), e.field()).dump();
    }
    return handle_request(parsed).dump();
}

}  // namespace prenet
