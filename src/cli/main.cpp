// The `prenet` command: parses flags into an API request (src/api), prints the reply as JSON or a table.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/api.hpp"
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"

using nlohmann::json;
using namespace prenet;

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        return cli::run(args, std::cout);
    } catch (const std::bad_alloc&) {
        std::cerr << "prenet: error: out of memory: the input is too large to evaluate (limits: docs/limits.md)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "prenet: error: " << cli::terminal_safe(e.what()) << "\n";
        return 2;
    }
}
