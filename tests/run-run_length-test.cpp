// Optimizer steps of a run (run/run_length.hpp).
#include "run/run_length.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

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
