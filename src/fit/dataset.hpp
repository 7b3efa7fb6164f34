#pragma once
// Kernel measurements (data/**/ops/*.csv): one row per measured kernel with its device (a hardware/ id),
// op and dims in the NeuSight layout, precision (fp32 if absent), and measured time.
#include <cstddef>
#include <cstdint>
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
std::vector<std::string> data_files(const std::string& data_dir);  // every data/*/ops/*.csv, sorted
std::vector<Sample> load_data_folder(const std::string& data_dir);  // the samples of data_files(), in order
// Measurements kept out of every fit, every data/*/excluded/*.csv, sorted (data/README.md says why for each):
// the report predicts them with the shipped models, which never saw them.
std::vector<std::string> excluded_data_files(const std::string& data_dir);

// What a report was computed from, so that it can say so: a file's data rows and a hash of its bytes.
struct DataFileStamp {
    std::string path;
    std::size_t rows = 0;   // data rows of the CSV (header excluded)
    std::uint64_t fnv1a64 = 0;  // FNV-1a 64 of the file's bytes
};
DataFileStamp stamp_data_file(const std::string& csv_path);
std::uint64_t fnv1a64(const std::string& bytes);
// `git rev-parse --short HEAD` of the working directory, with " (uncommitted changes)" when tracked files
// differ from it; "unknown" outside a git checkout.
std::string source_commit();

}  // namespace prenet
