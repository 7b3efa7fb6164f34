#pragma once
// `prenet calibrate` and {"command": "calibrate"}: measured rows in, a calibration document out
// (docs/calibration.md). Each row is a predict request (its columns are predict's option names) plus what was
// measured; every row is predicted as `predict` would answer it, each device's factors are fitted
// (calibration/calibration_fit.hpp), and every row is predicted again with them, so the reply's before and after
// are the API's own answers.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace prenet {

// The measurement columns a row adds to predict's options.
constexpr const char* kMeasuredMs = "measured_ms";
constexpr const char* kMeasures = "measures";
// A profiler trace (calibration/profiler_trace.hpp) instead of measured_ms: its kernels measure each family.
constexpr const char* kTrace = "trace";
constexpr const char* kKernelsMeasured = "kernels";
// What a row's measured_ms is: the whole step, forward and backward without the optimizer, or the forward; or
// `kernels`, a trace row's GPU kernel time per family.
const std::vector<std::string>& measured_quantities();

// Measured rows as objects: a list of objects as given, or CSV text (a header of column names, one row per line)
// with each value read by its option's type (numbers, true/false); an empty CSV field is an option not given.
// Unknown columns or fields are refused, naming the row (1-based) and the column (errors: field "measurements").
std::vector<nlohmann::json> measurement_rows(const nlohmann::json& measurements);

// The reply: {"calibration": document, "rows": [{row, hardware, measures, measured_ms, predicted_ms_before,
// predicted_ms_after, ape_before_pct, ape_after_pct}]}, a trace row once per kernel family (measures
// "kernels:gemm"). Throws Error naming the row and its field.
nlohmann::json calibrate_reply(const nlohmann::json& request);

}  // namespace prenet
