#pragma once
// What the CLI fuzz target (fuzz/cli_args_fuzz.cpp, which skips arguments that could name a file and the known
// classes of known_limits.hpp first) and its regression test (tests/cli-fuzz-regressions-test.cpp, unfiltered) do
// with one input: the text's lines are the arguments, run as `prenet` runs them, the output kept in memory. Bad
// arguments must end as a prenet::Error or an exit status; anything else is a finding. Native only: the wasm
// build has no CLI.
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/error.hpp"

namespace prenet::fuzz {

inline std::vector<std::string> argument_lines(const std::string& text) {
    std::vector<std::string> argv;
    std::string line;
    std::stringstream lines(text);
    while (std::getline(lines, line)) argv.push_back(line);
    return argv;
}

inline void cli_args(const std::vector<std::string>& argv) {
    std::ostringstream out;
    try {
        (void)cli::run(argv, out);
    } catch (const Error&) {
    }
}

}  // namespace prenet::fuzz
