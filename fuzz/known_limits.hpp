#pragma once
// Inputs the fuzz targets skip. With the limits of core/limits.hpp merged (issue #13: nesting depth, dimensions up to
// 2^31, layer counts, patch_size 0, spec-sheet ranges), what is left is what the harness itself, or the time budget,
// cannot take: JSON nested past 64 levels (the harnesses parse with nlohmann before calling the entry point, and
// destroying a 10^5-deep document recurses), numbers past the dimension limit (refused by the limits anyway), and
// counts above 256 (100,000 layers are legal but take seconds each, which would turn short fuzz runs into a few
// executions). The regression harness (tests/fuzz-regressions-test.cpp) feeds its inputs with no skip.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/limits.hpp"

namespace prenet::fuzz {

constexpr int kMaxDepth = limits::json_depth;  // JSON nesting (the issue: SIGSEGV at 10^5 levels)
constexpr double kMaxMagnitude = double(limits::dimension);  // any number: the dimension limit
constexpr double kMaxCount = 256;          // layer counts, repeats, experts (the issue: 10^6..10^12 layers hang)

// Deeper than the API's nesting limit: skipped before the harness parses it (the entry points refuse it anyway).
inline bool too_deep(const std::uint8_t* data, std::size_t size) {
    return json_text_depth(std::string_view(reinterpret_cast<const char*>(data), size)) > kMaxDepth;
}

// A key that counts layers, repeats, experts, steps or devices: one of its '_'-separated words names one
// ("num_hidden_layers", "n_layer", "count", "decoder_sparse_step", "num_local_experts", "gpus", "grad_accum").
inline bool count_like(const std::string& key) {
    static const char* const words[] = {"layer", "layers", "repeat", "count", "experts", "blocks", "depth", "step",
                                        "steps", "every", "gpus", "dp", "tp", "pp", "cp", "ep", "vp", "accum",
                                        "nodes", "stages"};
    std::size_t begin = 0;
    while (begin <= key.size()) {
        std::size_t end = key.find('_', begin);
        if (end == std::string::npos) end = key.size();
        std::string word = key.substr(begin, end - begin);
        for (const char* w : words)
            if (word == w) return true;
        begin = end + 1;
    }
    return false;
}

// Numbers past the limits above, anywhere in the document (and patch sizes <= 0: the SIGFPE in
// importers/transformer.cpp).
inline bool out_of_range(const nlohmann::json& document) {
    std::vector<std::pair<const nlohmann::json*, std::string>> todo{{&document, ""}};
    while (!todo.empty()) {
        auto [j, key] = todo.back();
        todo.pop_back();
        if (j->is_object()) {
            for (auto it = j->begin(); it != j->end(); ++it) todo.push_back({&it.value(), it.key()});
        } else if (j->is_array()) {
            for (const auto& v : *j) todo.push_back({&v, key});
        } else if (j->is_number()) {
            double x = j->get<double>();
            if (!std::isfinite(x) || std::fabs(x) > kMaxMagnitude) return true;
            if (count_like(key) && std::fabs(x) > kMaxCount) return true;
        }
    }
    return false;
}

// Parses `data` as JSON; false (skip) for invalid JSON and for the known classes above.
inline bool parse_in_limits(const std::uint8_t* data, std::size_t size, nlohmann::json& out) {
    if (too_deep(data, size)) return false;
    out = nlohmann::json::parse(data, data + size, nullptr, false);
    return !out.is_discarded() && !out_of_range(out);
}

}  // namespace prenet::fuzz
