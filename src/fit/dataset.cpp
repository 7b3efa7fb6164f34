#include "fit/dataset.hpp"

#include <filesystem>
#include <stdexcept>

#include "core/error.hpp"
#include "predict/op_rows.hpp"

namespace prenet {

std::vector<Sample> load_samples(const std::string& path) {
    CsvTable t = read_csv_file(path);
    int dev = t.column("device"), src = t.column("source"), ms = t.column("latency_ms");
    if (dev < 0 || ms < 0) throw Error(path + ": needs 'device' and 'latency_ms' columns");
    std::vector<Kernel> kernels = kernels_from_table(t, Precision::fp32, path);
    std::vector<Sample> out;
    out.reserve(kernels.size());
    for (size_t r = 0; r < t.rows.size(); ++r) {
        double measured = parse_number(t.rows[r][ms], path);
        if (!(measured > 0)) continue;
        out.push_back({t.rows[r][dev], src >= 0 ? t.rows[r][src] : "", kernels[r], measured});
    }
    return out;
}

std::vector<Sample> load_data_folder(const std::string& data_dir) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    if (!fs::is_directory(data_dir)) throw Error("no data folder '" + data_dir + "'");
    for (const auto& source : fs::directory_iterator(data_dir)) {
        fs::path ops = source.path() / "ops";
        if (!fs::is_directory(ops)) continue;
        for (const auto& f : fs::directory_iterator(ops))
            if (f.path().extension() == ".csv") files.push_back(f.path().string());
    }
    std::sort(files.begin(), files.end());
    std::vector<Sample> all;
    for (const auto& f : files) {
        auto part = load_samples(f);
        all.insert(all.end(), part.begin(), part.end());
    }
    return all;
}

}  // namespace prenet
