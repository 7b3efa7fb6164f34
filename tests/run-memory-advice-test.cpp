// Memory advice (run/memory_advice.hpp) on a synthetic peak model: peak = fixed + per_sample x batch,
// checkpointing dividing the per-sample part by 8.
#include <gtest/gtest.h>

#include "core/limits.hpp"
#include "hardware/spec.hpp"
#include "run/memory_advice.hpp"

using namespace prenet;

namespace {

PeakAt linear_peak(double fixed, double per_sample) {
    return [=](std::int64_t batch, bool checkpointing) {
        return fixed + (checkpointing ? per_sample / 8 : per_sample) * double(batch);
    };
}

HardwareSpec sheet(const std::string& id, double gb, double price) {
    HardwareSpec h;
    h.id = id;
    h.memory_gb = gb;
    if (price > 0) h.cloud_prices.push_back({price, "cloud", "2025"});
    return h;
}

}  // namespace

TEST(MemoryAdvice, LargestMicroBatchKeepsTheGlobalBatch) {
    PeakAt peak = linear_peak(10e9, 1e9);
    // Capacity 16 GB: micro-batches up to 6 fit; the global batch 32 x 1 has divisors 1, 2, 4, 8, 16, 32.
    auto a = largest_fitting_micro_batch(32, 1, false, 16e9, peak);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->largest_fitting_batch, 6);
    EXPECT_EQ(a->batch, 4);
    EXPECT_EQ(a->grad_accum, 8);
    EXPECT_DOUBLE_EQ(a->peak_bytes, 14e9);
    // Global batch 12 x 2 = 24: divisors up to 6 include 6 itself.
    a = largest_fitting_micro_batch(12, 2, false, 16e9, peak);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->batch, 6);
    EXPECT_EQ(a->grad_accum, 4);
    // Nothing fits even at 1; a micro-batch of 1 cannot shrink.
    EXPECT_FALSE(largest_fitting_micro_batch(32, 1, false, 10.5e9, peak));
    EXPECT_FALSE(largest_fitting_micro_batch(1, 8, false, 1e12, peak));
}

TEST(MemoryAdvice, CheckpointingAndTheSmallestAccelerator) {
    PeakAt peak = linear_peak(10e9, 2e9);
    std::vector<HardwareSpec> catalogue = {sheet("big", 80, 3.0), sheet("mid-pricey", 48, 2.0),
                                           sheet("mid", 48, 1.0), sheet("small", 24, 0.5)};
    AdviceRequest q;
    q.batch = 16, q.grad_accum = 1, q.capacity_bytes = 24e9, q.has_checkpoint_blocks = true;
    q.peak_bytes = peak(16, false);  // 42 GB
    MemoryAdvice a = advise_memory(q, peak, catalogue);
    EXPECT_DOUBLE_EQ(a.over_bytes, 18e9);
    ASSERT_TRUE(a.micro_batch);
    EXPECT_EQ(a.micro_batch->batch, 4);  // 10 + 2 x 7 = 24 fits at 7; the largest divisor of 16 is 4
    ASSERT_TRUE(a.checkpointing);
    EXPECT_TRUE(a.checkpointing->fits);  // 10 + 0.25 x 16 = 14 GB
    EXPECT_DOUBLE_EQ(a.checkpointing->peak_bytes, 14e9);
    ASSERT_TRUE(a.smallest_hardware);
    EXPECT_EQ(a.smallest_hardware->hardware.id, "mid");  // 48 GB holds 42 GB; the cheaper of the two
    EXPECT_EQ(a.smallest_hardware->batch, 16);
    EXPECT_NE(a.summary.find("--batch 4 --grad-accum 4"), std::string::npos) << a.summary;
    EXPECT_NE(a.summary.find("--checkpointing"), std::string::npos) << a.summary;
    EXPECT_NE(a.summary.find("on mid"), std::string::npos) << a.summary;

    // Already checkpointing: no checkpointing advice.
    q.checkpointing = true;
    q.peak_bytes = peak(16, true);
    q.capacity_bytes = 12e9;
    a = advise_memory(q, peak, catalogue);
    EXPECT_FALSE(a.checkpointing);
    ASSERT_TRUE(a.micro_batch);
    EXPECT_EQ(a.micro_batch->batch, 8);  // 10 + 0.25 x 8 = 12 fits
}

TEST(MemoryAdvice, SmallestFootprintWhenNothingHoldsItAsItIs) {
    PeakAt peak = linear_peak(60e9, 20e9);
    std::vector<HardwareSpec> catalogue = {sheet("big", 80, 3.0), sheet("small", 24, 0.5)};
    AdviceRequest q;
    q.batch = 8, q.grad_accum = 2, q.capacity_bytes = 24e9, q.has_checkpoint_blocks = true;
    q.peak_bytes = peak(8, false);  // 220 GB: nothing holds it
    MemoryAdvice a = advise_memory(q, peak, catalogue);
    EXPECT_FALSE(a.micro_batch);  // 60 GB of states alone exceed 24 GB
    ASSERT_TRUE(a.smallest_hardware);
    EXPECT_EQ(a.smallest_hardware->hardware.id, "big");
    EXPECT_EQ(a.smallest_hardware->batch, 1);
    EXPECT_EQ(a.smallest_hardware->grad_accum, 16);
    EXPECT_TRUE(a.smallest_hardware->checkpointing);
    EXPECT_DOUBLE_EQ(a.smallest_hardware->peak_bytes, 62.5e9);
    // Nothing at all: say which parallelism would split it.
    q.peak_bytes = peak(8, false);
    a = advise_memory(q, linear_peak(100e9, 1e9), catalogue);
    EXPECT_FALSE(a.smallest_hardware);
    EXPECT_FALSE(a.fsdp_devices);  // no model states given: nothing for FSDP to shard
    EXPECT_NE(a.summary.find("--gpus N"), std::string::npos) << a.summary;
    // Model states that FSDP can shard: the smallest power of two of devices that leaves room.
    q.model_state_bytes = q.peak_bytes - 0.5 * q.capacity_bytes;
    a = advise_memory(q, linear_peak(100e9, 1e9), catalogue);
    ASSERT_TRUE(a.fsdp_devices);
    double rest = q.peak_bytes - q.model_state_bytes;
    EXPECT_LE(rest + q.model_state_bytes / double(*a.fsdp_devices), q.capacity_bytes);
    EXPECT_GT(rest + q.model_state_bytes / double(*a.fsdp_devices / 2), q.capacity_bytes);
    EXPECT_NE(a.summary.find("--zero 3"), std::string::npos) << a.summary;
}

TEST(MemoryAdvice, FsdpShardingIsProposedUpToTheAdvisedDevices) {
    AdviceRequest q;
    q.batch = 1, q.grad_accum = 1, q.capacity_bytes = 1e9;
    const double rest = 0.5e9;  // activations and buffers: not sharded
    auto fsdp_devices = [&](double model_state_bytes) {
        q.model_state_bytes = model_state_bytes;
        q.peak_bytes = rest + model_state_bytes;
        return advise_memory(q, linear_peak(q.peak_bytes, 0), {}).fsdp_devices;
    };
    // Model states whose shards leave room on exactly the most devices advice proposes, and twice those.
    const double states = 0.5e9 * double(limits::advised_devices);
    ASSERT_TRUE(fsdp_devices(states));
    EXPECT_EQ(*fsdp_devices(states), limits::advised_devices);
    EXPECT_FALSE(fsdp_devices(2 * states));
}
