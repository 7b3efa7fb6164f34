#pragma once
// Human-readable renderings of the API's JSON documents.
#include <ostream>

#include <nlohmann/json.hpp>

namespace prenet::cli {

void print_prediction_table(std::ostream& out, const nlohmann::json& doc);
void print_features_table(std::ostream& out, const nlohmann::json& doc);
void print_zoo_table(std::ostream& out, const nlohmann::json& doc);
void print_hardware_table(std::ostream& out, const nlohmann::json& doc);
void print_layers_table(std::ostream& out, const nlohmann::json& doc);
void print_options_table(std::ostream& out, const nlohmann::json& doc);

}  // namespace prenet::cli
