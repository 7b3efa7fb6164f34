#pragma once
// What the cluster-arguments fuzz target (fuzz/cluster_args_fuzz.cpp, which skips the known classes of
// known_limits.hpp and anything naming a file first) and its regression test (tests/cli-fuzz-regressions-test.cpp,
// unfiltered) do with one input: a `prenet predict --json` run whose cluster options come from the input, one
// argument a line, as a user types them (--network, --gpus, --gpus-per-node, --tp/--pp/--dp/--cp/--ep/--vp,
// --zero, --schedule, --global-batch...). A line `--cluster` takes the next line as the cluster document's text:
// it is handed to the CLI as a file, as `--cluster FILE` is, but one in memory (memfd), so the fuzzer touches no
// file on disk. --model and --hardware default to gpt2 on an H100 when the input names none.
//
// Bad arguments must end as a prenet::Error or an exit status. A reply must hold plausible numbers: the issue's
// `--network 8x1e-31g-ib` answered a step of 9.7e35 ms. Native only (Linux: memfd_create).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_entry_point.hpp"

namespace prenet::fuzz {

// A document's text as a path the CLI can read: an anonymous in-memory file, closed by the destructor.
class MemoryFile {
public:
    explicit MemoryFile(const std::string& text) : fd_(memfd_create("cluster", 0)) {
        if (fd_ < 0) return;
        std::size_t done = 0;
        while (done < text.size()) {
            ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
            if (n <= 0) break;
            done += std::size_t(n);
        }
    }
    ~MemoryFile() {
        if (fd_ >= 0) ::close(fd_);
    }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;
    std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
    int fd_;
};

// The longest time a reply may claim: 10^15 ms, some 30,000 years. The worst real question this target can ask
// stays below it: with every rate at least its plausible minimum (docs/limits.md: 10^-3 GB/s) and every count
// within its range, 2^31 micro-batches each sending a gpt2 activation (1.5 MB) over the slowest network take
// 3 x 10^12 ms. 9.7e35 ms (the issue's `--network 8x1e-31g-ib`) is a unit or range error that reached the
// arithmetic.
constexpr double kMaxPlausibleMs = 1e15;

// Every number of a key ending in "_ms" (a time) is finite, non-negative and at most kMaxPlausibleMs. (nlohmann
// writes NaN and infinities as null, which the API's tests catch; here it is the size of a number.)
inline bool plausible_times(const nlohmann::json& j, const std::string& key = "") {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            if (!plausible_times(it.value(), it.key())) return false;
        return true;
    }
    if (j.is_array())
        return std::all_of(j.begin(), j.end(), [&](const nlohmann::json& v) { return plausible_times(v, key); });
    bool time = key.size() > 3 && key.compare(key.size() - 3, 3, "_ms") == 0;
    if (!j.is_number() || !time) return true;
    double ms = j.get<double>();
    return std::isfinite(ms) && ms >= 0 && ms <= kMaxPlausibleMs;
}

// Runs one input; false if a reply came back with an implausible step time (a finding).
inline bool cluster_args(const std::string& text) {
    std::vector<std::string> lines = argument_lines(text);
    std::vector<std::string> argv = {"predict", "--json"};
    std::vector<std::unique_ptr<MemoryFile>> files;
    bool model = false, hardware = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        model = model || lines[i] == "--model";
        hardware = hardware || lines[i] == "--hardware";
        argv.push_back(lines[i]);
        if (lines[i] == "--cluster" && i + 1 < lines.size()) {
            files.push_back(std::make_unique<MemoryFile>(lines[++i]));
            argv.push_back(files.back()->path());
        }
    }
    if (!model) argv.insert(argv.end(), {"--model", "gpt2"});
    if (!hardware) argv.insert(argv.end(), {"--hardware", "h100-sxm5-80gb"});
    std::ostringstream out;
    try {
        if (cli::run(argv, out) != 0) return true;
    } catch (const Error&) {
        return true;
    }
    nlohmann::json reply = nlohmann::json::parse(out.str(), nullptr, false);
    return !reply.is_discarded() && plausible_times(reply);
}

}  // namespace prenet::fuzz
