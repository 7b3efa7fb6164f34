// The sustained matrix clock (hardware/clocks.hpp, docs/clocks.md): the power-limit formula with hand-worked
// numbers, and which sheet facts move the factor.
#include <gtest/gtest.h>

#include <cmath>

#include "hardware/clocks.hpp"

using namespace prenet;
using nlohmann::json;

namespace {

// The H100 SXM sheet as a user copies it, with a host's power limit.
HardwareSpec h100_limited(double limit_w) {
    HardwareSpec h = find_hardware("h100-sxm5-80gb");
    h.power_limit_w = limit_w;
    return h;
}

}  // namespace

TEST(PowerLimitedClock, CubeRootAboveTheBaseClock) {
    // 1,830 MHz at 700 W capped at 600 W: 1830 x (600/700)^(1/3) = 1830 x 0.94991 = 1738.3 MHz.
    EXPECT_NEAR(power_limited_clock_mhz(1830, 1665, 700, 600), 1738.34, 0.01);
    // No base clock published: the cube root all the way, 1830 x (500/700)^(1/3) = 1830 x 0.89390 = 1635.8.
    EXPECT_NEAR(power_limited_clock_mhz(1830, 0, 700, 500), 1635.84, 0.01);
}

TEST(PowerLimitedClock, LinearBelowTheBaseClock) {
    // 500 W: the cube root gives 1635.8 MHz, under the 1,665 MHz base. The base clock draws
    // 700 x (1665/1830)^3 = 527.21 W; from there f ~ P: 1665 x 500 / 527.21 = 1579.05 MHz.
    EXPECT_NEAR(power_limited_clock_mhz(1830, 1665, 700, 500), 1579.05, 0.01);
    // Continuous at the base clock's own power.
    double base_power = 700 * std::pow(1665.0 / 1830.0, 3);
    EXPECT_NEAR(power_limited_clock_mhz(1830, 1665, 700, base_power), 1665, 1e-9);
}

TEST(PowerLimitedClock, NoLimitOrALimitAtOrAboveTdpChangesNothing) {
    EXPECT_DOUBLE_EQ(power_limited_clock_mhz(1830, 1665, 700, 0), 1830);
    EXPECT_DOUBLE_EQ(power_limited_clock_mhz(1830, 1665, 700, 700), 1830);
    EXPECT_DOUBLE_EQ(power_limited_clock_mhz(1830, 1665, 700, 900), 1830);
    EXPECT_DOUBLE_EQ(power_limited_clock_mhz(1830, 1665, 0, 500), 1830);  // no TDP
}

TEST(SustainedMatrixClock, CatalogueH100AtItsTdpIsUnchanged) {
    SustainedClock c = sustained_matrix_clock(find_hardware("h100-sxm5-80gb"));
    EXPECT_DOUBLE_EQ(c.reference_mhz, 1830);  // the tensor peaks' clock, not the 1,980 MHz boost
    EXPECT_DOUBLE_EQ(c.factor, 1.0);
    EXPECT_FALSE(c.shown);
}

TEST(SustainedMatrixClock, H100At500WRunsMatrixKernelsAt86Percent) {
    SustainedClock c = sustained_matrix_clock(h100_limited(500));
    EXPECT_NEAR(c.sustained_mhz, 1579.05, 0.01);
    EXPECT_NEAR(c.factor, 1579.05 / 1830, 1e-5);  // 0.8629
    EXPECT_TRUE(c.shown);
    EXPECT_NE(c.basis.find("500 W"), std::string::npos) << c.basis;
}

TEST(SustainedMatrixClock, LimitAboveTdpIsShownButChangesNothing) {
    SustainedClock c = sustained_matrix_clock(h100_limited(800));
    EXPECT_DOUBLE_EQ(c.factor, 1.0);
    EXPECT_TRUE(c.shown);
    EXPECT_NE(c.basis.find("changes nothing"), std::string::npos) << c.basis;
}

TEST(SustainedMatrixClock, PublishedSustainedClockIsTheClockAtTdp) {
    HardwareSpec h = find_hardware("h100-sxm5-80gb");
    h.sustained_matrix_clock_mhz = 1755;  // a hypothetical published measurement
    SustainedClock c = sustained_matrix_clock(h);
    EXPECT_NEAR(c.factor, 1755.0 / 1830.0, 1e-12);  // 0.959
    EXPECT_TRUE(c.shown);
    h.power_limit_w = 600;  // and a limit scales from it: 1755 x (600/700)^(1/3) = 1667.1, above the base
    EXPECT_NEAR(sustained_matrix_clock(h).sustained_mhz, 1755 * std::cbrt(600.0 / 700.0), 1e-9);
}

TEST(SustainedMatrixClock, ASheetWithoutClockFactsKeepsFactorOne) {
    HardwareSpec h = parse_hardware(json{{"id", "bare"},
                                         {"peak_tflops", {{"bf16", 100}}},
                                         {"memory", {{"capacity_gb", 16}, {"bandwidth_gbps", 500}}},
                                         {"power", {{"tdp_w", 300}, {"limit_w", 200}}}},
                                    "test sheet");
    SustainedClock c = sustained_matrix_clock(h);
    EXPECT_DOUBLE_EQ(c.factor, 1.0);
    EXPECT_TRUE(c.shown);
    EXPECT_NE(c.basis.find("no clock"), std::string::npos) << c.basis;
    // A limit on a sheet with a clock but no TDP: ignored, and said so.
    HardwareSpec no_tdp = h100_limited(500);
    no_tdp.tdp_w = 0;
    SustainedClock d = sustained_matrix_clock(no_tdp);
    EXPECT_DOUBLE_EQ(d.factor, 1.0);
    EXPECT_NE(d.basis.find("no TDP"), std::string::npos) << d.basis;
}
