#include "cli/commands.hpp"

#include <cctype>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "api/api.hpp"
#include "api/options.hpp"
#include "cli/args.hpp"
#include "cli/help.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "fit/dataset.hpp"
#include "fit/fit_models.hpp"
#include "hardware/spec.hpp"
#include "importers/onnx.hpp"
#include "importers/zoo.hpp"
#include "parallel/collective_rows.hpp"
#include "predict/learned.hpp"
#include "predict/op_rows.hpp"
#include "predict/predictor.hpp"

namespace prenet::cli {
namespace {

using nlohmann::json;

// A user's JSON file: a regular file within the size and nesting limits (core/limits.hpp).
json read_json_file(const std::string& path, ErrorCode code, const std::string& field) {
    return parse_json_document(read_text_file(path, code, field), "'" + path + "'", code, field);
}

bool is_zoo_id(const std::string& s) {
    for (const auto& e : zoo())
        if (e.id == s) return true;
    return false;
}

bool is_onnx_path(const std::string& path) {
    std::string tail = path.size() >= 5 ? path.substr(path.size() - 5) : "";
    for (auto& c : tail) c = char(std::tolower(static_cast<unsigned char>(c)));
    return tail == ".onnx";
}

json model_argument(const Args& a) {
    if (!a.has("model")) throw Error("missing --model (a zoo id or a JSON file); see `prenet predict --help`");
    std::string m = a.get("model");
    if (is_zoo_id(m)) return m;
    // An ONNX file travels to the API as base64 in a JSON request, as the page sends it (docs/importers.md).
    if (path_exists(m) && is_onnx_path(m))
        return json{{"onnx_base64", base64_encode(read_file_bytes(m, limits::onnx_bytes, ErrorCode::invalid_model, "model"))},
                    {"name", m}};
    if (path_exists(m)) return read_json_file(m, ErrorCode::invalid_model, "model");
    if (m.find(".json") != std::string::npos || is_onnx_path(m)) throw Error("cannot read model file '" + m + "'");
    return m;  // reported by the API as an unknown zoo id, with suggestions
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
        case OptionType::sheets:
        case OptionType::text:
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

// A CLI-only count (fit's --trees): the row's check, the flag's name.
int count_flag(const Args& a, const std::string& flag, unsigned command_bit) {
    return int(check_option(*find_flag(flag, command_bit), number_flag(flag, a.get(flag)), "--" + flag).get<double>());
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

HardwareSpec single_hardware(const std::string& h) {
    json arg = hardware_argument(h);
    if (arg.is_object()) return parse_hardware(arg, h);
    if (arg.is_array() && arg.size() == 1) return find_hardware(arg[0].get<std::string>());
    throw Error("--hardware must name one accelerator (an id or a spec file)");
}

int kernels_command(const Args& a, std::ostream& out) {
    if (!a.has("csv")) throw Error("missing --csv (a table of kernels); see `prenet kernels --help`");
    if (!a.has("hardware")) throw Error("missing --hardware (an id or a spec file)");
    HardwareSpec hw = single_hardware(a.get("hardware"));
    const OptionDef& precision_row = *find_flag("precision", kKernels);
    Precision precision = parse_precision(a.has("precision") ? flag_value(precision_row, a).get<std::string>()
                                                             : precision_row.default_value.get<std::string>());
    std::unique_ptr<KernelPredictor> predictor;
    if (a.has("models")) predictor = std::make_unique<LearnedPredictor>(read_json_file(a.get("models"), ErrorCode::invalid_value, "models"));
    else predictor = make_predictor(a.get("predictor", default_predictor_name()));
    CsvTable table = read_csv_file(a.get("csv"));
    // Collective rows are timed by the shipped collective model on a cluster of this accelerator; every other
    // row is a kernel.
    // A matrix row at a precision this device has no units for is timed as the row at the precision it runs as.
    std::vector<Kernel> kernels = kernels_from_table(table, precision, a.get("csv"), is_collective_row_op, &hw);
    int op_col = table.column("op");
    std::vector<double> predicted(table.rows.size());
    for (size_t r = 0; r < table.rows.size(); ++r) {
        if (is_collective_row_op(table.rows[r][op_col])) {
            CollectiveRow c = collective_row_of(table, r, hw, a.get("csv") + " row " + std::to_string(r + 2));
            predicted[r] = CollectiveModel::shipped().time_ms(c.op, c.message_bytes, c.group, c.cluster);
        } else {
            predicted[r] = predictor->kernel_ms(kernels[r], hw);
        }
    }
    std::ofstream file;
    if (a.has("out")) {
        file.open(a.get("out"));
        if (!file) throw Error("cannot write '" + a.get("out") + "'");
    }
    std::ostream& dest = a.has("out") ? file : out;
    for (size_t i = 0; i < table.header.size(); ++i) dest << (i ? "," : "") << csv_field(table.header[i]);
    // predicted_ms stays the last column; matmul_precision_used (the precision a matrix row was timed at: the
    // row's, or its fallback on this device) comes before it, empty for vector and collective rows.
    dest << ",matmul_precision_used,predicted_ms\n";
    char buf[32];
    for (size_t r = 0; r < table.rows.size(); ++r) {
        for (size_t i = 0; i < table.rows[r].size(); ++i) dest << (i ? "," : "") << csv_field(table.rows[r][i]);
        std::snprintf(buf, sizeof buf, "%.6g", predicted[r]);
        bool matrix = !is_collective_row_op(table.rows[r][op_col]) && uses_matrix_units(kernels[r].family);
        dest << "," << (matrix ? to_string(kernels[r].precision) : "") << "," << buf << "\n";
    }
    return 0;
}

int fit_command(const Args& a) {
    FitOptions o;
    o.data_dir = a.get("data", o.data_dir);
    o.models_out = a.get("models", o.models_out);
    o.report_out = a.get("report", o.report_out);
    o.plots_dir = a.get("plots", o.plots_dir);
    if (a.has("rows-per-device")) o.max_rows_per_device = count_flag(a, "rows-per-device", kFit);
    o.dump_predictions = a.get("dump-predictions");
    if (a.has("trees")) o.gbt.trees = count_flag(a, "trees", kFit);
    if (a.has("without")) o.without = comma_list(a.get("without"));
    o.collectives_out = a.get("collectives", o.collectives_out);
    o.only = a.get("only");
    // A partial fit never overwrites the full report unless told to: without --report it prints its section.
    if (o.only == "collectives" && !a.has("report")) o.report_out.clear();
    fit_and_validate(o);
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
    if (command->bit == kFit) return fit_command(a);
    json reply = call({{"command", a.command}});
    if (a.command == "zoo") return print(out, reply, as_json, print_zoo_table);
    if (a.command == "hardware") return print(out, reply, as_json, print_hardware_table);
    if (a.command == "layers") return print(out, reply, as_json, print_layers_table);
    return print(out, reply, as_json, print_options_table);
}

}  // namespace prenet::cli
