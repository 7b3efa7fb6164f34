#include "api/calibrate_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include "api/api.hpp"
#include "api/hardware_selection.hpp"
#include "api/options.hpp"
#include "api/settings.hpp"
#include "calibration/calibration.hpp"
#include "calibration/calibration_fit.hpp"
#include "calibration/profiler_trace.hpp"
#include "core/csv.hpp"
#include "core/precision.hpp"
#include "core/error.hpp"
#include "predict/op_rows.hpp"
#include "predict/predictor.hpp"

namespace prenet {

using nlohmann::json;

namespace {

// Each row is a whole prediction: a file of more is not a calibration but a benchmark (docs/limits.md).
constexpr size_t kMaxRows = 1000;
// Rows with the same settings whose times differ by more than this are two different runs, not noise.
constexpr double kContradiction = 3.0;

[[noreturn]] void refuse(const std::string& message, ErrorCode code = ErrorCode::invalid_value) {
    throw Error(message, code, "measurements");
}

std::string row_name(size_t index) { return "measurements: row " + std::to_string(index + 1); }

// A predict option a row may carry (any API row of predict's, as the CLI and the page send it).
const OptionDef* predict_option(const std::string& name) {
    const OptionDef* row = find_option(name);
    return row && row->api && row->takes(kPredict) ? row : nullptr;
}

const std::string kColumns = "predict's option names, measured_ms, measures and trace";

bool is_measurement_column(const std::string& name) {
    return name == kMeasuredMs || name == kMeasures || name == kTrace;
}

// A number written in a CSV field: decimal digits, a point and an exponent only.
json csv_number(const std::string& text, const std::string& where) {
    char* end = nullptr;
    double x = std::strtod(text.c_str(), &end);
    if (text.find_first_not_of("0123456789.eE+-") != std::string::npos || *end != '\0' || !std::isfinite(x))
        refuse(where + " must be a number, got '" + text + "'");
    if (x == std::floor(x) && std::abs(x) <= 9007199254740992.0) return json(std::int64_t(x));
    return json(x);
}

// A CSV field as the JSON value its column takes.
json csv_value(const std::string& column, const std::string& text, const std::string& where) {
    if (column == kMeasuredMs) return csv_number(text, where);
    if (column == kMeasures || column == kTrace) return text;
    const OptionDef& row = *predict_option(column);
    switch (row.type) {
        case OptionType::count:
        case OptionType::number: return csv_number(text, where);
        case OptionType::flag:
            if (text == "true" || text == "1") return true;
            if (text == "false" || text == "0") return false;
            return text;  // a switch word (checkpointing selective); predict checks it
        default: return text;
    }
}

std::vector<json> rows_from_csv(const std::string& text) {
    std::istringstream in(text);
    CsvTable table;
    try {
        table = read_csv(in, "measurements");
    } catch (const Error& e) {
        refuse(e.what());
    }
    for (const auto& column : table.header)
        if (!is_measurement_column(column) && !predict_option(column))
            refuse("measurements: unknown column '" + column + "' (" + kColumns + ")", ErrorCode::unknown_option);
    std::vector<json> rows;
    for (size_t r = 0; r < table.rows.size(); ++r) {
        json row = json::object();
        for (size_t c = 0; c < table.header.size(); ++c) {
            const std::string& text = table.rows[r][c];
            if (text.empty()) continue;  // not given
            row[table.header[c]] = csv_value(table.header[c], text, row_name(r) + ", column '" + table.header[c] + "'");
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

struct MeasuredRow {
    json request;  // the predict request
    std::string measures;
    double measured_ms = 0;
    std::optional<ProfiledKernels> trace;  // a profiler trace's kernel time per family (measures "kernels")
};

MeasuredRow measured_row(const json& row, size_t index, const json& default_hardware, const std::string& predictor) {
    const std::string where = row_name(index);
    MeasuredRow m;
    m.request = {{"command", "predict"}};
    for (const auto& [key, value] : row.items()) {
        if (key == kMeasuredMs) {
            if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() > 0))
                refuse(where + ": measured_ms must be a positive number of milliseconds, got " + value.dump());
            m.measured_ms = value.get<double>();
        } else if (key == kMeasures) {
            const auto& known = measured_quantities();
            if (!value.is_string() || std::find(known.begin(), known.end(), value.get<std::string>()) == known.end())
                refuse(where + ": measures must be step, forward_backward, forward or kernels, got " + value.dump());
            m.measures = value.get<std::string>();
        } else if (key == kTrace) {
            if (!value.is_object() && !value.is_array())
                refuse(where + ": trace must be a profiler trace document (the CLI reads the file the CSV names)");
            m.trace = read_profiler_trace(value, where);
        } else if (!predict_option(key)) {
            refuse(where + ": unknown column '" + key + "' (" + kColumns + ")", ErrorCode::unknown_option);
        } else if (key == "calibration" || key == "breakdown" || key == "kernel_models") {
            refuse(where + ": '" + key + "' is not a setting of a measured run", ErrorCode::unknown_option);
        } else {
            m.request[key] = value;
        }
    }
    if (m.trace) {
        // The trace is the measurement: its kernels per family.
        if (m.measured_ms != 0 || (!m.measures.empty() && m.measures != kKernelsMeasured))
            refuse(where + ": a row with a trace measures its kernels: no measured_ms, and measures empty or kernels",
                   ErrorCode::conflict);
        m.measures = kKernelsMeasured;
    } else {
        if (m.measured_ms == 0) refuse(where + ": missing measured_ms", ErrorCode::missing);
        if (m.measures.empty() || m.measures == kKernelsMeasured)
            refuse(where + ": missing measures (step, forward_backward or forward; kernels with a trace)",
                   ErrorCode::missing);
    }
    if (!m.request.contains("model")) refuse(where + ": missing model", ErrorCode::missing);
    if (!m.request.contains("hardware")) {
        if (default_hardware.is_null())
            refuse(where + ": missing hardware (a column, or --hardware for every row)", ErrorCode::missing);
        m.request["hardware"] = default_hardware;
    }
    const json& hw = m.request["hardware"];
    if ((hw.is_string() && hw.get<std::string>() == "all") || (hw.is_array() && hw.size() != 1))
        refuse(where + ": hardware must name the one accelerator the row was measured on");
    if (!predictor.empty()) m.request["predictor"] = predictor;
    return m;
}

// The quantity a row measured, as a predict result predicts it.
double measured_quantity(const json& result, const std::string& measures) {
    const json& step = result.at("step");
    if (measures == "forward") return step.at("forward_ms").get<double>();
    double total = step.at("total_ms").get<double>();
    return measures == "step" ? total : total - step.at("optimizer_ms").get<double>();
}

// A row's predicted quantity from a predict result, split into the parts the calibration scales.
CalibrationObservation observe(const json& result, const std::string& measures, double measured_ms) {
    const json& step = result.at("step");
    CalibrationObservation o;
    o.measured_ms = measured_ms;
    double quantity = measured_quantity(result, measures);
    bool forward = measures == "forward";
    bool with_optimizer = measures == "step";
    double fb = step.at("forward_ms").get<double>() + step.at("backward_ms").get<double>();
    // The forward's kernels by family: the step's in the forward's share (the step keeps no per-pass split).
    double forward_share = forward && fb > 0 ? step.at("forward_ms").get<double>() / fb : 1.0;
    for (const auto& [name, ms] : step.at("by_family_ms").items()) {
        std::optional<Family> family = family_from_string(name);
        if (!family || (!with_optimizer && *family == Family::optimizer)) continue;
        o.family_ms[*family] += ms.get<double>() * forward_share;
    }
    for (const auto& [name, ms] : step.at("matmul_by_precision_ms").items())
        o.matmul_precision_ms[parse_precision(name)] += ms.get<double>();
    if (!forward) {
        o.communication_ms = step.at("communication_ms").get<double>();
        o.overhead_ms = step.at("overhead_ms").get<double>();
        o.idle_ms = step.value("bubble_ms", 0.0);
    }
    // What the parts leave of the quantity (an input stall, the optimizer's non-kernel work) is fixed; parts
    // that add up to more (the forward's share estimate) are scaled down to it.
    double parts = o.predicted_ms();
    if (parts > quantity && parts > 0) {
        double k = quantity / parts;
        for (auto& [family, ms] : o.family_ms) ms *= k;
        o.communication_ms *= k, o.overhead_ms *= k, o.idle_ms *= k;
    } else {
        o.fixed_ms = quantity - parts;
    }
    return o;
}


// The one result of a row's predict request, or the row's error (naming the row, and the column at fault).
json predict_row(const json& request, size_t index) {
    json reply;
    try {
        reply = predict_reply(request);
    } catch (const Error& e) {
        refuse(row_name(index) + (e.field().empty() ? "" : ", column '" + e.field() + "'") + ": " + e.what(), e.code());
    }
    const json& result = reply.at("results").at(0);
    if (result.contains("error"))
        refuse(row_name(index) + ": " + result["error"].value("message", std::string("refused")));
    return result;
}

double ape_pct(double predicted, double measured) { return 100.0 * std::abs(predicted - measured) / measured; }

// A trace's operators matched by shape, per family: their calls as the kernel model times those shapes.
struct ShapedFamily {
    std::vector<std::pair<Kernel, double>> kernels;  // a kernel and its calls per step
    double measured_ms = 0;
    std::int64_t operators = 0;  // distinct operator shapes
};

// fp32 inputs run as TF32 where the row ran at tf32 (PyTorch's allow_tf32; the vector kernels are the same either
// way), and a precision the device has no units for as the one it runs instead, as `prenet kernels` times them.
std::map<Family, ShapedFamily> shaped_families(const ProfiledKernels& trace, const json& request,
                                               const HardwareSpec& hw, size_t index) {
    bool tf32 = request.contains("precision") && request["precision"] == "tf32";
    std::map<Family, ShapedFamily> out;
    for (const ShapedOperator& op : trace.shaped) {
        Precision p = op.precision == Precision::fp32 && tf32 ? Precision::tf32 : op.precision;
        std::vector<Kernel> kernels;
        try {
            for (const KernelRow& row : op.kernels) kernels.push_back(kernel_from_row_on(row.op, row.dims, p, row.phase, hw));
        } catch (const Error& e) {
            refuse(row_name(index) + ": the trace's " + op.name + " call: " + e.what());
        }
        // An operator is one family's: a convolution's backward is two conv kernels.
        ShapedFamily& f = out[kernels.front().family];
        for (Kernel& k : kernels) f.kernels.emplace_back(std::move(k), op.calls_per_step);
        f.measured_ms += op.ms_per_step;
        ++f.operators;
    }
    return out;
}

double shaped_ms(const ShapedFamily& f, const KernelPredictor& predictor, const HardwareSpec& hw) {
    double ms = 0;
    for (const auto& [kernel, calls] : f.kernels) ms += calls * predictor.kernel_ms(kernel, hw);
    return ms;
}

}  // namespace

const std::vector<std::string>& measured_quantities() {
    static const std::vector<std::string> q = {"step", "forward_backward", "forward", kKernelsMeasured};
    return q;
}

std::vector<json> measurement_rows(const json& measurements) {
    std::vector<json> rows;
    if (measurements.is_string()) {
        rows = rows_from_csv(measurements.get<std::string>());
    } else if (measurements.is_array()) {
        for (size_t i = 0; i < measurements.size(); ++i) {
            if (!measurements[i].is_object()) refuse(row_name(i) + " must be an object of option names and values");
            rows.push_back(measurements[i]);
        }
    } else {
        refuse("measurements must be a list of row objects or CSV text");
    }
    if (rows.empty()) refuse("measurements: no rows (a header and at least one measured row)", ErrorCode::missing);
    if (rows.size() > kMaxRows)
        refuse("measurements: " + std::to_string(rows.size()) + " rows, more than the " + std::to_string(kMaxRows) +
               " a calibration takes");
    return rows;
}

json calibrate_reply(const json& request) {
    RequestOptions o(request, kCalibrate);
    if (!o.has("measurements"))
        refuse("missing 'measurements' (a CSV file or a JSON list of measured rows)", ErrorCode::missing);
    std::vector<json> rows = measurement_rows(o.value("measurements"));
    json default_hardware = o.has("hardware") ? o.value("hardware") : json(nullptr);
    std::string predictor = o.has("predictor") ? o.text("predictor") : default_predictor_name();
    const json& kernel_models = o.value("kernel_models");

    std::vector<MeasuredRow> measured;
    for (size_t i = 0; i < rows.size(); ++i) {
        measured.push_back(measured_row(rows[i], i, default_hardware, predictor));
        if (!kernel_models.is_null()) measured.back().request["kernel_models"] = kernel_models;
    }
    // The same run measured twice: noise, unless the times are further apart than any noise.
    std::map<std::string, size_t> first_of;
    for (size_t i = 0; i < measured.size(); ++i) {
        json key = measured[i].request;
        key["measures"] = measured[i].measures;
        if (measured[i].trace) continue;  // a trace's kernels are compared family by family
        auto [it, fresh] = first_of.emplace(key.dump(), i);
        if (fresh) continue;
        double a = measured[it->second].measured_ms, b = measured[i].measured_ms;
        if (std::max(a, b) > kContradiction * std::min(a, b))
            refuse("measurements: rows " + std::to_string(it->second + 1) + " and " + std::to_string(i + 1) +
                       " have the same settings and times more than 3x apart (" + json(a).dump() + " and " +
                       json(b).dump() + " ms): two different runs, or a unit mistaken",
                   ErrorCode::conflict);
    }

    // One observation per row; a trace row gives one per kernel family both it and the prediction hold.
    struct Observed {
        size_t row;
        CalibrationObservation observation;
        std::optional<Family> family;  // a trace's family; none: the row's quantity
        std::string device;
        std::optional<ShapedFamily> shaped;  // the family's kernels matched by shape; none: by name
        std::shared_ptr<const HardwareSpec> hw;  // the device, where shaped
    };
    std::unique_ptr<KernelPredictor> kernel_predictor;  // the uncalibrated kernel model, for shaped kernels
    std::vector<Observed> observed;
    std::map<std::string, std::vector<CalibrationObservation>> observations_of;
    for (size_t i = 0; i < measured.size(); ++i) {
        json result = predict_row(measured[i].request, i);
        std::string device = result.at("hardware").get<std::string>();
        if (!measured[i].trace) {
            observed.push_back({i, observe(result, measured[i].measures, measured[i].measured_ms), std::nullopt, device,
                                std::nullopt, nullptr});
        } else {
            const ProfiledKernels& trace = *measured[i].trace;
            std::map<Family, ShapedFamily> shaped;
            std::shared_ptr<const HardwareSpec> hw;
            if (!trace.shaped.empty()) {
                hw = std::make_shared<const HardwareSpec>(
                    std::move(select_hardware(RequestOptions(measured[i].request, kPredict)).at(0)));
                shaped = shaped_families(trace, measured[i].request, *hw, i);
                if (!kernel_predictor) kernel_predictor = make_predictor(predictor, kernel_models);
            }
            // Kernels matched by shape: each family's calls against the kernel model at those very shapes.
            for (auto& [family, f] : shaped) {
                CalibrationObservation o;
                for (const auto& [kernel, calls] : f.kernels) {
                    double ms = calls * kernel_predictor->kernel_ms(kernel, *hw);
                    o.family_ms[family] += ms;
                    if (uses_matrix_units(family)) o.matmul_precision_ms[kernel.precision] += ms;
                }
                o.measured_ms = f.measured_ms;
                if (!(o.predicted_ms() > 0) || !(o.measured_ms > 0)) continue;
                observed.push_back({i, o, family, device, std::move(f), hw});
            }
            // The rest by name, against the family's time in the row's prediction (a family some of whose
            // kernels were matched by shape is compared by those only).
            CalibrationObservation whole = observe(result, "step", 1.0);
            for (const auto& [family, ms] : trace.ms_per_step) {
                if (shaped.count(family)) continue;
                auto predicted = whole.family_ms.find(family);
                if (predicted == whole.family_ms.end() || !(predicted->second > 0) || !(ms > 0)) continue;
                CalibrationObservation o;
                o.family_ms[family] = predicted->second;
                if (uses_matrix_units(family)) o.matmul_precision_ms = whole.matmul_precision_ms;
                o.measured_ms = ms;
                observed.push_back({i, o, family, device, std::nullopt, nullptr});
            }
        }
        observations_of[device];
    }
    // A time a hundred times off its prediction is a unit mistaken or another run, not what a factor can mean
    // (the document's factors lie within 0.01-100): said here, naming the row, not by the document's reader.
    for (const auto& o : observed) {
        double ratio = o.observation.measured_ms / o.observation.predicted_ms();
        if (within_calibration_range(ratio)) continue;
        char text[160];
        std::snprintf(text, sizeof text, "measured %.4g ms is %.3g times the %.4g ms predicted", o.observation.measured_ms,
                      ratio, o.observation.predicted_ms());
        refuse(row_name(o.row) + (o.family ? std::string(", kernels:") + to_string(*o.family) : std::string()) + ": " +
               text + "; a calibration's factors lie within 0.01-100 (a unit mistaken, or another run than the row's "
               "settings?)");
    }
    for (const auto& o : observed) observations_of[o.device].push_back(o.observation);
    Calibration calibration;
    calibration.predictor = predictor;
    if (!kernel_models.is_null()) calibration.kernel_models = kernel_models_fingerprint(kernel_models);
    for (const auto& [device, mine] : observations_of) {
        if (mine.empty())
            refuse("measurements: no kernel family of the traces on " + device + " is one the predictions hold");
        calibration.devices[device] = fit_calibration(mine);
    }
    // Rows within range each can still pull a factor out of it together (two runs of one family far apart).
    for (const auto& [device, d] : calibration.devices)
        for (const auto& [key, scale] : d.scales)
            if (!within_calibration_range(scale))
                refuse("measurements: the rows on " + device + " fit a " + key + " factor of " + json(scale).dump() +
                       ", outside 0.01-100: rows that contradict each other, or a unit mistaken");
    // The calibration in use (`calibration`): its devices these rows do not measure are kept, so that measuring
    // one device loses nobody's other; a device measured again is fitted on the new rows alone (the document
    // keeps no rows to refit on).
    json kept = json::array(), replaced = json::array();
    if (o.has("calibration")) {
        Calibration previous = calibration_from_json(o.value("calibration"));
        check_calibration_applies(previous, predictor, kernel_models);
        for (auto& [device, d] : previous.devices) {
            if (calibration.devices.count(device)) {
                replaced.push_back(device);
            } else {
                calibration.devices.emplace(device, std::move(d));
                kept.push_back(device);
            }
        }
    }
    json document = to_json(calibration);

    // Every row again, as `predict --calibration` answers it.
    json out_rows = json::array();
    std::map<std::string, std::vector<double>> after_of, measured_of;
    std::map<size_t, json> again_of;
    std::unique_ptr<KernelPredictor> calibrated_kernels;  // the calibration applied to the kernel model, for shaped kernels
    for (const auto& o : observed) {
        auto it = again_of.find(o.row);
        if (it == again_of.end()) {
            json again = measured[o.row].request;
            again["calibration"] = document;
            it = again_of.emplace(o.row, predict_row(again, o.row)).first;
        }
        const json& result = it->second;
        double after = 0;
        if (o.shaped) {
            if (!calibrated_kernels)
                calibrated_kernels = std::make_unique<CalibratedPredictor>(
                    make_predictor(predictor, kernel_models), read_calibration(document, predictor, kernel_models));
            after = shaped_ms(*o.shaped, *calibrated_kernels, *o.hw);
        } else {
            after = o.family ? result.at("step").at("by_family_ms").at(to_string(*o.family)).get<double>()
                             : measured_quantity(result, measured[o.row].measures);
        }
        double before = o.observation.predicted_ms();
        double m = o.observation.measured_ms;
        after_of[o.device].push_back(after);
        measured_of[o.device].push_back(m);
        out_rows.push_back({{"row", o.row + 1},
                            {"hardware", o.device},
                            {"measures", o.family ? std::string(kKernelsMeasured) + ":" + to_string(*o.family)
                                                  : measured[o.row].measures},
                            {"matched_by", !o.family ? json(nullptr) : json(o.shaped ? "shape" : "name")},
                            {"operators", o.shaped ? json(o.shaped->operators) : json(nullptr)},
                            {"measured_ms", m},
                            {"predicted_ms_before", before},
                            {"predicted_ms_after", after},
                            {"ape_before_pct", ape_pct(before, m)},
                            {"ape_after_pct", ape_pct(after, m)}});
    }
    // The summaries of the answers themselves, not of the fit's linear arithmetic.
    for (const auto& [device, mine] : observations_of)
        calibration.devices[device].after = summarise(after_of[device], measured_of[device]);
    return {{"calibration", to_json(calibration)},
            {"rows", out_rows},
            {"kept_devices", kept},
            {"replaced_devices", replaced}};
}

}  // namespace prenet
