#pragma once
// `prenet fit`: fits the per-family kernel models on data/, validates them leaving one accelerator out at a
// time (against the roofline and a PreNeT-style regressor), checks whole training steps against the measured
// NeuSight iterations, and writes models/kernels.json and docs/accuracy.md (+ SVG plots).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fit/dataset.hpp"
#include "fit/learners.hpp"

namespace prenet {

struct FitOptions {
    std::string data_dir = "data";
    std::string models_out = "models/kernels.json";
    std::string report_out = "docs/accuracy.md";
    std::string plots_dir = "docs/plots";
    int max_rows_per_device = 6000;  // per family; keeps a full fit within minutes on 2 cores
    GbtParams gbt;
    bool verbose = true;
    std::string dump_predictions;  // optional CSV of every held-out row's prediction, for analysis
    // Chips to hold out of the whole fit (device-id prefixes: "v100" drops every V100 variant), so that
    // end-to-end checks on those chips (tools/compare_published.mjs) judge a model that never saw them.
    std::vector<std::string> without;
    // The collective model (fit/collective_fit.hpp), fitted from data_dir/collectives/ when it exists and no
    // chip is held out (held-out fits are of the kernel models only).
    std::string collectives_out = "models/collectives.json";
    // "collectives": fit only the collective model and write only its report section (to report_out, or to
    // stdout when report_out is empty);
    // "kernels": everything but the collective model.
    std::string only;
};

// Whether `device` belongs to one of the held-out chips (its id starts with one of the prefixes).
bool is_held_out_chip(const std::string& device, const std::vector<std::string>& without);

void fit_and_validate(const FitOptions& options);

// The marker after which a report's sections are written by hand (status notes of issues) and kept by a refit.
inline constexpr const char* kHandWrittenMarker = "<!-- written by hand below: kept when prenet fit rewrites this file -->";
// What of an existing report a refit keeps: the marker and everything after it ("" when there is no marker).
std::string hand_written_tail(const std::string& report);

// The learner a kernel family ships, from each candidate's time-weighted held-out error (ridge, ridge-all, gbt,
// gbt-all): the lowest, except that the best ridge regression is kept over a better GBT unless the GBT's error is
// lower by more than kSimplerLearnerTolerance of it. A ridge model is a few hundred numbers, a GBT ~0.5 MB of JSON
// that the page embeds (its budget is 1 MB gzip); and which of two learners this close wins is decided by the
// subsample they were fitted on (element-wise: ridge-all 13.8% on one 6,000-row draw per device, a GBT better on
// another), not by which generalises.
constexpr double kSimplerLearnerTolerance = 0.15;
std::string keep_learner(const std::map<std::string, double>& time_weighted);

// Rounds every floating-point number in `value` to `digits` significant digits. The shipped kernel models are
// written this way (6 digits, kShippedSignificantDigits): the page embeds models/kernels.json, where digits past the
// 6th cost ~60 KB of its 1 MB gzip budget, while a step moves by at most 0.25% (a tree split flipping where a
// feature lies within 5e-6 of a threshold; median 4e-7; docs/predictor.md).
void round_to_significant_digits(nlohmann::json& value, int digits);

// `models` (a kernel models document) with each family's floor_ms set to the latency floor `source` measured
// (its floor_ms_by_source), where that is known: a source's timings include its own call overhead.
nlohmann::json timed_as_measured_by(const nlohmann::json& models, const std::string& source);

// One fold of the leave-one-accelerator-out validation, as the accuracy report computes it: `learner` (ridge,
// ridge-all, gbt, gbt-all, gbt-time) fitted on `train` (one family's kernels), written as the models document
// `prenet fit` ships, and what LearnedPredictor built from that document predicts for each of `test`, timed with
// the floor of the source that measured it. Samples without a positive bound are skipped, as in the fit.
struct HeldOutFold {
    nlohmann::json models;
    std::vector<double> predicted_ms;
};
HeldOutFold held_out_fold(const std::string& learner, const std::vector<Sample>& train,
                          const std::vector<Sample>& test, const GbtParams& gbt);

}  // namespace prenet
