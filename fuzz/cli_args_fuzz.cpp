// libFuzzer target: the CLI (cli/args.hpp's parser and cli/commands.hpp's run) on an argument vector: the input's
// lines are the arguments. Commands that read or write files (fit, kernels) and arguments that could name a file
// are skipped: the fuzzer must not touch the file system.
#include <string>
#include <vector>

#include "cli_entry_point.hpp"
#include "known_limits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 4096 || prenet::fuzz::too_deep(data, size)) return -1;
    std::vector<std::string> argv =
        prenet::fuzz::argument_lines(std::string(reinterpret_cast<const char*>(data), size));
    for (const auto& line : argv) {
        if (line.find('/') != std::string::npos || line.find(".json") != std::string::npos ||
            (!line.empty() && line[0] == '.'))
            return -1;
        // The same number limits as the JSON targets (known_limits.hpp).
        if (line.find_first_of("0123456789") != std::string::npos) {
            nlohmann::json number = nlohmann::json::parse(line.substr(line.find('=') + 1), nullptr, false);
            if (!number.is_discarded() && prenet::fuzz::out_of_range(number)) return -1;
        }
    }
    if (!argv.empty() && (argv[0] == "fit" || argv[0] == "kernels")) return -1;
    prenet::fuzz::cli_args(argv);
    return 0;
}
