// api/fit_command.hpp: the fit's options by their option-table names, over the fit's own defaults.
#include "api/fit_command.hpp"

#include <gtest/gtest.h>

namespace prenet {
namespace {

TEST(FitCommand, AbsentOptionsKeepTheFitsDefaults) {
    FitOptions given = fit_options(nlohmann::json::object()), defaults;
    EXPECT_EQ(given.data_dir, defaults.data_dir);
    EXPECT_EQ(given.report_out, defaults.report_out);
    EXPECT_EQ(given.max_rows_per_device, defaults.max_rows_per_device);
    EXPECT_EQ(given.gbt.trees, defaults.gbt.trees);
}

TEST(FitCommand, OptionsByName) {
    FitOptions o = fit_options({{"data", "d"}, {"models_out", "m.json"}, {"rows_per_device", 10}, {"trees", 3},
                                {"without", {"v100", "a100"}}, {"only", "kernels"}});
    EXPECT_EQ(o.data_dir, "d");
    EXPECT_EQ(o.models_out, "m.json");
    EXPECT_EQ(o.max_rows_per_device, 10);
    EXPECT_EQ(o.gbt.trees, 3);
    EXPECT_EQ(o.without, (std::vector<std::string>{"v100", "a100"}));
    EXPECT_FALSE(o.report_out.empty());
}

TEST(FitCommand, TheCollectivesAloneWriteNoReportUnlessNamed) {
    EXPECT_TRUE(fit_options({{"only", "collectives"}}).report_out.empty());
    EXPECT_EQ(fit_options({{"only", "collectives"}, {"report", "r.md"}}).report_out, "r.md");
}

}  // namespace
}  // namespace prenet
