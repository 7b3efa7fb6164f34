#pragma once
// `prenet kernels`: the rows of a kernel table (NeuSight's ops layout, plus collective rows) timed on one
// accelerator. Matrix rows at a precision the device has no units for are timed at the precision it runs them as
// (hardware/precision_support.hpp); collective rows by the shipped collective model on a cluster of that device.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/precision.hpp"

namespace prenet {

struct KernelsRequest {
    nlohmann::json hardware;      // one accelerator: its sheet, or a list of one catalogue id
    std::string hardware_origin;  // how the user named it, for messages
    Precision precision = Precision::fp32;  // of rows without a `precision` column
    nlohmann::json kernel_models;  // a kernel models document to predict with; null: `predictor`
    std::optional<std::string> predictor;  // one of predictor_names(); none: the default
    nlohmann::json calibration;    // a calibration document (--calibration) applied to the accelerator; null: none
    std::string csv_path;          // the table
};

// The table as CSV text with matmul_precision_used (empty for vector and collective rows) and predicted_ms
// (the last column) appended. Throws Error for a bad accelerator, predictor or table.
std::string kernel_predictions_csv(const KernelsRequest& request);

}  // namespace prenet
