// run/overhead.hpp: the framework's step overhead, with hand-worked numbers, and the fitted file that ships.
#include "run/overhead.hpp"

#include <gtest/gtest.h>

#include "core/limits.hpp"

namespace prenet {
namespace {

OverheadModel example() {
    OverheadModel m;
    m.launch_gap_ms = 0.01;  // 10 us per launch
    m.step_fixed_ms = 5;
    m.overlap_loss = 0.25;
    return m;
}

TEST(Overhead, IsLaunchGapsPlusTheFixedCostPlusTheLostShareOfHiddenCommunication) {
    // 1,000 launches x 0.01 ms = 10 ms, + 5 ms per step, + 0.25 x 40 ms hidden = 10 ms: 25 ms.
    EXPECT_DOUBLE_EQ(overhead_ms(example(), 1000, 40), 25.0);
    EXPECT_DOUBLE_EQ(launch_and_step_ms(example(), 1000), 15.0);
    EXPECT_DOUBLE_EQ(overlap_loss_ms(example(), 40), 10.0);
    EXPECT_DOUBLE_EQ(overlap_loss_ms(example(), -1), 0.0);  // nothing hidden, nothing lost
}

TEST(Overhead, NoneAddsNothing) {
    OverheadModel none = overhead_for("none");
    EXPECT_FALSE(none.on());
    EXPECT_EQ(overhead_ms(none, 1e6, 1e3), 0.0);
    EXPECT_THROW(overhead_for("some"), Error);
}

TEST(Overhead, ReadsItsThreeParametersAndRefusesAMissingOrOutOfRangeOne) {
    nlohmann::json doc = {{"parameters",
                           {{"launch_gap_ms", {{"value", 0.01}}},
                            {"step_fixed_ms", {{"value", 5}}},
                            {"overlap_loss", {{"value", 0.25}}}}}};
    OverheadModel m = overhead_from_json(doc);
    EXPECT_DOUBLE_EQ(m.launch_gap_ms, 0.01);
    EXPECT_DOUBLE_EQ(m.step_fixed_ms, 5.0);
    EXPECT_DOUBLE_EQ(m.overlap_loss, 0.25);
    nlohmann::json bad = doc;
    bad["parameters"]["overlap_loss"]["value"] = 1.5;  // more than all of the hidden time
    EXPECT_THROW(overhead_from_json(bad), Error);
    bad = doc;
    bad["parameters"].erase("step_fixed_ms");
    EXPECT_THROW(overhead_from_json(bad), Error);
}

TEST(Overhead, WarnsWhereKernelsAverageLessThanAHostTakesToIssueThem) {
    // 1,000 kernels in 40 ms: 40 us each, under the 50 us bound; in 60 ms, 60 us each, over it.
    std::string warning = host_pace_warning(40, 1000, false);
    EXPECT_NE(warning.find("average 40 µs"), std::string::npos) << warning;
    EXPECT_EQ(host_pace_warning(60, 1000, false), "");
    EXPECT_EQ(host_pace_warning(kHostBoundKernelMs * 1000, 1000, false), "");  // the bound itself is not under it
    // A compiled program has no Python per op; a step without kernels or time has nothing to say.
    EXPECT_EQ(host_pace_warning(40, 1000, true), "");
    EXPECT_EQ(host_pace_warning(40, 0, false), "");
    EXPECT_EQ(host_pace_warning(0, 1000, false), "");
}

TEST(Overhead, TheShippedFileParsesAndIsWhatFittedMeans) {
    nlohmann::json doc = nlohmann::json::parse(read_text_file(std::string(PRENET_SOURCE_DIR) + "/models/overhead.json"));
    OverheadModel file = overhead_from_json(doc);
    const OverheadModel& fitted = overhead_for("fitted");
    EXPECT_EQ(fitted.launch_gap_ms, file.launch_gap_ms);
    EXPECT_EQ(fitted.step_fixed_ms, file.step_fixed_ms);
    EXPECT_EQ(fitted.overlap_loss, file.overlap_loss);
    EXPECT_TRUE(fitted.on());
    // How it was fitted travels with it.
    for (const char* key : {"fitted_on", "command", "date"}) EXPECT_TRUE(doc.contains(key)) << key;
}

}  // namespace
}  // namespace prenet
