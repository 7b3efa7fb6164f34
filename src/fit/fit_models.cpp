#include "fit/fit_models.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "fit/dataset.hpp"
#include "importers/resolve.hpp"
#include "ops/features.hpp"
#include "run/step.hpp"
#include "fit/svg_plot.hpp"
#include "predict/kernel_features.hpp"
#include "predict/learned.hpp"

namespace prenet {
namespace {

using nlohmann::json;

// Columns of kernel_features() a PreNeT-style regressor sees: operations (CO), memory (CM), operations over
// peak (CT), the layer dims and the hardware numbers; no roofline bound, no waves.
const std::vector<int> kPrenetColumns = {0, 1, 4, 7, 8, 9, 10, 11, 15, 16, 17, 18, 19};

struct Row {
    std::string device;
    std::vector<double> x;
    double measured_ms, bound_ms;
};

std::vector<double> prenet_features(const std::vector<double>& x) {
    std::vector<double> out;
    for (int c : kPrenetColumns) out.push_back(x[c]);
    return out;
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    double pos = q * double(v.size() - 1);
    size_t i = size_t(pos);
    double frac = pos - double(i);
    return i + 1 < v.size() ? v[i] * (1 - frac) + v[i + 1] * frac : v[i];
}

struct Errors {
    std::vector<double> ape;
    double median() const { return quantile(ape, 0.5); }
    double p90() const { return quantile(ape, 0.9); }
};

std::string pct(double x) {
    if (std::isnan(x)) return "-";
    std::ostringstream s;
    s.precision(x < 0.1 ? 2 : 3);
    s << x * 100 << "%";
    return s.str();
}

// Per family: rows grouped by device, capped per device by a seeded shuffle.
std::map<std::string, std::vector<Row>> build_rows(const std::vector<Sample>& samples, int cap) {
    std::map<std::string, std::map<std::string, std::vector<Row>>> grouped;
    for (const auto& s : samples) {
        const HardwareSpec& hw = find_hardware(s.device);
        double bound = roofline_bound_ms(s.kernel, hw);
        if (!(bound > 0)) continue;
        grouped[model_family(s.kernel.family)][s.device].push_back(
            {s.device, kernel_features(s.kernel, hw), s.measured_ms, bound});
    }
    std::map<std::string, std::vector<Row>> out;
    std::mt19937 rng(20241219);
    for (auto& [family, by_device] : grouped)
        for (auto& [device, rows] : by_device) {
            std::shuffle(rows.begin(), rows.end(), rng);
            if (int(rows.size()) > cap) rows.resize(size_t(cap));
            out[family].insert(out[family].end(), rows.begin(), rows.end());
        }
    return out;
}

using Learner = std::string;  // "ridge" | "gbt" | "prenet"

// Columns our learners see: sizes and dimension-free ratios only. Absolute times and device peaks are left
// out on purpose: trees cannot extrapolate them to a device faster than any they were fitted on.
const std::vector<std::string> kOurFeatures = {
    "log_flops", "log_bytes", "log_intensity", "log_intensity_over_ridge", "log_bytes_over_l2", "wave_efficiency",
    "log_blocks_per_unit", "log_m", "log_n", "log_k", "log_batch", "element_bytes", "log_watts_per_tflop",
    "wave_efficiency_64", "wave_efficiency_256x128"};

std::vector<int> columns_of(const std::vector<std::string>& names) {
    std::vector<int> out;
    const auto& all = kernel_feature_names();
    for (const auto& n : names) out.push_back(int(std::find(all.begin(), all.end(), n) - all.begin()));
    return out;
}

std::vector<double> select(const std::vector<double>& x, const std::vector<int>& columns) {
    std::vector<double> out;
    for (int c : columns) out.push_back(x[size_t(c)]);
    return out;
}

struct Fitted {
    std::unique_ptr<Regressor> model;
    double floor_ms = 0;
    std::vector<std::string> features;
    std::vector<int> columns;
    json to_json() const { return {{"floor_ms", floor_ms}, {"features", features}, {"model", model->to_json()}}; }
};

// Candidate learners: a regressor and the feature set it sees ("-all": every feature, incl. absolute device
// peaks and times; otherwise sizes and ratios only). Which one a family keeps is decided by validation.
bool uses_all_features(const std::string& learner) { return learner.size() > 4 && learner.substr(learner.size() - 4) == "-all"; }
std::string regressor_kind(const std::string& learner) {
    return uses_all_features(learner) ? learner.substr(0, learner.size() - 4) : learner;
}

// The latency floor of a family: the smallest time any training device shows for it (its 1st percentile, so a
// stray fast row does not set it). Kernel launch and framework dispatch, not the device's arithmetic.
double latency_floor(const std::vector<Row>& rows) {
    std::map<std::string, std::vector<double>> by_device;
    for (const auto& r : rows) by_device[r.device].push_back(r.measured_ms);
    double floor = 1e300;
    for (const auto& [d, v] : by_device) floor = std::min(floor, quantile(v, 0.01));
    return floor == 1e300 ? 0 : floor;
}

Fitted fit_learner(const Learner& learner, const std::vector<Row>& rows, const GbtParams& gbt) {
    Fitted f;
    f.floor_ms = learner == "prenet" ? 0 : latency_floor(rows);
    f.features = uses_all_features(learner) ? kernel_feature_names() : kOurFeatures;
    f.columns = columns_of(f.features);
    Matrix x;
    std::vector<double> y;
    for (const auto& r : rows) {
        if (learner == "prenet") {
            x.push_back(prenet_features(r.x));
            y.push_back(std::log10(r.measured_ms));
        } else {
            x.push_back(select(r.x, f.columns));
            y.push_back(std::log10(r.measured_ms / (r.bound_ms + f.floor_ms)));
        }
    }
    if (regressor_kind(learner) == "ridge") f.model = std::make_unique<RidgeModel>(fit_ridge(x, y, 1.0));
    else f.model = std::make_unique<TreeEnsemble>(fit_gbt(x, y, gbt));
    return f;
}

double predict_row(const Learner& learner, const Fitted* fitted, const Row& r) {
    if (learner == "roofline") return r.bound_ms + RooflinePredictor::kLaunchMs;
    if (learner == "prenet") return std::pow(10.0, fitted->model->predict(prenet_features(r.x)));
    double g = fitted->model->predict(select(r.x, fitted->columns));
    return (r.bound_ms + fitted->floor_ms) * std::pow(10.0, std::clamp(g, 0.0, 4.0));
}

struct FamilyResult {
    std::map<Learner, std::map<std::string, Errors>> by_device;  // learner -> held-out device -> errors
    std::map<Learner, Errors> pooled;
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> best_points;  // device -> (meas, pred)
    Learner chosen;
};

const std::vector<Learner> kLearners = {"roofline", "prenet", "ridge", "ridge-all", "gbt", "gbt-all"};
const std::vector<Learner> kOurs = {"ridge", "ridge-all", "gbt", "gbt-all"};

FamilyResult leave_one_device_out(const std::vector<Row>& rows, const GbtParams& gbt, bool verbose,
                                  const std::string& family) {
    FamilyResult result;
    std::set<std::string> devices;
    for (const auto& r : rows) devices.insert(r.device);
    std::map<Learner, std::map<std::string, std::vector<double>>> predictions;
    for (const auto& held_out : devices) {
        std::vector<Row> train, test;
        for (const auto& r : rows) (r.device == held_out ? test : train).push_back(r);
        if (train.empty()) continue;
        for (const auto& learner : kLearners) {
            Fitted model;
            if (learner != "roofline") model = fit_learner(learner, train, gbt);
            auto& errs = result.by_device[learner][held_out];
            for (const auto& r : test) {
                double p = predict_row(learner, &model, r);
                errs.ape.push_back(std::abs(p - r.measured_ms) / r.measured_ms);
                result.pooled[learner].ape.push_back(errs.ape.back());
                predictions[learner][held_out].push_back(p);
            }
        }
        if (verbose)
            std::cerr << "  " << family << ": left out " << held_out << " (" << test.size() << " rows): gbt median "
                      << pct(result.by_device["gbt"][held_out].median()) << ", ridge "
                      << pct(result.by_device["ridge"][held_out].median()) << ", roofline "
                      << pct(result.by_device["roofline"][held_out].median()) << "\n";
    }
    // Keep the learner with the lowest mean of per-device median errors.
    double best = 1e300;
    for (const Learner& l : kOurs) {
        double mean = 0;
        for (const auto& [d, e] : result.by_device[l]) mean += e.median() / double(result.by_device[l].size());
        if (mean < best) best = mean, result.chosen = l;
    }
    for (const auto& held_out : devices) {
        auto& pts = result.best_points[held_out];
        for (const auto& r : rows)
            if (r.device == held_out) pts.first.push_back(r.measured_ms);
        pts.second = predictions[result.chosen][held_out];
    }
    return result;
}

// A PreNeT-style predictor for whole steps: log time regressed directly per family, no bound.
class PrenetStylePredictor : public KernelPredictor {
public:
    std::map<std::string, Fitted> families;
    std::string name() const override { return "prenet-style"; }
    double kernel_ms(const Kernel& k, const HardwareSpec& hw) const override {
        if (k.flops <= 0 && k.bytes <= 0) return 0;
        auto it = families.find(model_family(k.family));
        if (it == families.end()) it = families.find("elementwise");
        return std::pow(10.0, it->second.model->predict(prenet_features(kernel_features(k, hw))));
    }
};

// Devices that share a chip with `device` leave the fit together (an A100 PCIe 40 GB teaches the 80 GB).
std::set<std::string> left_out_with(const std::string& device) {
    std::set<std::string> out = {device};
    if (device.rfind("a100", 0) == 0)
        for (const auto& h : hardware_catalogue())
            if (h.id.rfind("a100", 0) == 0) out.insert(h.id);
    return out;
}

struct E2eReport {
    std::string markdown;
};

E2eReport evaluate_e2e(const std::string& data_dir, const std::map<std::string, std::vector<Row>>& families,
                       const GbtParams& gbt, const std::map<std::string, Learner>& chosen, bool verbose) {
    CsvTable t = read_csv_file(data_dir + "/neusight/e2e.csv");
    auto col = [&](const char* c) { return t.column(c); };
    std::map<std::string, std::pair<std::unique_ptr<LearnedPredictor>, std::unique_ptr<PrenetStylePredictor>>> cache;
    std::ostringstream md;
    md << "## Training iterations (forward + backward), device left out\n\n"
       << "Measured: NeuSight's PyTorch FP32 iterations (`data/neusight/e2e.csv`, no optimizer step), the model built "
          "from the same Hugging Face config. For an A100 every A100 variant leaves the fit.\n\n"
       << "| device | model | seq | batch | measured ms | roofline | PreNeT-style | ours |\n|---|---|---|---|---|---|---|---|\n";
    std::map<std::string, Errors> errors;
    RooflinePredictor roofline;
    for (const auto& row : t.rows) {
        if (row[col("layout")] != "single") continue;
        std::string device = row[col("device")], model_name = row[col("model")];
        std::int64_t seq = std::stoll(row[col("seq")]), batch = std::stoll(row[col("batch")]);
        double measured = std::stod(row[col("total_ms")]);
        auto excluded = left_out_with(device);
        std::string key;
        for (const auto& d : excluded) key += d + ",";
        auto& predictors = cache[key];
        if (!predictors.first) {
            json doc = {{"feature_names", kernel_feature_names()}, {"families", json::object()}};
            predictors.second = std::make_unique<PrenetStylePredictor>();
            for (const auto& [family, rows] : families) {
                std::vector<Row> train;
                for (const auto& r : rows)
                    if (!excluded.count(r.device)) train.push_back(r);
                doc["families"][family] = fit_learner(chosen.at(family), train, gbt).to_json();
                predictors.second->families[family] = fit_learner("prenet", train, gbt);
            }
            predictors.first = std::make_unique<LearnedPredictor>(doc);
        }
        std::ifstream in(data_dir + "/neusight/model_configs/" + model_name + ".json");
        json config = json::parse(in, nullptr, false);
        if (config.is_discarded()) throw Error("cannot read the config of e2e model '" + model_name + "'");
        Model model = resolve_model(config, {batch, seq, 0});
        ModelFeatures features = compute_features(model, Precision::fp32);
        const HardwareSpec& hw = find_hardware(device);
        const OptimizerDef& sgd = find_optimizer("sgd");
        md << "| " << device << " | " << model_name << " | " << seq << " | " << batch << " | " << measured;
        const std::pair<const char*, const KernelPredictor*> rows[] = {
            {"roofline", &roofline}, {"prenet", predictors.second.get()}, {"ours", predictors.first.get()}};
        for (const auto& [name, p] : rows) {
            StepTime st = predict_step(features, hw, *p, Precision::fp32, sgd);
            double predicted = st.forward_ms + st.backward_ms;
            double ape = std::abs(predicted - measured) / measured;
            errors[name].ape.push_back(ape);
            md << " | " << int(predicted) << " (" << pct(ape) << ")";
        }
        md << " |\n";
        if (verbose) std::cerr << "  e2e " << device << " " << model_name << " done\n";
    }
    md << "\n| | roofline | PreNeT-style | ours |\n|---|---|---|---|\n| median APE | " << pct(errors["roofline"].median())
       << " | " << pct(errors["prenet"].median()) << " | " << pct(errors["ours"].median()) << " |\n| p90 APE | "
       << pct(errors["roofline"].p90()) << " | " << pct(errors["prenet"].p90()) << " | " << pct(errors["ours"].p90())
       << " |\n";
    return {md.str()};
}

void write_file(const std::string& path, const std::string& text) {
    std::filesystem::path p(path);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    std::ofstream out(path);
    if (!out) throw Error("cannot write '" + path + "'");
    out << text;
}

}  // namespace

void fit_and_validate(const FitOptions& o) {
    auto start = std::chrono::steady_clock::now();
    std::vector<Sample> samples = load_data_folder(o.data_dir);
    if (o.verbose) std::cerr << "loaded " << samples.size() << " kernel measurements from " << o.data_dir << "\n";
    auto families = build_rows(samples, o.max_rows_per_device);

    json models = {{"format", 1},
                   {"description", "Per-family kernel models: time = roofline bound x 10^g(features), g >= 0"},
                   {"feature_names", kernel_feature_names()},
                   {"fitted_on", o.data_dir},
                   {"max_rows_per_device", o.max_rows_per_device},
                   {"gbt", {{"trees", o.gbt.trees}, {"depth", o.gbt.depth}, {"learning_rate", o.gbt.learning_rate},
                            {"min_leaf", o.gbt.min_leaf}}},
                   {"families", json::object()}};
    std::ostringstream table, detail;
    table << "| family | rows | devices | roofline | PreNeT-style | ridge | ridge-all | GBT | GBT-all | kept |\n"
          << "|---|---|---|---|---|---|---|---|---|---|\n";
    std::map<std::string, FamilyResult> results;
    for (const auto& [family, rows] : families) {
        FamilyResult r = leave_one_device_out(rows, o.gbt, o.verbose, family);
        std::set<std::string> devices;
        for (const auto& row : rows) devices.insert(row.device);
        table << "| " << family << " | " << rows.size() << " | " << devices.size();
        for (const auto& l : kLearners) table << " | " << pct(r.pooled[l].median()) << " / " << pct(r.pooled[l].p90());
        table << " | " << r.chosen << " |\n";
        detail << "\n### " << family << "\n\n| device left out | rows | roofline | PreNeT-style | ridge | ridge-all | "
               << "GBT | GBT-all |\n|---|---|---|---|---|---|---|---|\n";
        for (const auto& d : devices) {
            detail << "| " << d << " | " << r.by_device["gbt"][d].ape.size();
            for (const auto& l : kLearners)
                detail << " | " << pct(r.by_device[l][d].median()) << " / " << pct(r.by_device[l][d].p90());
            detail << " |\n";
        }
        std::vector<ScatterSeries> series;
        for (const auto& [d, pts] : r.best_points) {
            ScatterSeries s{d, {}, {}};
            size_t step = std::max<size_t>(1, pts.first.size() / 600);  // keep the SVGs small
            for (size_t i = 0; i < pts.first.size(); i += step)
                s.measured.push_back(pts.first[i]), s.predicted.push_back(pts.second[i]);
            series.push_back(std::move(s));
        }
        write_file(o.plots_dir + "/" + family + ".svg",
                   scatter_svg(family + ": " + r.chosen + ", each device predicted by a model fitted without it", series));
        Fitted final_model = fit_learner(r.chosen, rows, o.gbt);
        models["families"][family] = {{"learner", r.chosen},
                                      {"floor_ms", final_model.floor_ms},
                                      {"features", final_model.features},
                                      {"rows", rows.size()},
                                      {"devices", std::vector<std::string>(devices.begin(), devices.end())},
                                      {"validation",
                                       {{"method", "leave one accelerator out"},
                                        {"median_ape", r.pooled[r.chosen].median()},
                                        {"p90_ape", r.pooled[r.chosen].p90()}}},
                                      {"model", final_model.model->to_json()}};
        results[family] = std::move(r);
    }
    write_file(o.models_out, models.dump() + "\n");

    // End to end: whole training iterations, each device predicted by models fitted without it.
    std::map<std::string, Learner> chosen;
    for (const auto& [family, r] : results) chosen[family] = r.chosen;
    E2eReport e2e = evaluate_e2e(o.data_dir, families, o.gbt, chosen, o.verbose);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::ostringstream md;
    md << "# Prediction accuracy\n\nGenerated by `prenet fit` (" << samples.size() << " kernel measurements from `"
       << o.data_dir << "`, at most " << o.max_rows_per_device
       << " rows per device and family, fitted in " << int(seconds)
       << " s). Do not edit by hand: rerun `npm run fit`.\n\n"
       << "Every number is **leave one accelerator out**: the device a row was measured on was absent from the "
          "data the model was fitted on. APE = |predicted - measured| / measured.\n\n"
       << "- *roofline*: max(FLOPs / peak, bytes / bandwidth) + 5 us launch.\n"
       << "- *PreNeT-style*: gradient-boosted trees on log time from the layer's operations, memory, "
          "operations / peak, dims and the hardware's spec numbers (no physical bound).\n"
       << "- *ridge*, *GBT*: ours, the roofline bound x a learned slowdown 10^g >= 1 (ridge regression or "
          "gradient-boosted trees on log features incl. wave quantisation).\n\n"
       << "## Kernels, pooled over the left-out devices\n\n"
       << table.str() << "\n## Kernels, per left-out device (median / p90 APE)\n" << detail.str()
       << "\nPlots: `docs/plots/<family>.svg` (kept learner, each device predicted by a model that never saw it).\n\n"
       << e2e.markdown;
    write_file(o.report_out, md.str());
    if (o.verbose) std::cerr << "wrote " << o.models_out << " and " << o.report_out << " in " << seconds << " s\n";
}

}  // namespace prenet
