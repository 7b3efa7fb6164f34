#include "cli/commands.hpp"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "api/api.hpp"
#include "cli/args.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "importers/zoo.hpp"

namespace prenet::cli {
namespace {

using nlohmann::json;

const char* kUsage = R"(prenet: predicts deep-learning training time, memory and cost on accelerators.

Usage: prenet <command> [options]

Commands:
  predict    step time, throughput and memory of training a model on accelerators
  features   per-layer computational features (params, FLOPs, bytes, activations)
  zoo        the built-in models
  hardware   the accelerator catalogue
  layers     the layer types the layers-JSON format accepts

`prenet <command> --help` describes each command's options.
)";

const char* kPredictUsage = R"(Usage: prenet predict --model <zoo-id | layers.json | config.json> [options]

  --model M        a zoo id (`prenet zoo`), a layers-JSON file or a Hugging Face config.json
  --hardware H     an id (`prenet hardware`), a comma-separated list of ids, a spec JSON file, or all (default)
  --batch N        samples per step (default 1)
  --seq L          tokens per sample (language models; default: the model's)
  --image PX       image side in pixels (vision models; default: the model's)
  --precision P    fp32 | tf32 | fp16 | bf16 | fp8 (default fp32)
  --optimizer O    sgd | adam | adamw (default adamw)
  --predictor P    roofline (default; the learned predictor replaces it when fitted)
  --json           print one JSON document instead of a table
)";

const char* kFeaturesUsage = R"(Usage: prenet features --model <zoo-id | file> [--batch N] [--seq L] [--image PX]
                        [--precision P] [--json]

Prints params, forward and backward FLOPs (FLOPs = 2 x multiply-accumulates) and each layer's features.
)";

json read_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw Error("cannot read '" + path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    json j = json::parse(ss.str(), nullptr, false);
    if (j.is_discarded()) throw Error("'" + path + "' is not valid JSON");
    return j;
}

bool is_zoo_id(const std::string& s) {
    for (const auto& e : zoo())
        if (e.id == s) return true;
    return false;
}

json model_argument(const Args& a) {
    if (!a.has("model")) throw Error("missing --model (a zoo id or a JSON file); see `prenet predict --help`");
    std::string m = a.get("model");
    if (is_zoo_id(m)) return m;
    if (std::ifstream(m).good()) return read_json_file(m);
    if (m.find(".json") != std::string::npos) throw Error("cannot read model file '" + m + "'");
    return m;  // reported by the API as an unknown zoo id, with suggestions
}

json hardware_argument(const std::string& h) {
    if (h == "all") return h;
    if (h.find(".json") != std::string::npos || std::ifstream(h).good()) {
        if (!std::ifstream(h).good()) throw Error("cannot read hardware spec file '" + h + "'");
        return read_json_file(h);
    }
    json ids = json::array();
    std::stringstream ss(h);
    for (std::string id; std::getline(ss, id, ',');)
        if (!id.empty()) ids.push_back(id);
    return ids;
}

// Size flags accept plain integers and scientific notation (2e12) but nothing fractional or negative.
json size_value(const std::string& flag, const std::string& text) {
    char* end = nullptr;
    double x = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(x))
        throw Error("--" + flag + " must be a number, got '" + text + "'");
    if (x <= 0 || x != std::floor(x)) throw Error("--" + flag + " must be a positive integer, got '" + text + "'");
    return x;
}

json request_from(const std::string& command, const Args& a) {
    json r = {{"command", command}, {"model", model_argument(a)}};
    for (const char* flag : {"batch", "seq", "image"})
        if (a.has(flag)) r[flag] = size_value(flag, a.get(flag));
    for (const char* flag : {"precision", "optimizer", "predictor"})
        if (a.has(flag)) r[flag] = a.get(flag);
    if (command == "predict") r["hardware"] = hardware_argument(a.get("hardware", "all"));
    return r;
}

json call(const json& request) {
    json reply = handle_request(request);
    if (reply.is_object() && reply.contains("error")) throw Error(reply["error"].get<std::string>());
    return reply;
}

int print(std::ostream& out, const json& doc, bool as_json, void (*table)(std::ostream&, const json&)) {
    if (as_json) out << doc.dump(2) << "\n";
    else table(out, doc);
    return 0;
}

}  // namespace

int run(const std::vector<std::string>& argv, std::ostream& out) {
    const std::set<std::string> values = {"model", "hardware", "batch", "seq", "image", "precision", "optimizer",
                                          "predictor"};
    Args a = parse_args(argv, values, {"json", "help", "version"});
    if (a.has("version")) {
        out << call({{"command", "version"}})["version"].get<std::string>() << "\n";
        return 0;
    }
    if (a.command.empty() || a.command == "help") {
        out << kUsage;
        return a.command.empty() && !a.has("help") ? 1 : 0;
    }
    bool as_json = a.has("json");
    if (a.command == "predict") {
        if (a.has("help")) return out << kPredictUsage, 0;
        return print(out, call(request_from("predict", a)), as_json, print_prediction_table);
    }
    if (a.command == "features") {
        if (a.has("help")) return out << kFeaturesUsage, 0;
        return print(out, call(request_from("features", a)), as_json, print_features_table);
    }
    if (a.command == "zoo") {
        if (a.has("help")) return out << "Usage: prenet zoo [--json]\n\nLists the built-in models.\n", 0;
        return print(out, call({{"command", "zoo"}}), as_json, print_zoo_table);
    }
    if (a.command == "hardware") {
        if (a.has("help")) return out << "Usage: prenet hardware [--json]\n\nLists the accelerator catalogue.\n", 0;
        return print(out, call({{"command", "hardware"}}), as_json, print_hardware_table);
    }
    if (a.command == "layers") {
        if (a.has("help")) return out << "Usage: prenet layers [--json]\n\nLists the layer types.\n", 0;
        return print(out, call({{"command", "layers"}}), as_json, print_layers_table);
    }
    throw Error("unknown command '" + a.command + "' (see `prenet --help`)");
}

}  // namespace prenet::cli
