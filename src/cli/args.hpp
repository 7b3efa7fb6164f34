#pragma once
// Minimal command-line parsing: `prenet <command> [--flag value | --switch]...`, every error an Error.
#include <map>
#include <set>
#include <string>
#include <vector>

namespace prenet::cli {

struct Args {
    std::string command;
    std::map<std::string, std::string> options;  // --name value
    std::set<std::string> switches;              // --json, --help
    bool has(const std::string& name) const { return options.count(name) || switches.count(name); }
    std::string get(const std::string& name, const std::string& fallback = "") const;
    std::vector<std::string> given() const;  // every flag given, options and switches
};

// `value_options` take a value; `switch_options` do not, except one of their `switch_values` words
// (`--checkpointing selective`, kept in `options`). Unknown flags are errors.
Args parse_args(const std::vector<std::string>& argv, const std::set<std::string>& value_options,
                const std::set<std::string>& switch_options,
                const std::map<std::string, std::set<std::string>>& switch_values = {});

}  // namespace prenet::cli
