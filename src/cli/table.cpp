#include "cli/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/quantity_text.hpp"

namespace prenet::cli {
namespace {

using nlohmann::json;

std::string fmt(const char* format, double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, x);
    return buf;
}

// Engineering notation with SI suffix: 1.23G.
std::string si(double x) {
    const char* suffix[] = {"", "K", "M", "G", "T", "P", "E"};
    int i = 0;
    while (x >= 1000 && i < 6) x /= 1000, ++i;
    return fmt("%.3g", x) + suffix[i];
}

void print_rows(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> width;
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) {
            if (width.size() <= i) width.push_back(0);
            width[i] = std::max(width[i], r[i].size());
        }
    for (const auto& r : rows) {
        std::string line;
        for (size_t i = 0; i < r.size(); ++i) {
            std::string cell = r[i];
            bool last = i + 1 == r.size();
            if (i == 0 || last) line += cell + (last ? "" : std::string(width[i] - cell.size() + 2, ' '));
            else line += std::string(width[i] - cell.size(), ' ') + cell + "  ";
        }
        out << line << "\n";
    }
}

}  // namespace

namespace {

// The layers that take most of one accelerator's step, longest first; the rest summed in one line.
void print_layer_breakdown(std::ostream& out, const json& result) {
    constexpr size_t kShown = 12;
    std::vector<json> layers(result["step"]["layers"].begin(), result["step"]["layers"].end());
    std::stable_sort(layers.begin(), layers.end(), [](const json& a, const json& b) {
        return a["total_ms"].get<double>() > b["total_ms"].get<double>();
    });
    double step = result["step"]["total_ms"].get<double>();
    out << "\nWhere the step goes on " << result["hardware"].get<std::string>() << " (" << fmt("%.3f", step)
        << " ms; the optimizer " << fmt("%.3f", result["step"]["optimizer_ms"].get<double>()) << " ms";
    // The framework overhead is no layer's either (run/overhead.hpp): named where there is one.
    double overhead = result["step"].value("overhead_ms", 0.0);
    if (overhead > 0) out << "; the framework overhead " << fmt("%.3f", overhead) << " ms";
    out << "):\n";
    std::vector<std::vector<std::string>> rows = {{"layer", "kind", "x", "forward ms", "backward ms", "share"}};
    double rest = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
        double total = layers[i]["total_ms"].get<double>();
        if (i >= kShown) {
            rest += total;
            continue;
        }
        rows.push_back({layers[i]["name"].get<std::string>(), layers[i]["kind"].get<std::string>(), std::to_string(layers[i]["repeat"].get<long long>()),
                        fmt("%.3f", layers[i]["forward_ms"].get<double>()),
                        fmt("%.3f", layers[i]["backward_ms"].get<double>()), fmt("%.1f%%", 100 * total / step)});
    }
    if (layers.size() > kShown)
        rows.push_back({"(" + std::to_string(layers.size() - kShown) + " more layers)", "", "", "", "",
                        fmt("%.1f%%", 100 * rest / step)});
    print_rows(out, rows);
}

// What one accelerator's memory holds over the step (`memory.timeline`, with --breakdown): a line per point, its
// three totals and a bar of the device's total on a scale up to the larger of the peak and the capacity ('|'
// where the capacity is), the peak marked.
void print_memory_timeline(std::ostream& out, const json& result) {
    constexpr int kBar = 40;
    const json& mem = result["memory"];
    const json& points = mem["timeline"]["points"];
    const size_t peak = mem["timeline"]["peak_point"].get<size_t>();
    const double capacity = mem["capacity_bytes"].get<double>();
    const double scale = std::max(mem["peak_bytes_per_device"].get<double>(), capacity);
    out << "\nMemory over one step on " << result["hardware"].get<std::string>() << " (GiB; capacity "
        << fmt("%.1f", to_gib(capacity)) << "):\n";
    std::vector<std::vector<std::string>> rows = {{"phase: point", "allocated", "reserved", "device", ""}};
    for (size_t i = 0; i < points.size(); ++i) {
        const json& p = points[i];
        double device = p["device_bytes"].get<double>();
        int filled = scale > 0 ? int(std::lround(kBar * device / scale)) : 0;
        int at_capacity = scale > 0 && capacity > 0 ? int(std::lround(kBar * capacity / scale)) : -1;
        std::string bar;
        for (int c = 0; c < std::max(filled, at_capacity + 1); ++c) bar += c == at_capacity ? '|' : c < filled ? '#' : ' ';
        if (i == peak) bar += " <- peak";
        rows.push_back({terminal_safe(p["phase"].get<std::string>() + ": " + p["label"].get<std::string>()),
                        fmt("%.2f", to_gib(p["allocated_bytes"].get<double>())),
                        fmt("%.2f", to_gib(p["reserved_bytes"].get<double>())), fmt("%.2f", to_gib(device)), bar});
    }
    print_rows(out, rows);
    // A pipeline: the timeline is the fullest stage's; every stage's peak, for the rank a framework logs.
    if (mem.contains("stages") && mem["stages"].is_array()) {
        const json& stages = mem["stages"];
        std::string line = "Each pipeline stage's peak, first to last (allocated GiB):";
        for (const auto& st : stages) line += " " + fmt("%.2f", to_gib(st["peak_allocated_bytes"].get<double>()));
        if (result.contains("plan") && result["plan"].contains("fullest_stage"))
            line += " (the fullest, stage " + std::to_string(result["plan"]["fullest_stage"].get<std::int64_t>() + 1) +
                    ", is the timeline's)";
        out << line << "\n";
    }
}

}  // namespace

namespace {

// "dp8 tp2 pp1 zero3 2x4 selective": the layout in one cell (micro-batch x micro-batches).
std::string plan_text(const json& p) {
    std::string t = "dp" + p["dp"].dump() + " tp" + p["tp"].dump() + " pp" + p["pp"].dump();
    if (p["cp"].get<std::int64_t>() > 1) t += " cp" + p["cp"].dump();
    if (p["ep"].get<std::int64_t>() > 1) t += " ep" + p["ep"].dump();
    if (p["vp"].get<std::int64_t>() > 1) t += " vp" + p["vp"].dump();
    // Uneven ends (Megatron's first/last stage blocks), only when the plan has them.
    for (const char* end : {"first_stage_blocks", "last_stage_blocks"})
        if (p.contains(end)) t += std::string(" ") + (end[0] == 'f' ? "first" : "last") + p[end].dump();
    t += " zero" + p["zero"].dump() + " " + p["micro_batch"].dump() + "x" + p["grad_accum"].dump();
    if (p["checkpointing"] != "none") t += " " + p["checkpointing"].get<std::string>();
    return t;
}

// An imported graph's ops without a layer kind (costed memory-bound), as a line of their own; "" when none.
std::string unknown_ops_line(const json& ops) {
    if (!ops.is_array() || ops.empty()) return "";
    std::string line = "unknown ops (costed memory-bound over their tensors):";
    for (const auto& op : ops) line += " " + op["op"].get<std::string>() + " x" + op["count"].dump();
    return line + "\n";
}

}  // namespace

void print_prediction_table(std::ostream& out, const json& doc) {
    const json& m = doc["model"];
    const json& s = doc["settings"];
    out << m["name"].get<std::string>() << ": " << si(m["params"].get<double>()) << " parameters";
    if (m.contains("trainable_params") && m["trainable_params"] != m["params"])
        out << " (" << si(m["trainable_params"].get<double>()) << " trained, " << s["finetune"].get<std::string>() << ")";
    out << ", batch " << s["batch"];
    std::int64_t accum = s.value("grad_accum", std::int64_t{1});
    if (accum > 1) out << " x " << accum << " micro-batches (global " << s["global_batch"] << ")";
    out << ", " << s["precision"].get<std::string>();
    if (s.contains("mixed") && s["mixed"].is_string()) out << " (" << s["mixed"].get<std::string>() << ")";
    if (s.value("precision_source", "") == "config.json torch_dtype") out << " (the config's torch_dtype)";
    out << ", " << s["optimizer"].get<std::string>();
    if (s.contains("optimizer_impl_used")) out << " (" << s["optimizer_impl_used"].get<std::string>() << ")";
    if (s["checkpointing"].is_string()) out << ", " << s["checkpointing"].get<std::string>() << " checkpointing";
    else if (s.value("checkpointing", false)) out << ", checkpointing";
    if (s.value("gpus", std::int64_t{1}) > 1) out << ", " << s["gpus"] << " devices";
    out << ", predictor " << s["predictor"].get<std::string>() << "\n";
    // The import's notes under the settings line, not inside it (the optimizer and predictor are settings).
    if (m.contains("import_notes"))
        for (const auto& note : m["import_notes"]) out << "note: " << note.get<std::string>() << "\n";
    out << unknown_ops_line(m.value("unknown_ops", json())) << "\n";

    bool with_run = false, input_bound = false, parallel = false;
    std::vector<std::string> refused;  // accelerators that could not form the cluster, with why
    for (const auto& r : doc["results"]) {
        with_run |= r.contains("run") && !r["run"].is_null();
        parallel |= r.contains("plan");
        if (r.contains("error")) refused.push_back(r["hardware"].get<std::string>() + ": " + r["error"]["message"].get<std::string>());
    }
    std::vector<std::string> header = {"hardware", "step ms", "forward", "backward", "optimizer", "overhead", "samples/s",
                                       "allocated GiB", "reserved GiB", "device GiB", "capacity GiB", "fits"};
    if (parallel) header.insert(header.begin() + 1, {"plan"});
    if (parallel) header.insert(header.begin() + 7, {"comm", "bubble", "MFU"});
    if (with_run) header.insert(header.end(), {"hours", "GPU-hours", "cost $", "energy kWh"});
    std::vector<std::vector<std::string>> rows = {header};
    auto maybe = [](const json& x, const char* format) { return x.is_null() ? std::string("-") : fmt(format, x.get<double>()); };
    for (const auto& r : doc["results"]) {
        if (r.contains("error")) continue;
        const json& st = r["step"];
        const json& mem = r["memory"];
        bool bound = st.value("input_bound", false);
        input_bound |= bound;
        // A device predicted at a fallback precision says so beside its name (and in the notes below).
        std::string name = r["hardware"].get<std::string>();
        if (r.contains("precision_fallback") && r["precision_fallback"].is_object())
            name += " (as " + r["precision_fallback"]["used"].get<std::string>() + ")";
        // A device --framework auto ran under another framework than the request's names it (the page's badge).
        if (r.value("framework_chosen", false)) name += " [" + r.value("framework_used", std::string()) + "]";
        std::vector<std::string> row = {
            name, fmt("%.3f", st["total_ms"].get<double>()) + (bound ? "*" : ""),
            fmt("%.3f", st["forward_ms"].get<double>()), fmt("%.3f", st["backward_ms"].get<double>()),
            fmt("%.3f", st["optimizer_ms"].get<double>()), fmt("%.3f", st["overhead_ms"].get<double>()),
            fmt("%.4g", r["throughput"]["samples_per_s"].get<double>()),
            fmt("%.1f", to_gib(mem["peak_allocated_bytes"].get<double>())),
            fmt("%.1f", to_gib(mem["peak_reserved_bytes"].get<double>())),
            fmt("%.1f", to_gib(mem["peak_bytes_per_device"].get<double>())),
            fmt("%.1f", to_gib(mem["capacity_bytes"].get<double>())), mem["fits"].get<bool>() ? "yes" : "NO"};
        if (parallel) {
            row.insert(row.begin() + 1, plan_text(r["plan"]));
            row.insert(row.begin() + 7, {fmt("%.3f", st["communication_ms"].get<double>()),
                                         fmt("%.3f", st["bubble_ms"].get<double>()),
                                         fmt("%.1f%%", 100.0 * r["throughput"]["mfu"].get<double>())});
        }
        if (with_run) {
            const json& run = r["run"];
            if (run.is_null()) {
                row.insert(row.end(), {"-", "-", "-", "-"});
            } else {
                row.push_back(fmt("%.4g", run["hours"].get<double>()));
                row.push_back(fmt("%.4g", run["gpu_hours"].get<double>()));
                row.push_back(maybe(run["cost_usd"], "%.4g"));
                row.push_back(maybe(run["energy_kwh"], "%.4g"));
            }
        }
        rows.push_back(row);
    }
    print_rows(out, rows);
    if (!refused.empty()) {
        out << "\nNot predicted:\n";
        for (const auto& line : refused) out << "  " << line << "\n";
    }
    if (input_bound)
        out << "\n* input-bound: the input pipeline (--input-samples-per-s) sets the step time, not the accelerator\n";
    // The results' warnings (a precision fallback, a global batch past published runs, a run shorter than a step),
    // each text once; one that not every accelerator has names those that do, unless it names its own.
    std::vector<std::pair<std::string, std::vector<std::string>>> warnings;  // text -> accelerators, in order
    size_t predicted = 0;
    for (const auto& r : doc["results"]) {
        if (r.contains("error")) continue;
        ++predicted;
        for (const auto& w : r.value("warnings", json::array())) {
            auto it = std::find_if(warnings.begin(), warnings.end(), [&](const auto& x) { return x.first == w; });
            if (it == warnings.end()) it = warnings.insert(warnings.end(), {w.get<std::string>(), {}});
            it->second.push_back(r["hardware"].get<std::string>());
        }
    }
    if (!warnings.empty()) out << "\nWarnings:\n";
    for (const auto& [text, ids] : warnings) {
        std::string who;
        if (ids.size() < predicted && text.rfind(ids.front() + ":", 0) != 0)
            for (const auto& id : ids) who += (who.empty() ? "" : ", ") + id;
        out << "  " << terminal_safe(who.empty() ? text : who + ": " + text) << "\n";
    }
    bool header_done = false;
    for (const auto& r : doc["results"]) {
        if (r.contains("error")) continue;
        const json& mem = r["memory"];
        if (!mem.contains("advice") || mem["advice"].is_null()) continue;
        if (!header_done) out << "\nDoes not fit:\n";
        header_done = true;
        out << "  " << r["hardware"].get<std::string>() << ": " << mem["advice"]["summary"].get<std::string>() << "\n";
    }
    const json* first = nullptr;  // the first result with a run (every one has the same steps on one device)
    for (const auto& r : doc["results"])
        if (!first && r.contains("run") && !r["run"].is_null()) first = &r["run"];
    if (with_run && first) {
        out << "\nRun: " << (parallel ? "optimizer steps per accelerator's plan (global batch); " : "")
            << (parallel ? std::string() : (*first)["steps"].dump() + " optimizer steps; ") << "cost at "
                << (s["price_per_hour"].is_null() ? "each accelerator's cheapest cloud price"
                                                  : "$" + fmt("%.4g", s["price_per_hour"].get<double>()) + "/hour")
                << "; energy from " << s["energy_model"].get<std::string>() << "\n";
    }
    for (const auto& r : doc["results"])
        if (r.contains("step") && r["step"].contains("layers") && r["step"]["layers"].is_array()) print_layer_breakdown(out, r);
    // One device's memory is the same on every accelerator but for the capacity: its timeline once, unless the
    // accelerators' plans hold different memory (a cluster's).
    const json* shown = nullptr;
    for (const auto& r : doc["results"]) {
        if (!r.contains("memory") || !r["memory"].contains("timeline")) continue;
        if (shown && (*shown)["memory"]["timeline"] == r["memory"]["timeline"]) continue;
        print_memory_timeline(out, r);
        shown = &r;
    }
}

void print_features_table(std::ostream& out, const json& doc) {
    out << doc["model"].get<std::string>() << ": " << si(doc["params"].get<double>()) << " parameters, forward "
        << si(doc["forward_flops"].get<double>()) << "FLOPs, backward " << si(doc["backward_flops"].get<double>())
        << "FLOPs\n";
    if (doc.contains("import_notes"))
        for (const auto& note : doc["import_notes"]) out << "note: " << note.get<std::string>() << "\n";
    out << unknown_ops_line(doc.value("unknown_ops", json())) << "\n";
    std::vector<std::vector<std::string>> rows = {{"layer", "kind", "x", "output", "params", "fwd FLOPs", "bwd FLOPs"}};
    for (const auto& l : doc["layers"]) {
        std::string shape = l["output_shape"].dump();
        rows.push_back({l["name"].get<std::string>(), l["kind"].get<std::string>(), std::to_string(l["repeat"].get<long long>()),
                        shape, si(l["params"].get<double>()), si(l["forward_flops"].get<double>()),
                        si(l["backward_input_flops"].get<double>() + l["backward_weight_flops"].get<double>())});
    }
    print_rows(out, rows);
}

void print_zoo_table(std::ostream& out, const json& doc) {
    std::vector<std::vector<std::string>> rows = {{"id", "domain", "description"}};
    for (const auto& m : doc["models"])
        rows.push_back({m["id"].get<std::string>(), m["domain"].get<std::string>(), m["description"].get<std::string>()});
    print_rows(out, rows);
}

void print_hardware_table(std::ostream& out, const json& doc) {
    std::vector<std::vector<std::string>> rows = {
        {"id", "fp32 TF", "bf16 TF", "memory GB", "bandwidth GB/s", "$/hour", "name"}};
    for (const auto& h : doc["hardware"]) {
        const json& p = h["peak_tflops"];
        rows.push_back({h["id"].get<std::string>(), p.contains("fp32") ? fmt("%.1f", p["fp32"].get<double>()) : "-",
                        p.contains("bf16") ? fmt("%.0f", p["bf16"].get<double>()) : "-",
                        fmt("%.0f", h["memory_gb"].get<double>()), fmt("%.0f", h["bandwidth_gbps"].get<double>()),
                        h["price_per_hour"].get<double>() > 0 ? fmt("%.2f", h["price_per_hour"].get<double>()) : "-",
                        h["name"].get<std::string>()});
    }
    print_rows(out, rows);
}

void print_calibration_table(std::ostream& out, const json& doc) {
    std::vector<std::vector<std::string>> rows = {
        {"row", "hardware", "measures", "measured ms", "before ms", "after ms", "APE before %", "APE after %"}};
    for (const auto& r : doc["rows"]) {
        // A trace's family: how its kernels were matched (by their shapes, or by name).
        std::string measures = r["measures"].get<std::string>();
        if (r.value("matched_by", json(nullptr)).is_string()) measures += " (" + r["matched_by"].get<std::string>() + ")";
        rows.push_back({fmt("%.0f", r["row"].get<double>()), r["hardware"].get<std::string>(),
                        measures, fmt("%.4g", r["measured_ms"].get<double>()),
                        fmt("%.4g", r["predicted_ms_before"].get<double>()),
                        fmt("%.4g", r["predicted_ms_after"].get<double>()), fmt("%.1f", r["ape_before_pct"].get<double>()),
                        fmt("%.1f", r["ape_after_pct"].get<double>())});
    }
    print_rows(out, rows);
    out << "\nFactors per device (x the uncalibrated prediction; 1 where the rows say nothing):\n";
    std::vector<std::vector<std::string>> factors = {{"hardware", "rows", "median APE before -> after %", "factors"}};
    for (const auto& [id, d] : doc["calibration"]["devices"].items()) {
        std::string list;
        for (const auto& [key, scale] : d["scales"].items())
            if (std::abs(scale.get<double>() - 1.0) >= 0.005) list += (list.empty() ? "" : ", ") + key + " " + fmt("%.2f", scale.get<double>());
        factors.push_back({id, fmt("%.0f", d["rows"].get<double>()),
                           fmt("%.1f", d["before"]["median_ape_pct"].get<double>()) + " -> " +
                               fmt("%.1f", d["after"]["median_ape_pct"].get<double>()),
                           list.empty() ? "none" : list});
    }
    print_rows(out, factors);
}

void print_layers_table(std::ostream& out, const json& doc) {
    std::vector<std::vector<std::string>> rows = {{"type", "attributes"}};
    for (const auto& l : doc["layers"]) rows.push_back({l["kind"].get<std::string>(), l["summary"].get<std::string>()});
    print_rows(out, rows);
}

}  // namespace prenet::cli

namespace prenet::cli {

void print_options_table(std::ostream& out, const nlohmann::json& doc) {
    std::vector<std::vector<std::string>> rows = {{"option", "flag", "type", "default", "commands"}};
    for (const auto& o : doc["options"]) {
        std::string commands;
        for (const auto& c : o["commands"]) commands += (commands.empty() ? "" : ",") + c.get<std::string>();
        rows.push_back({o["name"].get<std::string>(), o["flag"].is_string() ? o["flag"].get<std::string>() : "(API only)",
                        o["type"].get<std::string>(), o["default_text"].get<std::string>(), commands});
    }
    print_rows(out, rows);
}

std::string terminal_safe(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        char buf[8];
        if ((c < 0x20 && c != '\n') || c == 0x7f) {
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[++i]));
            out += buf;
        } else {
            out += text[i];
        }
    }
    return out;
}

}  // namespace prenet::cli
