#include "fit/dataset.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
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

namespace {
std::vector<std::string> csv_files_in(const std::string& data_dir, const char* folder) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    if (!fs::is_directory(data_dir)) throw Error("no data folder '" + data_dir + "'");
    for (const auto& source : fs::directory_iterator(data_dir)) {
        fs::path ops = source.path() / folder;
        if (!fs::is_directory(ops)) continue;
        for (const auto& f : fs::directory_iterator(ops))
            if (f.path().extension() == ".csv") files.push_back(f.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

std::vector<std::string> data_files(const std::string& data_dir) { return csv_files_in(data_dir, "ops"); }
std::vector<std::string> excluded_data_files(const std::string& data_dir) {
    return csv_files_in(data_dir, "excluded");
}

std::vector<Sample> load_data_folder(const std::string& data_dir) {
    std::vector<Sample> all;
    for (const auto& f : data_files(data_dir)) {
        auto part = load_samples(f);
        all.insert(all.end(), part.begin(), part.end());
    }
    return all;
}

std::uint64_t fnv1a64(const std::string& bytes) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

DataFileStamp stamp_data_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read '" + path + "'");
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return {path, read_csv_file(path).rows.size(), fnv1a64(bytes.str())};
}

namespace {
// The first line a shell command prints, or "" if it fails.
std::string first_line_of(const char* command) {
    FILE* pipe = popen(command, "r");
    if (!pipe) return "";
    char buffer[256];
    std::string line = fgets(buffer, sizeof buffer, pipe) ? buffer : "";
    if (pclose(pipe) != 0) return "";
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    return line;
}
}  // namespace

std::string source_commit() {
    std::string commit = first_line_of("git rev-parse --short HEAD 2>/dev/null");
    if (commit.empty()) return "unknown";
    // `git diff --quiet` fails (non-zero) when tracked files differ from the commit.
    bool clean = !first_line_of("git diff --quiet HEAD 2>/dev/null && echo clean").empty();
    return clean ? commit : commit + " (uncommitted changes)";
}

}  // namespace prenet
