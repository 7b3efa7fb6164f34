#pragma once
// `prenet fit`: fits the per-family kernel models on data/, validates them leaving one accelerator out at a
// time (against the roofline and a PreNeT-style regressor), checks whole training steps against the measured
// NeuSight iterations, and writes models/kernels.json and docs/accuracy.md (+ SVG plots).
#include <string>
#include <vector>

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
};

void fit_and_validate(const FitOptions& options);

}  // namespace prenet
