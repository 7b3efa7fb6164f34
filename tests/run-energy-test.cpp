// Power and energy of a step (run/energy.hpp).
#include "run/energy.hpp"

#include <gtest/gtest.h>

#include "hardware/spec.hpp"
#include "run/run_estimate.hpp"
#include "run/run_length.hpp"

using namespace prenet;

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

TEST(Energy, MatrixTimeDrawsAPowerLimitBelowTheTdp) {
    StepTime t;
    t.forward_ms = 100;
    t.matmul_ms = 50;  // half the step in matrix-unit kernels
    HardwareSpec h100 = find_hardware("h100-sxm5-80gb");
    EXPECT_DOUBLE_EQ(average_power_w(h100, t), 700 * 0.65);  // 455 W
    h100.power_limit_w = 500;  // the rest at 30% of the 700 W TDP, matrix time at 500 W: 105 + 250
    EXPECT_NEAR(average_power_w(h100, t), 0.5 * 0.3 * 700 + 0.5 * 500, 1e-9);
    h100.power_limit_w = 900;  // above the TDP: no change
    EXPECT_DOUBLE_EQ(average_power_w(h100, t), 700 * 0.65);
}

TEST(Energy, TheFormulaInWordsIsMadeFromItsConstant) {
    EXPECT_EQ(energy_model_text(), "TDP x (0.3 + 0.7 x share of step time in matmul/conv kernels), accelerator only");
    StepTime idle;
    idle.forward_ms = 1;
    EXPECT_DOUBLE_EQ(power_share(idle), kBasePowerShare);  // the 0.3 the words say
}
