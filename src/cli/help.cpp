#include "cli/help.hpp"

#include <sstream>

#include "api/options.hpp"
#include "core/error.hpp"

namespace prenet::cli {
namespace {

constexpr size_t kFlagColumn = 24, kWidth = 112;

// Words of `text` wrapped at kWidth, continuation lines indented to the help column.
void wrap(std::ostringstream& out, const std::string& text, size_t column) {
    std::istringstream words(text);
    size_t at = column;
    bool first = true;
    for (std::string w; words >> w;) {
        if (!first && at + 1 + w.size() > kWidth) {
            out << "\n" << std::string(kFlagColumn, ' ');
            at = kFlagColumn;
            first = true;
        }
        if (!first) out << ' ', ++at;
        out << w;
        at += w.size();
        first = false;
    }
    out << "\n";
}

}  // namespace

std::string main_usage() {
    std::ostringstream out;
    out << "prenet: predicts deep-learning training time, memory and cost on accelerators.\n\n"
        << "Usage: prenet <command> [options]\n\nCommands:\n";
    for (const auto& c : command_table()) {
        std::string name = c.name;
        out << "  " << name << std::string(name.size() < 11 ? 11 - name.size() : 1, ' ') << c.summary << "\n";
    }
    out << "\n`prenet <command> --help` describes each command's options.\n";
    return out.str();
}

std::string command_usage(const std::string& command) {
    const CommandDef* c = find_command(command);
    if (!c) throw Error("unknown command '" + command + "' (see `prenet --help`)", ErrorCode::unknown_command);
    std::ostringstream out;
    out << "Usage: prenet " << c->name << " " << c->synopsis << "\n\n" << c->epilogue << "\n";
    for (const auto& row : option_table()) {
        if (row.flag.empty() || !row.takes(c->bit) || row.name == "version") continue;
        std::string left = "  --" + row.flag + (row.metavar.empty() ? "" : " " + row.metavar);
        std::string help = row.help;
        if (!row.default_text.empty() && row.default_text != "required" && !row.is_switch())
            help += " (default: " + row.default_text +
                    (row.cluster_default_text.empty() ? "" : "; on a cluster question " + row.cluster_default_text) +
                    ")";
        if (row.default_text == "required") help += " (required)";
        if (left.size() + 1 > kFlagColumn) {
            out << left << "\n" << std::string(kFlagColumn, ' ');
        } else {
            out << left << std::string(kFlagColumn - left.size(), ' ');
        }
        wrap(out, help, kFlagColumn);
    }
    return out.str();
}

}  // namespace prenet::cli
