#pragma once
// `prenet fit` (native only: fitting is offline, and the wasm build leaves fit/ out): the fit's options by their
// option-table names (api/options.cpp: data, models_out, report, plots, rows_per_device, trees,
// dump_predictions, collectives_out, only, without), each already checked against its row; an absent one keeps
// the fit's default (fit/fit_models.hpp).
#include <nlohmann/json.hpp>

#include "fit/fit_models.hpp"

namespace prenet {

// A partial fit of the collectives alone never overwrites the full report unless `report` names one: without
// it, its section goes to stdout.
FitOptions fit_options(const nlohmann::json& options);

// Fits, validates and writes the models and the report.
void fit_kernel_models(const nlohmann::json& options);

}  // namespace prenet
