#pragma once
// Kernel measurements (data/**/ops/*.csv): one row per measured kernel with its device (a hardware/ id),
// op and dims in the NeuSight layout, precision (fp32 if absent), and measured time.
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "hardware/spec.hpp"
#include "ops/kernel.hpp"
#include "predict/op_rows.hpp"

namespace prenet {

struct Sample {
    std::string device;
    std::string source;
    Kernel kernel;
    double measured_ms = 0;
};

std::vector<Sample> load_samples(const std::string& csv_path);
std::vector<Sample> load_data_folder(const std::string& data_dir);  // every data/*/ops/*.csv

}  // namespace prenet
