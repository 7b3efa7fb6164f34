#pragma once
// The collective model's fit (part of `prenet fit`): per link kind, the achieved fraction of the link's
// one-direction bandwidth, a latency per algorithm step and a fixed cost per collective, from measured
// collectives (data/collectives/), validated leaving one accelerator out. docs/parallel.md, "Collectives".
#include <string>
#include <vector>

#include "parallel/collectives.hpp"

namespace prenet {

struct CollectiveSample {
    std::string source, device, op;
    std::int64_t gpus = 1;
    double message_bytes = 0, measured_ms = 0;
};

// data/collectives/<name>.csv (tools/prepare_collectives.py's schema).
std::vector<CollectiveSample> load_collective_samples(const std::string& csv_path);

// What the shipped model predicts for a sample (the same path as `prenet kernels` on a collective row).
double predict_sample(const CollectiveModel& model, const CollectiveSample& s);

// Fits every link kind with data in `samples` (one domain each: the scale-up link); kinds without data, and
// the fallback, get the fit pooled over all samples.
CollectiveModel fit_collective_model(const std::vector<CollectiveSample>& samples);

// For a device alone on its link kind (no leave-one-out fit of that kind exists): which half of the device's
// distinct message sizes, in order, each of its samples falls in (0 or 1, alternating); -1 for other devices'.
std::vector<int> message_size_halves(const std::vector<CollectiveSample>& samples, const std::string& device);

struct CollectiveFitReport {
    CollectiveModel model;  // fitted on every fitting sample
    std::string markdown;   // the "Collectives" section of docs/accuracy.md
    std::vector<std::string> files;  // the data files read
};

// Fits on data_dir/collectives/nccl.csv (+ xla.csv's MI300X rows, the only Infinity Fabric data) and checks
// each device left out; XLA's NVLink rows are predicted as a check, not fitted (another timing method).
// H200 and H800 rows (h200*, h800*) are never read: held back.
CollectiveFitReport fit_collectives(const std::string& data_dir, bool verbose);

}  // namespace prenet
