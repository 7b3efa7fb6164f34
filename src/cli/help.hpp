#pragma once
// `prenet --help` and `prenet <command> --help`, written from the command and option tables (api/options.hpp).
#include <string>

namespace prenet::cli {

std::string main_usage();
std::string command_usage(const std::string& command);  // throws Error for an unknown command

}  // namespace prenet::cli
