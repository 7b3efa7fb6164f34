// cli/help.hpp: the usage texts come from the command and option tables.
#include "cli/help.hpp"

#include <gtest/gtest.h>

#include "api/options.hpp"
#include "core/error.hpp"

namespace prenet::cli {
namespace {

TEST(Help, TheMainUsageNamesEveryCommand) {
    std::string usage = main_usage();
    for (const auto& c : command_table()) EXPECT_NE(usage.find(c.name), std::string::npos) << c.name;
}

TEST(Help, ACommandsUsageNamesEachOfItsFlags) {
    std::string usage = command_usage("kernels");
    for (const auto& row : option_table()) {
        if (!row.flag.empty() && row.takes(kKernels) && row.name != "version") {
            EXPECT_NE(usage.find("--" + row.flag), std::string::npos) << row.flag;
        }
    }
    EXPECT_THROW(command_usage("no-such-command"), Error);
}

}  // namespace
}  // namespace prenet::cli
