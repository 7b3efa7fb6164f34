#include "api/options.hpp"

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/precision.hpp"
#include "predict/predictor.hpp"
#include "run/optimizer.hpp"

namespace prenet {

using nlohmann::json;

const char* to_string(OptionType type) {
    switch (type) {
        case OptionType::count: return "count";
        case OptionType::number: return "number";
        case OptionType::choice: return "choice";
        case OptionType::flag: return "flag";
        case OptionType::model: return "model";
        case OptionType::hardware: return "hardware";
        case OptionType::sheets: return "sheets";
        case OptionType::document: return "document";
        case OptionType::path: return "path";
        case OptionType::list: return "list";
    }
    return "flag";
}

const std::vector<CommandDef>& command_table() {
    static const std::vector<CommandDef> commands = {
        {"predict", kPredict, true, "step time, throughput and memory of training a model on accelerators",
         "--model <zoo-id | layers.json | config.json> [options]",
         "With --samples or --tokens each result gets a run: steps, hours, GPU-hours, cost and energy. When a step\n"
         "does not fit in memory, the result says by how much and what would make it fit (memory.advice).\n"},
        {"features", kFeatures, true, "per-layer computational features (params, FLOPs, bytes, activations)",
         "--model <zoo-id | file> [options]",
         "Prints params, forward and backward FLOPs (FLOPs = 2 x multiply-accumulates) and each layer's features.\n"},
        {"zoo", kListing, true, "the built-in models", "[--json]", "Lists the built-in models.\n"},
        {"hardware", kListing, true, "the accelerator catalogue", "[--json]", "Lists the accelerator catalogue.\n"},
        {"layers", kListing, true, "the layer types the layers-JSON format accepts", "[--json]",
         "Lists the layer types.\n"},
        {"options", kListing, true, "every option of every command (the table the CLI, API and page share)",
         "[--json]", "Lists the option table: name, flag, type, unit, range, default, commands.\n"},
        {"kernels", kKernels, false, "predict kernel times for rows of a CSV (NeuSight layout)",
         "--csv IN --hardware <id | spec file> [options]",
         "Reads kernel rows in the layout of NeuSight's ops tables (column `op` plus its dims: linear/bmm b,m,n,k;\n"
         "conv b,in_channels,out_channels,kernel_size,input_size,stride,padding; ln, softmax and elementwise ops\n"
         "b,h; an optional `precision` column) and writes them back with a `predicted_ms` column appended.\n"},
        {"fit", kFit, false, "fit the kernel models on data/ and write models/ and docs/accuracy.md", "[options]",
         "Fits the per-family kernel models on the measurements in --data, validates them leaving one accelerator\n"
         "out at a time, and writes the models, the accuracy report and plots. Deterministic: the same data gives\n"
         "the same files.\n"},
    };
    return commands;
}

const CommandDef* find_command(const std::string& name) {
    for (const auto& c : command_table())
        if (name == c.name) return &c;
    return nullptr;
}

namespace {

std::vector<std::string> precision_choices() { return {"fp32", "tf32", "fp16", "bf16", "fp8"}; }

OptionDef count_row(std::string name, std::string flag, std::string label, std::string unit, double max,
                    json default_value, std::string default_text, std::string help, unsigned commands) {
    OptionDef d;
    d.name = std::move(name);
    d.flag = std::move(flag);
    d.type = OptionType::count;
    d.metavar = "N";
    d.label = std::move(label);
    d.unit = std::move(unit);
    d.min = 1;
    d.max = max;
    d.default_value = std::move(default_value);
    d.default_text = std::move(default_text);
    d.help = std::move(help);
    d.commands = commands;
    return d;
}

std::vector<OptionDef> build_table() {
    constexpr unsigned kRun = kPredict;            // options of a training step and run
    constexpr unsigned kModelCommands = kPredict | kFeatures;
    const double k2e40 = double(std::int64_t{1} << 40);
    std::vector<OptionDef> t;
    auto add = [&](OptionDef d) -> OptionDef& {
        t.push_back(std::move(d));
        return t.back();
    };

    {
        OptionDef d;
        d.name = "model";
        d.flag = "model";
        d.type = OptionType::model;
        d.metavar = "M";
        d.label = "Model";
        d.default_text = "required";
        d.help = "a zoo id (`prenet zoo`), a layers-JSON file or a Hugging Face config.json";
        d.commands = kModelCommands;
        d.page = "model";
        add(d);
    }
    {
        OptionDef d;
        d.name = "hardware";
        d.flag = "hardware";
        d.type = OptionType::hardware;
        d.metavar = "H";
        d.label = "Accelerators";
        d.default_value = "all";
        d.default_text = "all";
        d.help = "an id (`prenet hardware`), a spec JSON file, a comma-separated list of those, or all";
        d.commands = kPredict | kKernels;
        d.page = "hardware";
        add(d);
    }
    {
        OptionDef d;
        d.name = "custom_hardware";
        d.type = OptionType::sheets;
        d.label = "Your own accelerators";
        d.default_text = "none";
        d.help = "spec sheets added to the accelerators (the CLI takes spec files in --hardware instead)";
        d.commands = kPredict;
        d.page = "hardware";
        add(d);
    }
    {
        OptionDef& d = add(count_row("batch", "batch", "Batch size", "samples per micro-batch", k2e40, 1, "1",
                                     "samples per micro-batch; a step is --grad-accum micro-batches", kModelCommands));
        d.echo = true;
        d.page = "training";
        d.url = "batch";
    }
    {
        OptionDef& d = add(count_row("seq", "seq", "Sequence length", "tokens", k2e40, nullptr, "the model's",
                                     "tokens per sample (language models)", kModelCommands));
        d.metavar = "L";
        d.echo = true;
        d.page = "training";
        d.url = "seq";
    }
    {
        OptionDef& d = add(count_row("image", "image", "Image size", "pixels", double(1 << 20), nullptr,
                                     "the model's", "image side in pixels (vision models)", kModelCommands));
        d.metavar = "PX";
        d.echo = true;
        d.page = "training";
        d.url = "image";
    }
    {
        OptionDef d;
        d.name = "precision";
        d.flag = "precision";
        d.type = OptionType::choice;
        d.metavar = "P";
        d.label = "Precision";
        d.choices = precision_choices();
        d.default_value = "fp32";
        d.default_text = "fp32";
        d.help = "fp16/bf16/fp8 are mixed precision with fp32 master weights, fp16 adds loss scaling "
                 "(docs/training-model.md)";
        d.commands = kModelCommands | kKernels;
        d.echo = true;
        d.page = "training";
        d.url = "precision";
        add(d);
    }
    {
        OptionDef d;
        d.name = "mixed";
        d.flag = "mixed";
        d.type = OptionType::choice;
        d.metavar = "R";
        d.label = "Mixed-precision recipe";
        d.choices = {"autocast", "half"};
        d.default_text = "autocast for fp16 and bf16";
        d.help = "how fp16/bf16 keep their tensors: autocast (PyTorch AMP: fp32 weights and gradients, norms, "
                 "softmax and embeddings in fp32) or half (Megatron/DeepSpeed: a half-precision model beside an "
                 "fp32 master copy); fp8 always runs as a bf16 model";
        d.commands = kModelCommands;
        d.echo = true;
        d.page = "training";
        d.advanced = true;
        d.url = "mixed";
        add(d);
    }
    {
        OptionDef d;
        d.name = "attention";
        d.flag = "attention";
        d.type = OptionType::choice;
        d.metavar = "A";
        d.label = "Attention kernels";
        d.choices = {"eager", "flash"};
        d.default_value = "eager";
        d.default_text = "eager";
        d.help = "eager (scores materialised, as Hugging Face's eager attention) or flash (one fused kernel, "
                 "FlashAttention / PyTorch SDPA)";
        d.commands = kModelCommands;
        d.echo = true;
        d.page = "training";
        d.advanced = true;
        d.url = "attn";
        add(d);
    }
    {
        OptionDef d;
        d.name = "optimizer";
        d.flag = "optimizer";
        d.type = OptionType::choice;
        d.metavar = "O";
        d.label = "Optimizer";
        for (const auto& o : optimizer_catalogue()) d.choices.push_back(o.name);
        d.default_value = "adamw";
        d.default_text = "adamw";
        d.help = "sgd (with momentum), adam, adamw, adafactor or lion";
        d.commands = kRun;
        d.echo = true;
        d.page = "training";
        d.url = "optimizer";
        add(d);
    }
    {
        OptionDef d;
        d.name = "optimizer_impl";
        d.flag = "optimizer-impl";
        d.type = OptionType::choice;
        d.metavar = "I";
        d.label = "Optimizer implementation";
        d.choices = {"fused", "foreach"};
        d.default_value = "fused";
        d.default_text = "fused";
        d.help = "fused (one multi-tensor kernel) or foreach (torch.optim's sequence of multi-tensor ops); "
                 "Adafactor has no fused kernel: fused runs it tensor by tensor";
        d.commands = kRun;
        d.echo = true;
        d.page = "training";
        d.advanced = true;
        d.url = "opt_impl";
        add(d);
    }
    {
        OptionDef& d = add(count_row("grad_accum", "grad-accum", "Gradient accumulation", "micro-batches",
                                     double(std::int64_t{1} << 30), 1, "1",
                                     "micro-batches of --batch samples per optimizer step", kRun));
        d.echo = true;
        d.page = "training";
        d.advanced = true;
        d.url = "accum";
    }
    {
        OptionDef d;
        d.name = "checkpointing";
        d.flag = "checkpointing";
        d.type = OptionType::flag;
        d.label = "Activation checkpointing";
        d.default_value = false;
        d.default_text = "off";
        d.help = "keep each block's input and recompute its forward in the backward pass";
        d.commands = kRun;
        d.echo = true;
        d.page = "training";
        d.advanced = true;
        d.url = "ckpt";
        add(d);
    }
    {
        OptionDef d;
        d.name = "breakdown";
        d.flag = "breakdown";
        d.type = OptionType::flag;
        d.label = "Per-layer times";
        d.default_value = false;
        d.default_text = "off";
        d.help = "also the time of each layer (forward, backward with any recompute; every repeat and "
                 "micro-batch): in the table the 12 longest per accelerator, in JSON step.layers";
        d.commands = kRun;
        d.echo = true;
        d.page = "results";
        add(d);
    }
    {
        OptionDef& d = add(count_row("samples", "samples", "Samples per epoch", "samples", 1e18, nullptr,
                                     "none: no run",
                                     "run length in samples per epoch (2e12 accepted), times --epochs; for a "
                                     "language model --tokens takes precedence when both are given",
                                     kRun));
        d.echo = true;
        d.page = "training";
        d.url = "samples";
    }
    {
        OptionDef d;
        d.name = "epochs";
        d.flag = "epochs";
        d.type = OptionType::number;
        d.metavar = "E";
        d.label = "Epochs";
        d.min = 0;
        d.min_exclusive = true;
        d.max = 1e9;
        d.default_text = "1 with --samples";
        d.help = "passes over --samples";
        d.commands = kRun;
        d.echo = true;
        d.page = "training";
        d.url = "epochs";
        add(d);
    }
    {
        OptionDef& d = add(count_row("tokens", "tokens", "Tokens to train on", "tokens", 1e18, nullptr,
                                     "none: no run",
                                     "run length in tokens (language models; tokens per step = batch x grad-accum "
                                     "x seq); a model without tokens uses --samples instead when both are given",
                                     kRun));
        d.metavar = "T";
        d.echo = true;
        d.page = "training";
        d.url = "tokens";
    }
    {
        OptionDef d;
        d.name = "price_per_hour";
        d.flag = "price-per-hour";
        d.type = OptionType::number;
        d.metavar = "X";
        d.label = "Price per accelerator-hour";
        d.unit = "USD per hour";
        d.min = 0;
        d.max = 1e6;
        d.default_text = "the cheapest cloud price on each spec sheet";
        d.help = "price of one accelerator-hour for the run's cost";
        d.commands = kRun;
        d.echo = true;
        d.page = "training";
        d.advanced = true;
        d.url = "pph";
        add(d);
    }
    {
        OptionDef d;
        d.name = "input_samples_per_s";
        d.flag = "input-samples-per-s";
        d.type = OptionType::number;
        d.metavar = "R";
        d.label = "Input pipeline rate";
        d.unit = "samples per second";
        d.min = 0;
        d.min_exclusive = true;
        d.max = 1e15;
        d.default_text = "unlimited";
        d.help = "the input pipeline's rate: a step takes at least batch x grad-accum / R";
        d.commands = kRun;
        d.echo = true;
        d.page = "training";
        d.advanced = true;
        d.url = "input_rate";
        add(d);
    }
    {
        OptionDef d;
        d.name = "predictor";
        d.flag = "predictor";
        d.type = OptionType::choice;
        d.metavar = "P";
        d.label = "Kernel-time predictor";
        d.choices = predictor_names();
        d.default_text = "learned when fitted models are built in, else roofline";
        d.help = "learned (kernel models fitted on measurements) or roofline (peak FLOP/s and bandwidth only)";
        d.commands = kRun | kKernels;
        d.echo = true;
        d.page = "training";
        d.advanced = true;
        d.url = "predictor";
        add(d);
    }
    {
        OptionDef d;
        d.name = "kernel_models";
        d.flag = "models";
        d.type = OptionType::document;
        d.metavar = "FILE";
        d.label = "Kernel models";
        d.default_text = "the built-in models";
        d.help = "use kernel models from FILE (as written by `prenet fit`) instead of the built-in ones";
        d.commands = kRun | kKernels;
        d.page_note = "a file written by `prenet fit` on a workstation; the page uses the models built in";
        add(d);
    }
    {
        OptionDef d;
        d.name = "kernel_overhead_ms";
        d.flag = "kernel-overhead-ms";
        d.type = OptionType::number;
        d.metavar = "MS";
        d.label = "Overhead per kernel";
        d.unit = "ms";
        d.min = 0;
        d.max = 1e3;
        d.default_value = 0;
        d.default_text = "0";
        d.help = "a framework overhead added to every kernel launch (the predictors already include a launch "
                 "cost; for experiments)";
        d.commands = kRun;
        d.echo = true;
        d.page_note = "an experiment's knob: the predictors already include each kernel's launch cost";
        add(d);
    }

    // CLI-only options: output, and the files of the offline commands.
    auto cli_only = [&](std::string name, std::string flag, OptionType type, std::string metavar,
                        std::string default_text, std::string help, unsigned commands, std::string note) {
        OptionDef d;
        d.name = std::move(name);
        d.flag = std::move(flag);
        d.type = type;
        d.metavar = std::move(metavar);
        d.default_text = std::move(default_text);
        d.help = std::move(help);
        d.commands = commands;
        d.api = false;
        d.page_note = std::move(note);
        if (type == OptionType::count) d.min = 1, d.max = 1e9;
        if (type == OptionType::flag) d.default_value = false;
        return add(d);
    };
    const std::string offline = "`prenet kernels` and `prenet fit` work on files: native CLI only";
    cli_only("csv", "csv", OptionType::path, "IN", "required", "a table of kernels (NeuSight's ops layout)", kKernels,
             offline);
    cli_only("out", "out", OptionType::path, "OUT", "stdout", "where to write the table with predicted_ms",
             kKernels, offline);
    cli_only("data", "data", OptionType::path, "DIR", "data", "the measurements to fit on", kFit, offline);
    cli_only("models_out", "models", OptionType::path, "OUT.json", "models/kernels.json", "where to write the models",
             kFit, offline);
    cli_only("report", "report", OptionType::path, "OUT.md", "docs/accuracy.md", "where to write the accuracy report",
             kFit, offline);
    cli_only("plots", "plots", OptionType::path, "DIR", "docs/plots", "where to write the plots", kFit, offline);
    cli_only("rows_per_device", "rows-per-device", OptionType::count, "N", "all",
             "at most N rows per device and family (a quick fit)", kFit, offline);
    cli_only("trees", "trees", OptionType::count, "N", "the fit's default", "boosted trees per family", kFit,
             offline);
    cli_only("dump_predictions", "dump-predictions", OptionType::path, "OUT.csv", "none",
             "every held-out prediction with its measurement", kFit, offline);
    cli_only("without", "without", OptionType::list, "CHIPS", "none",
             "leave these chips out of everything (comma-separated device-id prefixes: `v100,a100` drops every V100 "
             "and A100 variant), for checking whole-model predictions on chips the models never saw",
             kFit, offline);
    cli_only("json", "json", OptionType::flag, "", "off", "print one JSON document instead of a table",
             kPredict | kFeatures | kListing, "the page shows tables and offers the JSON for download");
    cli_only("help", "help", OptionType::flag, "", "", "describe the command and its options", kEveryCommand,
             "the page describes each field beside it");
    cli_only("version", "version", OptionType::flag, "", "", "print the version", kEveryCommand,
             "the page shows the version in its footer");
    return t;
}

std::string type_word(const OptionDef& row) {
    switch (row.type) {
        case OptionType::count: return "a positive integer";
        case OptionType::number:
            return row.min_exclusive ? "a positive number" : row.min == 0 ? "a non-negative number" : "a number";
        case OptionType::flag: return "true or false";
        default: return "a string";
    }
}

[[noreturn]] void invalid(const OptionDef& row, const std::string& message) {
    throw Error(message, ErrorCode::invalid_value, row.name);
}

}  // namespace

const std::vector<OptionDef>& option_table() {
    static const std::vector<OptionDef> table = build_table();
    return table;
}

const OptionDef* find_option(const std::string& name) {
    for (const auto& row : option_table())
        if (row.name == name) return &row;
    return nullptr;
}

const OptionDef* find_flag(const std::string& flag, unsigned command_bit) {
    for (const auto& row : option_table())
        if (!row.flag.empty() && row.flag == flag && row.takes(command_bit)) return &row;
    return nullptr;
}

json options_json() {
    json rows = json::array();
    auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
    for (const auto& row : option_table()) {
        json commands = json::array();
        for (const auto& c : command_table())
            if (row.takes(c.bit)) commands.push_back(c.name);
        bool numeric = row.type == OptionType::count || row.type == OptionType::number;
        rows.push_back({{"name", row.name},
                        {"flag", row.flag.empty() ? json(nullptr) : json("--" + row.flag)},
                        {"type", to_string(row.type)},
                        {"label", row.label},
                        {"unit", row.unit},
                        {"min", numeric ? json(row.min) : json(nullptr)},
                        {"max", numeric ? json(row.max) : json(nullptr)},
                        {"min_exclusive", numeric ? json(row.min_exclusive) : json(nullptr)},
                        {"integer", row.type == OptionType::count},
                        {"choices", row.type == OptionType::choice ? json(row.choices) : json(nullptr)},
                        {"default", row.default_value},
                        {"default_text", row.default_text},
                        {"help", row.help},
                        {"commands", commands},
                        {"api", row.api},
                        {"echo", row.echo},
                        {"page", or_null(row.page)},
                        {"page_note", or_null(row.page_note)},
                        {"advanced", row.advanced},
                        {"url", or_null(row.url)}});
    }
    return {{"options", rows}};
}

json check_option(const OptionDef& row, const json& v, const std::string& spelling) {
    switch (row.type) {
        case OptionType::count:
        case OptionType::number: {
            double x = v.is_number() ? v.get<double>() : NAN;
            if (row.type == OptionType::count) {
                if (!(x >= 1) || x != std::floor(x))
                    invalid(row, spelling + " must be a positive integer, got " + v.dump());
            } else if (!std::isfinite(x) || x < row.min || (row.min_exclusive && x == row.min)) {
                invalid(row, spelling + " must be " + type_word(row) + ", got " + v.dump());
            }
            if (x > row.max) invalid(row, spelling + " is absurdly large: " + v.dump());
            if (row.type == OptionType::count && x <= 9007199254740992.0) return json(std::int64_t(x));
            return json(x);
        }
        case OptionType::choice: {
            if (!v.is_string()) invalid(row, spelling + " must be a string");
            for (const auto& c : row.choices)
                if (v.get<std::string>() == c) return v;
            std::string known;
            for (size_t i = 0; i < row.choices.size(); ++i)
                known += (i ? (i + 1 == row.choices.size() ? " or " : ", ") : "") + row.choices[i];
            invalid(row, spelling + " must be " + known + ", got '" + v.get<std::string>() + "'");
        }
        case OptionType::flag:
            if (!v.is_boolean()) invalid(row, spelling + " must be true or false");
            return v;
        case OptionType::model:
            if (!v.is_string() && !v.is_object())
                throw Error(spelling + " must be a zoo id or a JSON document", ErrorCode::invalid_model, row.name);
            return v;
        case OptionType::hardware:
            if (!v.is_string() && !v.is_array() && !v.is_object())
                throw Error(spelling + " must be an id, \"all\", a spec object or a list of those",
                            ErrorCode::invalid_hardware, row.name);
            return v;
        case OptionType::sheets:
            if (!v.is_array()) throw Error(spelling + " must be a list of spec sheets", ErrorCode::invalid_hardware, row.name);
            return v;
        case OptionType::document:
            if (!v.is_object()) invalid(row, spelling + " must be a JSON object");
            return v;
        case OptionType::path:
        case OptionType::list:
            if (!v.is_string()) invalid(row, spelling + " must be a string");
            return v;
    }
    return v;
}

RequestOptions::RequestOptions(const json& request, unsigned command_bit) {
    for (const auto& [key, v] : request.items()) {
        if (key == "command") continue;
        const OptionDef* row = find_option(key);
        if (!row || !row->api || !row->takes(command_bit)) {
            std::string message = "unknown option '" + key + "' for this command";
            for (const auto& other : option_table())
                if (other.api && other.takes(command_bit) && other.name != key &&
                    (other.name.find(key) != std::string::npos || key.find(other.name) != std::string::npos)) {
                    message += " (did you mean '" + other.name + "'?)";
                    break;
                }
            throw Error(message, ErrorCode::unknown_option, key);
        }
        if (v.is_null()) continue;  // null reads as absent: the page sends cleared fields as null
        values_[key] = check_option(*row, v, "'" + key + "'");
    }
}

bool RequestOptions::has(const std::string& name) const { return values_.contains(name); }

const json& RequestOptions::value(const std::string& name) const {
    if (values_.contains(name)) return values_[name];
    const OptionDef* row = find_option(name);
    if (!row) throw Error("internal: no option '" + name + "' in the table", ErrorCode::internal);
    return row->default_value;
}

std::int64_t RequestOptions::count(const std::string& name) const {
    const json& v = value(name);
    return v.is_number() ? v.get<std::int64_t>() : 0;
}

double RequestOptions::number(const std::string& name) const {
    const json& v = value(name);
    return v.is_number() ? v.get<double>() : 0.0;
}

std::string RequestOptions::text(const std::string& name) const {
    const json& v = value(name);
    return v.is_string() ? v.get<std::string>() : std::string();
}

bool RequestOptions::flag(const std::string& name) const {
    const json& v = value(name);
    return v.is_boolean() && v.get<bool>();
}

json echo_settings(const json& resolved, const json& derived, unsigned command_bit) {
    json out = json::object();
    for (const auto& row : option_table()) {
        if (!row.echo || !row.takes(command_bit)) continue;
        if (!resolved.contains(row.name))
            throw Error("internal: the settings echo has no value for option '" + row.name + "'", ErrorCode::internal);
        out[row.name] = resolved[row.name];
    }
    for (const auto& [key, v] : derived.items()) {
        if (find_option(key))
            throw Error("internal: derived setting '" + key + "' is an option; echo it from the table",
                        ErrorCode::internal);
        out[key] = v;
    }
    return out;
}

}  // namespace prenet
