#include "cli/commands.hpp"

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "api/api.hpp"
#include "api/calibrate_command.hpp"
#include "api/fit_command.hpp"
#include "api/kernels_command.hpp"
#include "api/model_argument.hpp"
#include "api/options.hpp"
#include "cli/args.hpp"
#include "cli/help.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/precision.hpp"

namespace prenet::cli {
namespace {

using nlohmann::json;

// A user's JSON file: a regular file within the size and nesting limits (core/limits.hpp).
json read_json_file(const std::string& path, ErrorCode code, const std::string& field) {
    return parse_json_document(read_text_file(path, code, field), "'" + path + "'", code, field);
}

bool is_onnx_path(const std::string& path) {
    std::string tail = path.size() >= 5 ? path.substr(path.size() - 5) : "";
    for (auto& c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
    return tail == ".onnx";
}

// A model named on the command line or in a measurements file: a zoo id, or an ONNX or JSON file.
json model_value(const std::string& m) {
    if (is_zoo_id(m)) return m;
    // An ONNX file travels to the API as base64 in a JSON request, as the page sends it (docs/importers.md).
    if (path_exists(m) && is_onnx_path(m))
        return onnx_model_document(read_file_bytes(m, limits::onnx_bytes, ErrorCode::invalid_model, "model"), m);
    if (path_exists(m)) return read_json_file(m, ErrorCode::invalid_model, "model");
    if (m.find(".json") != std::string::npos || is_onnx_path(m)) throw Error("cannot read model file '" + m + "'");
    return m;  // reported by the API as an unknown zoo id, with suggestions
}

json model_argument(const Args& a) {
    if (!a.has("model")) throw Error("missing --model (a zoo id or a JSON file); see `prenet predict --help`");
    return model_value(a.get("model"));
}

// One --hardware item: a spec file (read here) or a catalogue id / "all" (resolved by the API).
json hardware_item(const std::string& h) {
    if (path_exists(h)) return read_json_file(h, ErrorCode::invalid_hardware, "hardware");
    if (h.find(".json") != std::string::npos) throw Error("cannot read hardware spec file '" + h + "'");
    return h;
}

std::vector<std::string> comma_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) items.push_back(item);
    return items;
}

json hardware_argument(const std::string& h) {
    if (h == "all") return h;
    if (path_exists(h)) return read_json_file(h, ErrorCode::invalid_hardware, "hardware");
    // A comma-separated list of ids and spec files.
    json items = json::array();
    for (const auto& item : comma_list(h)) items.push_back(hardware_item(item));
    return items;
}

// A flag's number: decimal digits, a point and an exponent only (strtod alone would also take hex, "inf" and
// leading blanks), so 2e12 works and 0x10 does not.
double number_flag(const std::string& flag, const std::string& text) {
    char* end = nullptr;
    double x = std::strtod(text.c_str(), &end);
    if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos || *end != '\0' ||
        !std::isfinite(x))
        throw Error("--" + flag + " must be a number, got '" + text + "'", ErrorCode::invalid_value);
    return x;
}

// A flag's text as the JSON value its option row takes, checked against the row (messages name the flag).
json flag_value(const OptionDef& row, const Args& a) {
    const std::string text = a.get(row.flag);
    switch (row.type) {
        case OptionType::count:
        case OptionType::number: return check_option(row, number_flag(row.flag, text), "--" + row.flag);
        case OptionType::choice: return check_option(row, text, "--" + row.flag);
        case OptionType::flag: return a.options.count(row.flag) ? json(text) : json(true);
        case OptionType::model: return model_argument(a);
        case OptionType::hardware: return hardware_argument(text);
        case OptionType::document: return read_json_file(text, ErrorCode::invalid_value, row.name);
        // A text option with its own reading (the network) is read here too, so its errors name the flag.
        case OptionType::text: return check_option(row, text, "--" + row.flag);
        case OptionType::sheets:
        case OptionType::rows:  // read by the calibrate command (models relative to the file)
        case OptionType::path:
        case OptionType::list: return text;
    }
    return text;
}

// Every API option given on the command line, by its row.
json request_from(const CommandDef& command, const Args& a) {
    json r = {{"command", command.name}};
    for (const auto& row : option_table())
        if (row.api && !row.flag.empty() && row.takes(command.bit) && a.has(row.flag)) r[row.name] = flag_value(row, a);
    if (!r.contains("model") && (command.bit & (kPredict | kFeatures)))
        throw Error("missing --model (a zoo id or a JSON file); see `prenet " + std::string(command.name) + " --help`",
                    ErrorCode::missing, "model");
    return r;
}

json call(const json& request) {
    json reply = handle_request(request);
    // The CLI prints only the message (main.cpp); the code and field are for programs reading the JSON.
    if (reply.is_object() && reply.contains("error")) throw Error(reply["error"].value("message", std::string("error")));
    return reply;
}

int print(std::ostream& out, const json& doc, bool as_json, void (*table)(std::ostream&, const json&)) {
    if (as_json) {
        out << doc.dump(2) << "\n";  // JSON escapes control characters itself
    } else {
        std::ostringstream text;
        table(text, doc);
        out << terminal_safe(text.str());  // user strings (layer names) can hold control characters
    }
    return 0;
}

int kernels_command(const Args& a, std::ostream& out) {
    if (!a.has("csv")) throw Error("missing --csv (a table of kernels); see `prenet kernels --help`");
    if (!a.has("hardware")) throw Error("missing --hardware (an id or a spec file)");
    KernelsRequest request;
    request.hardware_origin = a.get("hardware");
    request.hardware = hardware_argument(request.hardware_origin);
    const OptionDef& precision_row = *find_flag("precision", kKernels);
    request.precision = parse_precision(a.has("precision") ? flag_value(precision_row, a).get<std::string>()
                                                           : precision_row.default_value.get<std::string>());
    if (a.has("models")) request.kernel_models = read_json_file(a.get("models"), ErrorCode::invalid_value, "models");
    if (a.has("predictor")) request.predictor = a.get("predictor");
    if (a.has("calibration"))
        request.calibration = read_json_file(a.get("calibration"), ErrorCode::invalid_value, "calibration");
    request.csv_path = a.get("csv");
    std::string table = kernel_predictions_csv(request);
    std::ofstream file;
    if (a.has("out")) {
        file.open(a.get("out"));
        if (!file) throw Error("cannot write '" + a.get("out") + "'");
    }
    (a.has("out") ? file : out) << table;
    return 0;
}

// A file named in a measurements file, relative to that file's folder (an absolute name as it is).
std::string beside(const std::string& file, const std::string& name) {
    if (name.empty() || name[0] == '/') return name;
    size_t slash = file.find_last_of('/');
    return slash == std::string::npos ? name : file.substr(0, slash + 1) + name;
}

// `prenet calibrate`: the measurements file read here (a JSON list, or CSV parsed by the API's reader), its
// models and spec sheets read relative to it, then the API's calibrate.
int calibrate_command(const Args& a, std::ostream& out) {
    if (!a.has("measurements"))
        throw Error("missing --measurements (a CSV or JSON file of measured rows); see `prenet calibrate --help`",
                    ErrorCode::missing, "measurements");
    const std::string path = a.get("measurements");
    std::string text = read_text_file(path, ErrorCode::invalid_value, "measurements");
    bool is_json = path.size() >= 5 && path.substr(path.size() - 5) == ".json";
    json given = is_json ? parse_json_document(text, "'" + path + "'", ErrorCode::invalid_value, "measurements") : json(text);
    std::vector<json> rows = measurement_rows(given);
    for (auto& row : rows) {
        if (row.contains("model") && row["model"].is_string() && !is_zoo_id(row["model"].get<std::string>()))
            row["model"] = model_value(beside(path, row["model"].get<std::string>()));
        if (row.contains("trace") && row["trace"].is_string())
            row["trace"] = read_json_file(beside(path, row["trace"].get<std::string>()), ErrorCode::invalid_value,
                                          "measurements");
        if (row.contains("hardware") && row["hardware"].is_string()) {
            std::string sheet = beside(path, row["hardware"].get<std::string>());
            if (path_exists(sheet)) row["hardware"] = read_json_file(sheet, ErrorCode::invalid_hardware, "hardware");
        }
    }
    json request = {{"command", "calibrate"}, {"measurements", rows}};
    if (a.has("hardware")) request["hardware"] = hardware_argument(a.get("hardware"));
    if (a.has("predictor")) request["predictor"] = a.get("predictor");
    if (a.has("models")) request["kernel_models"] = read_json_file(a.get("models"), ErrorCode::invalid_value, "models");
    if (a.has("calibration"))
        request["calibration"] = read_json_file(a.get("calibration"), ErrorCode::invalid_value, "calibration");
    json reply = call(request);
    if (a.has("out")) {
        std::ofstream file(a.get("out"));
        if (!file || !(file << reply["calibration"].dump(2) << "\n"))
            throw Error("cannot write '" + a.get("out") + "'");
    }
    if (a.has("json")) return print(out, reply, true, nullptr);
    print(out, reply, false, print_calibration_table);
    if (!reply.value("kept_devices", json::array()).empty()) {
        out << "Kept from --calibration (not measured here):";
        for (const auto& id : reply["kept_devices"]) out << " " << id.get<std::string>();
        out << "\n";
    }
    if (!a.has("out")) out << "(no --out: the calibration was not written)\n";
    return 0;
}

// The fit's options by their rows: counts checked as any flag's, lists split at commas, paths as given.
int fit_command(const Args& a) {
    json options = json::object();
    for (const auto& row : option_table()) {
        if (!row.takes(kFit) || row.flag.empty() || row.is_switch() || !a.has(row.flag)) continue;
        if (row.type == OptionType::count) options[row.name] = flag_value(row, a);
        else if (row.type == OptionType::list) options[row.name] = comma_list(a.get(row.flag));
        else options[row.name] = a.get(row.flag);
    }
    fit_kernel_models(options);
    return 0;
}

}  // namespace

int run(const std::vector<std::string>& argv, std::ostream& out) {
    std::set<std::string> values, switches;
    std::map<std::string, std::set<std::string>> switch_words;
    for (const auto& row : option_table()) {
        if (!row.flag.empty()) (row.is_switch() ? switches : values).insert(row.flag);
        if (!row.switch_values.empty()) switch_words[row.flag].insert(row.switch_values.begin(), row.switch_values.end());
    }
    Args a = parse_args(argv, values, switches, switch_words);
    if (a.has("version")) {
        out << call({{"command", "version"}})["version"].get<std::string>() << "\n";
        return 0;
    }
    if (a.command.empty() || a.command == "help") {
        out << main_usage();
        return a.command.empty() && !a.has("help") ? 1 : 0;
    }
    const CommandDef* command = find_command(a.command);
    if (!command) throw Error("unknown command '" + a.command + "' (see `prenet --help`)", ErrorCode::unknown_command);
    if (a.has("help")) return out << command_usage(a.command), 0;
    // A flag another command takes is still a mistake here.
    for (const auto& name : a.given())
        if (!find_flag(name, command->bit))
            throw Error("option --" + name + " does not apply to `prenet " + a.command + "` (see `prenet " + a.command +
                            " --help`)",
                        ErrorCode::unknown_option, name);
    bool as_json = a.has("json");
    if (command->bit == kPredict) return print(out, call(request_from(*command, a)), as_json, print_prediction_table);
    if (command->bit == kFeatures) return print(out, call(request_from(*command, a)), as_json, print_features_table);
    if (command->bit == kKernels) return kernels_command(a, out);
    if (command->bit == kCalibrate) return calibrate_command(a, out);
    if (command->bit == kFit) return fit_command(a);
    json reply = call({{"command", a.command}});
    if (a.command == "zoo") return print(out, reply, as_json, print_zoo_table);
    if (a.command == "hardware") return print(out, reply, as_json, print_hardware_table);
    if (a.command == "layers") return print(out, reply, as_json, print_layers_table);
    return print(out, reply, as_json, print_options_table);
}

}  // namespace prenet::cli
