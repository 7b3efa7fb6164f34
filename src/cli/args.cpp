#include "cli/args.hpp"

#include "core/error.hpp"

namespace prenet::cli {

std::string Args::get(const std::string& name, const std::string& fallback) const {
    auto it = options.find(name);
    return it == options.end() ? fallback : it->second;
}

std::vector<std::string> Args::given() const {
    std::vector<std::string> out;
    for (const auto& [name, value] : options) out.push_back(name);
    out.insert(out.end(), switches.begin(), switches.end());
    return out;
}

Args parse_args(const std::vector<std::string>& argv, const std::set<std::string>& value_options,
                const std::set<std::string>& switch_options,
                const std::map<std::string, std::set<std::string>>& switch_values) {
    Args args;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.rfind("--", 0) != 0) {
            if (args.command.empty()) {
                args.command = a;
                continue;
            }
            throw Error("unexpected argument '" + a + "'");
        }
        std::string name = a.substr(2), value;
        bool inline_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            inline_value = true;
        }
        if (switch_options.count(name)) {
            auto words = switch_values.find(name);
            bool has_words = words != switch_values.end();
            if (inline_value && !(has_words && words->second.count(value)))
                throw Error(has_words ? "option --" + name + " takes no value or one of its words, not '" + value + "'"
                                      : "option --" + name + " takes no value");
            if (!inline_value && has_words && i + 1 < argv.size() && words->second.count(argv[i + 1])) value = argv[++i];
            if (!value.empty()) args.options[name] = value;
            args.switches.insert(name);
        } else if (value_options.count(name)) {
            if (!inline_value) {
                if (i + 1 >= argv.size()) throw Error("option --" + name + " needs a value");
                value = argv[++i];
            }
            if (args.options.count(name)) throw Error("option --" + name + " given twice");
            args.options[name] = value;
        } else {
            throw Error("unknown option --" + name + " (see `prenet " +
                        (args.command.empty() ? std::string("--help") : args.command + " --help") + "`)");
        }
    }
    return args;
}

}  // namespace prenet::cli
