#pragma once
// Human-readable renderings of the API's JSON documents.
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace prenet::cli {

void print_prediction_table(std::ostream& out, const nlohmann::json& doc);
void print_features_table(std::ostream& out, const nlohmann::json& doc);
void print_zoo_table(std::ostream& out, const nlohmann::json& doc);
// `prenet calibrate`: each row before and after, then each device's factors.
void print_calibration_table(std::ostream& out, const nlohmann::json& doc);
void print_hardware_table(std::ostream& out, const nlohmann::json& doc);
void print_layers_table(std::ostream& out, const nlohmann::json& doc);
void print_options_table(std::ostream& out, const nlohmann::json& doc);

// `text` with every control character but newline (C0, DEL, and C1 as UTF-8 U+0080..U+009F) written as \xNN or
// \u00NN, so that a layer name cannot move the cursor, clear the screen or set the terminal title.
std::string terminal_safe(const std::string& text);

}  // namespace prenet::cli
