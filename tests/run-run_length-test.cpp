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

TEST(RunLength, BatchWarningsPastPublishedRuns) {
    RunLength tokens;
    tokens.tokens = 1e12;
    RunSteps steps = run_steps(tokens, 16384, 4096);  // 64 Mi tokens a step: the bound itself, no warning
    EXPECT_TRUE(batch_warnings(16384, 4096, tokens, &steps).empty());
    steps = run_steps(tokens, 16385, 4096);
    std::vector<std::string> past = batch_warnings(16385, 4096, tokens, &steps);
    ASSERT_EQ(past.size(), 1u);
    EXPECT_NE(past[0].find("16,385 sequences (67.1 million tokens)"), std::string::npos) << past[0];
    // Images: past 65,536 samples.
    RunLength samples;
    samples.samples = 1281167;
    steps = run_steps(samples, 65536, 0);
    EXPECT_TRUE(batch_warnings(65536, 0, samples, &steps).empty());
    steps = run_steps(samples, 65537, 0);
    EXPECT_EQ(batch_warnings(65537, 0, samples, &steps).size(), 1u);
    // Without a run, the batch alone.
    EXPECT_EQ(batch_warnings(65537, 0, RunLength{}, nullptr).size(), 1u);
}

TEST(RunLength, BatchWarningsForARunUnderOneStep) {
    RunLength tokens;
    tokens.tokens = 1e6;
    RunSteps steps = run_steps(tokens, 512, 4096);  // 2.1M tokens a step: one step
    std::vector<std::string> w = batch_warnings(512, 4096, tokens, &steps);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("the run (1 million tokens) is less than one global batch of 512 sequences"), std::string::npos)
        << w[0];
    tokens.tokens = 512 * 4096;  // exactly one step: nothing is off
    steps = run_steps(tokens, 512, 4096);
    EXPECT_TRUE(batch_warnings(512, 4096, tokens, &steps).empty());
}
