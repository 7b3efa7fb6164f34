// Run length, time, cost and energy (run/run_length.hpp, run/run_estimate.hpp, run/energy.hpp).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "run/energy.hpp"
#include "run/run_estimate.hpp"
#include "run/run_length.hpp"

using namespace prenet;

TEST(RunLength, StepsFromSamplesEpochsOrTokens) {
    RunLength samples;
    samples.samples = 1'281'167;  // ImageNet
    samples.epochs = 90;
    RunSteps s = run_steps(samples, 1024, 0);
    EXPECT_EQ(s.steps, 112'603);  // ceil(1281167 x 90 / 1024)
    EXPECT_DOUBLE_EQ(s.samples, 112'603.0 * 1024);
    EXPECT_DOUBLE_EQ(s.tokens, 0);
    samples.epochs = 0;  // one epoch by default
    EXPECT_EQ(run_steps(samples, 1000, 0).steps, 1282);

    RunLength tokens;
    tokens.tokens = 2e12;
    RunSteps t = run_steps(tokens, 8 * 4, 8192);  // 262144 tokens per step
    EXPECT_EQ(t.steps, 7'629'395);
    EXPECT_GE(t.tokens, 2e12);
    EXPECT_LT(t.tokens - 2e12, 262144);
}

TEST(RunLength, BadCombinations) {
    RunLength tokens;
    tokens.tokens = 1e9;
    EXPECT_THROW(run_steps(tokens, 32, 0), Error);  // no tokens per sample
    RunLength both = tokens;
    both.samples = 100;
    EXPECT_THROW(run_steps(both, 32, 128), Error);
    RunLength epochs_only;
    epochs_only.epochs = 3;
    EXPECT_THROW(run_steps(epochs_only, 32, 0), Error);
    EXPECT_THROW(run_steps(RunLength{}, 32, 0), Error);
    RunLength huge;
    huge.samples = 1e18;
    huge.epochs = 10;
    EXPECT_THROW(run_steps(huge, 1, 0), Error);  // 1e19 steps
    huge.epochs = 1;
    EXPECT_EQ(run_steps(huge, 1, 0).steps, 1'000'000'000'000'000'000);
}

TEST(Energy, PowerFollowsTheMatmulShare) {
    StepTime t;
    t.forward_ms = 100;
    t.matmul_ms = 100;
    EXPECT_DOUBLE_EQ(power_share(t), 1.0);
    t.matmul_ms = 0;
    EXPECT_DOUBLE_EQ(power_share(t), 0.3);
    t.matmul_ms = 50;
    EXPECT_DOUBLE_EQ(power_share(t), 0.65);
    t.input_stall_ms = 100;  // waiting for input counts as not-matmul time
    EXPECT_DOUBLE_EQ(power_share(t), 0.3 + 0.7 * 0.25);
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    EXPECT_DOUBLE_EQ(average_power_w(h100, t), h100.tdp_w * (0.3 + 0.7 * 0.25));
    HardwareSpec no_tdp = h100;
    no_tdp.tdp_w = 0;
    EXPECT_DOUBLE_EQ(average_power_w(no_tdp, t), 0);
}

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
