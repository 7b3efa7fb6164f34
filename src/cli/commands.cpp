#include "cli/commands.hpp"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "api/api.hpp"
#include "cli/args.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "fit/dataset.hpp"
#include "fit/fit_models.hpp"
#include "hardware/spec.hpp"
#include "importers/zoo.hpp"
#include "predict/learned.hpp"
#include "predict/op_rows.hpp"
#include "predict/predictor.hpp"

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
  kernels    predict kernel times for rows of a CSV (NeuSight layout)
  fit        fit the kernel models on data/ and write models/ and docs/accuracy.md

`prenet <command> --help` describes each command's options.
)";

const char* kPredictUsage = R"(Usage: prenet predict --model <zoo-id | layers.json | config.json> [options]

  --model M        a zoo id (`prenet zoo`), a layers-JSON file or a Hugging Face config.json
  --hardware H     an id (`prenet hardware`), a spec JSON file, a comma-separated list of those, or all (default)
  --batch N        samples per micro-batch (default 1); a step is --grad-accum micro-batches
  --seq L          tokens per sample (language models; default: the model's)
  --image PX       image side in pixels (vision models; default: the model's)
  --precision P    fp32 | tf32 | fp16 | bf16 | fp8 (default fp32); fp16/bf16/fp8 are mixed precision with
                   fp32 master weights, fp16 adds loss scaling (docs/training-model.md)
  --mixed R        how fp16/bf16 keep their tensors: autocast (default: PyTorch AMP, fp32 weights and
                   gradients, norms/softmax/embeddings in fp32) | half (Megatron/DeepSpeed: a half-precision
                   model beside an fp32 master copy); fp8 always runs as a bf16 model
  --optimizer O    sgd (with momentum) | adam | adamw | adafactor | lion (default adamw)
  --optimizer-impl I  fused (one multi-tensor kernel; default) | foreach (torch.optim's sequence of
                   multi-tensor ops); Adafactor has no fused kernel: fused runs it tensor by tensor
  --grad-accum N   micro-batches of --batch samples per optimizer step (default 1)
  --checkpointing  activation checkpointing: keep each block's input, recompute its forward in backward
  --samples N      run length: samples per epoch (2e12 accepted) ...
  --epochs E       ... times epochs (default 1)
  --tokens T       or: tokens to train on (language models; tokens per step = batch x grad-accum x seq)
  --price-per-hour X  price of one accelerator-hour in USD for the run's cost (default: the cheapest cloud
                   price on its spec sheet)
  --input-samples-per-s R  the input pipeline's rate: a step takes at least batch x grad-accum / R
  --attention A    eager (default: scores materialised, as Hugging Face's eager attention) | flash (one fused
                   kernel, FlashAttention / PyTorch SDPA)
  --predictor P    learned (default when fitted models are built in) | roofline
  --models FILE    use kernel models from FILE (as written by `prenet fit`) instead of the built-in ones
  --breakdown      also the time of each layer (forward, backward with any recompute; every repeat and
                   micro-batch): in the table the 12 longest per accelerator, in JSON step.layers
  --json           print one JSON document instead of a table

With --samples or --tokens each result gets a run: steps, hours, GPU-hours, cost and energy. When a step does
not fit in memory, the result says by how much and what would make it fit (memory.advice).
)";

const char* kFeaturesUsage = R"(Usage: prenet features --model <zoo-id | file> [--batch N] [--seq L] [--image PX]
                        [--precision P] [--json]

Prints params, forward and backward FLOPs (FLOPs = 2 x multiply-accumulates) and each layer's features.
)";

const char* kKernelsUsage = R"(Usage: prenet kernels --csv IN --hardware <id | spec file> [--out OUT] [--precision P]
                       [--predictor learned|roofline] [--models kernels.json]

Reads kernel rows in the layout of NeuSight's ops tables (column `op` plus its dims: linear/bmm b,m,n,k;
conv b,in_channels,out_channels,kernel_size,input_size,stride,padding; ln, softmax and elementwise ops b,h;
an optional `precision` column) and writes them back with a `predicted_ms` column appended (to OUT, or stdout).
)";

const char* kFitUsage = R"(Usage: prenet fit [--data DIR] [--models OUT.json] [--report OUT.md] [--plots DIR]
                   [--rows-per-device N] [--trees N] [--dump-predictions OUT.csv] [--without CHIPS]

Fits the per-family kernel models on the measurements in DIR (default data), validates them leaving one
accelerator out at a time, and writes the models (default models/kernels.json), the accuracy report (default
docs/accuracy.md) and plots (default docs/plots). Deterministic: the same data gives the same files.

  --without CHIPS  leave these chips out of everything (comma-separated device-id prefixes: `v100,a100`
                   drops every V100 and A100 variant), for checking whole-model predictions on chips the
                   models never saw (tools/compare_published.mjs)
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

// One --hardware item: a spec file (read here) or a catalogue id / "all" (resolved by the API).
json hardware_item(const std::string& h) {
    if (std::ifstream(h).good()) return read_json_file(h);
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
    if (std::ifstream(h).good()) return read_json_file(h);
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
        throw Error("--" + flag + " must be a number, got '" + text + "'");
    return x;
}

// Size flags: positive whole numbers, scientific notation allowed.
json size_value(const std::string& flag, const std::string& text) {
    double x = number_flag(flag, text);
    if (x <= 0 || x != std::floor(x)) throw Error("--" + flag + " must be a positive integer, got '" + text + "'");
    return x;
}

// A positive real number (rates, epochs); zero_ok allows 0 (prices).
json positive_value(const std::string& flag, const std::string& text, bool zero_ok = false) {
    double x = number_flag(flag, text);
    if (x < 0 || (!zero_ok && x == 0))
        throw Error("--" + flag + " must be " + (zero_ok ? "zero or more" : "positive") + ", got '" + text + "'");
    return x;
}

json request_from(const std::string& command, const Args& a) {
    json r = {{"command", command}, {"model", model_argument(a)}};
    for (const char* flag : {"batch", "seq", "image"})
        if (a.has(flag)) r[flag] = size_value(flag, a.get(flag));
    for (const char* flag : {"precision", "optimizer", "predictor", "mixed"})
        if (a.has(flag)) r[flag] = a.get(flag);
    if (a.has("optimizer-impl")) r["optimizer_impl"] = a.get("optimizer-impl");
    if (a.has("attention")) r["attention"] = a.get("attention");
    if (a.has("grad-accum")) r["grad_accum"] = size_value("grad-accum", a.get("grad-accum"));
    if (a.has("checkpointing")) r["checkpointing"] = true;
    if (a.has("breakdown")) r["breakdown"] = true;
    for (const char* flag : {"samples", "tokens"})
        if (a.has(flag)) r[flag] = size_value(flag, a.get(flag));
    if (a.has("epochs")) r["epochs"] = positive_value("epochs", a.get("epochs"));
    if (a.has("price-per-hour")) r["price_per_hour"] = positive_value("price-per-hour", a.get("price-per-hour"), true);
    if (a.has("input-samples-per-s"))
        r["input_samples_per_s"] = positive_value("input-samples-per-s", a.get("input-samples-per-s"));
    if (command == "predict") r["hardware"] = hardware_argument(a.get("hardware", "all"));
    if (a.has("models")) r["kernel_models"] = read_json_file(a.get("models"));
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
    Precision precision = parse_precision(a.get("precision", "fp32"));
    std::unique_ptr<KernelPredictor> predictor;
    if (a.has("models")) predictor = std::make_unique<LearnedPredictor>(read_json_file(a.get("models")));
    else predictor = make_predictor(a.get("predictor", default_predictor_name()));
    CsvTable table = read_csv_file(a.get("csv"));
    std::vector<Kernel> kernels = kernels_from_table(table, precision, a.get("csv"));
    std::ofstream file;
    if (a.has("out")) {
        file.open(a.get("out"));
        if (!file) throw Error("cannot write '" + a.get("out") + "'");
    }
    std::ostream& dest = a.has("out") ? file : out;
    for (size_t i = 0; i < table.header.size(); ++i) dest << (i ? "," : "") << csv_field(table.header[i]);
    dest << ",predicted_ms\n";
    char buf[32];
    for (size_t r = 0; r < table.rows.size(); ++r) {
        for (size_t i = 0; i < table.rows[r].size(); ++i) dest << (i ? "," : "") << csv_field(table.rows[r][i]);
        std::snprintf(buf, sizeof buf, "%.6g", predictor->kernel_ms(kernels[r], hw));
        dest << "," << buf << "\n";
    }
    return 0;
}

int fit_command(const Args& a) {
    FitOptions o;
    o.data_dir = a.get("data", o.data_dir);
    o.models_out = a.get("models", o.models_out);
    o.report_out = a.get("report", o.report_out);
    o.plots_dir = a.get("plots", o.plots_dir);
    if (a.has("rows-per-device")) o.max_rows_per_device = int(size_value("rows-per-device", a.get("rows-per-device")).get<double>());
    o.dump_predictions = a.get("dump-predictions");
    if (a.has("trees")) o.gbt.trees = int(size_value("trees", a.get("trees")).get<double>());
    if (a.has("without")) o.without = comma_list(a.get("without"));
    fit_and_validate(o);
    return 0;
}

}  // namespace

int run(const std::vector<std::string>& argv, std::ostream& out) {
    const std::set<std::string> values = {"model", "hardware", "batch",  "seq",    "image",  "precision",
                                          "optimizer", "predictor", "csv", "out", "data", "models",
                                          "report", "plots", "rows-per-device", "trees", "dump-predictions", "without",
                                          "optimizer-impl", "attention", "grad-accum", "samples", "epochs", "tokens",
                                          "price-per-hour", "input-samples-per-s", "mixed"};
    Args a = parse_args(argv, values, {"json", "help", "version", "checkpointing", "breakdown"});
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
    if (a.command == "kernels") {
        if (a.has("help")) return out << kKernelsUsage, 0;
        return kernels_command(a, out);
    }
    if (a.command == "fit") {
        if (a.has("help")) return out << kFitUsage, 0;
        return fit_command(a);
    }
    throw Error("unknown command '" + a.command + "' (see `prenet --help`)");
}

}  // namespace prenet::cli
