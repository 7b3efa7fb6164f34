#include "api/fit_command.hpp"

#include <string>

namespace prenet {

FitOptions fit_options(const nlohmann::json& options) {
    FitOptions o;
    auto text = [&](const char* name, std::string& into) {
        if (options.contains(name)) into = options[name].get<std::string>();
    };
    text("data", o.data_dir);
    text("models_out", o.models_out);
    text("report", o.report_out);
    text("plots", o.plots_dir);
    if (options.contains("rows_per_device")) o.max_rows_per_device = options["rows_per_device"].get<int>();
    text("dump_predictions", o.dump_predictions);
    if (options.contains("trees")) o.gbt.trees = options["trees"].get<int>();
    if (options.contains("without")) o.without = options["without"].get<std::vector<std::string>>();
    text("collectives_out", o.collectives_out);
    text("only", o.only);
    if (o.only == "collectives" && !options.contains("report")) o.report_out.clear();
    return o;
}

void fit_kernel_models(const nlohmann::json& options) { fit_and_validate(fit_options(options)); }

}  // namespace prenet
