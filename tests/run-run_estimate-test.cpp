// Run length, time, cost and energy (run/run_length.hpp, run/run_estimate.hpp, run/energy.hpp).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "run/energy.hpp"
#include "run/run_estimate.hpp"
#include "run/run_length.hpp"

using namespace prenet;

TEST(RunEstimate, HoursCostAndEnergy) {
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    StepTime t;
    t.forward_ms = 360;  // 0.36 s per step
    t.matmul_ms = 180;
    RunSteps steps;
    steps.steps = 10'000;
    RunEstimate e = estimate_run(steps, t, h100, -1);
    EXPECT_DOUBLE_EQ(e.hours, 1.0);
    EXPECT_DOUBLE_EQ(e.gpu_hours, 1.0);
    EXPECT_TRUE(e.price_known);
    EXPECT_DOUBLE_EQ(e.price_per_hour, h100.price_per_hour());
    EXPECT_DOUBLE_EQ(e.cost_usd, h100.price_per_hour());
    EXPECT_DOUBLE_EQ(e.average_power_w, h100.tdp_w * 0.65);
    EXPECT_DOUBLE_EQ(e.energy_kwh, h100.tdp_w * 0.65 / 1000.0);
    // An override, including zero (hardware you own), replaces the sheet's price.
    EXPECT_DOUBLE_EQ(estimate_run(steps, t, h100, 2.5).cost_usd, 2.5);
    RunEstimate free = estimate_run(steps, t, h100, 0.0);
    EXPECT_TRUE(free.price_known);
    EXPECT_DOUBLE_EQ(free.cost_usd, 0);
    // No price on the sheet and no override: unknown.
    HardwareSpec unpriced = h100;
    unpriced.cloud_prices.clear();
    EXPECT_FALSE(estimate_run(steps, t, unpriced, -1).price_known);
    // Two devices double the GPU-hours, the cost and the energy, not the hours.
    RunEstimate two = estimate_run(steps, t, h100, 1.0, 2);
    EXPECT_DOUBLE_EQ(two.hours, 1.0);
    EXPECT_DOUBLE_EQ(two.gpu_hours, 2.0);
    EXPECT_DOUBLE_EQ(two.cost_usd, 2.0);
    EXPECT_DOUBLE_EQ(two.energy_kwh, 2 * e.energy_kwh);
}
