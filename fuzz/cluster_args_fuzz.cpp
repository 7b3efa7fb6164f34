// libFuzzer target: the cluster options and the cluster document (--network, --gpus, --gpus-per-node, the layout
// options, --cluster's JSON) through `prenet predict`, as cluster_entry_point.hpp runs them. Skipped first: flags
// that are not a cluster question's (the other options have cli_args_fuzz.cpp), values that could name a file, and
// the known classes of known_limits.hpp (numbers past the dimension limit; device and layout counts above 256,
// legal but each a plan search that takes seconds under ASan). A reply with an implausible time is a finding.
#include <set>
#include <string>
#include <vector>

#include "api/options.hpp"
#include "cluster_entry_point.hpp"
#include "known_limits.hpp"

namespace {

// The flags this target gives: every cluster option's (the option table's rows a cluster document may hold, and
// --cluster itself), and the model and accelerator the question is about.
const std::set<std::string>& cluster_flags() {
    static const std::set<std::string> flags = [] {
        std::set<std::string> out = {"--model", "--hardware"};
        for (const auto& row : prenet::option_table())
            if (!row.flag.empty() && (row.may_be_in_cluster_document || row.is_the_cluster_document))
                out.insert("--" + row.flag);
        return out;
    }();
    return flags;
}

// A value's number (after the flag's name, as the count-like keys of known_limits.hpp spell it) in range.
bool in_limits(const std::string& flag, const std::string& value) {
    if (value.find_first_of("0123456789") == std::string::npos) return true;
    nlohmann::json number = nlohmann::json::parse(value, nullptr, false);
    if (number.is_discarded()) return true;
    std::string key = flag.substr(2);
    for (auto& c : key)
        if (c == '-') c = '_';
    return !prenet::fuzz::out_of_range(nlohmann::json{{key, number}});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096 || prenet::fuzz::too_deep(data, size)) return -1;
    std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> lines = prenet::fuzz::argument_lines(text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string& line = lines[i];
        if (line.rfind("--", 0) == 0 && !cluster_flags().count(line.substr(0, line.find('=')))) return -1;
        if (line == "--cluster") {  // the next line is the document's text
            if (i + 1 < lines.size()) {
                nlohmann::json document = nlohmann::json::parse(lines[++i], nullptr, false);
                if (!document.is_discarded() && prenet::fuzz::out_of_range(document)) return -1;
            }
            continue;
        }
        if (line.find('/') != std::string::npos || line.find(".json") != std::string::npos ||
            line.find(".onnx") != std::string::npos || (!line.empty() && line[0] == '.'))
            return -1;
        if (i > 0 && lines[i - 1].rfind("--", 0) == 0 && !in_limits(lines[i - 1], line)) return -1;
        if (auto eq = line.find('='); line.rfind("--", 0) == 0 && eq != std::string::npos &&
                                      !in_limits(line.substr(0, eq), line.substr(eq + 1)))
            return -1;
    }
    if (!prenet::fuzz::cluster_args(text)) __builtin_trap();
    return 0;
}
