#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace prenet::cli {

// Runs one CLI invocation; returns the exit status. Throws prenet::Error for bad input.
int run(const std::vector<std::string>& argv, std::ostream& out);

}  // namespace prenet::cli
