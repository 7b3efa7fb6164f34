// Memory advice (run/memory_advice.hpp) on a synthetic peak model: peak = fixed + per_sample x batch,
// checkpointing dividing the per-sample part by 8.
#include <gtest/gtest.h>

#include <map>

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

// QLoRA needs bitsandbytes' NF4 kernels (hardware/precision_support.hpp: none on TPUs): advice neither offers
// it on a TPU nor names a TPU for it, though the TPU's memory holds it.
TEST(MemoryAdvice, QloraIsNeverAdvisedOnATpu) {
    AdviceRequest q;
    q.batch = 1, q.grad_accum = 1, q.peak_bytes = 40e9, q.capacity_bytes = 24e9;
    FineTuneOption lora{"LoRA rank 16", "--finetune lora --lora-rank 16", 30e9, "lora", 16, false, false};
    FineTuneOption qlora{"QLoRA rank 16", "--finetune qlora --lora-rank 16", 20e9, "qlora", 16, false, true};
    q.finetune_options = {lora, qlora};
    HardwareSpec tpu = sheet("tpu", 32, 1.0), gpu = sheet("gpu", 40, 2.0);
    tpu.kind = "tpu";
    // On a GPU that holds QLoRA's 20 GB: QLoRA here.
    MemoryAdvice a = advise_memory(q, linear_peak(q.peak_bytes, 0), {tpu, gpu});
    ASSERT_TRUE(a.finetune);
    EXPECT_TRUE(a.finetune->fits);
    EXPECT_EQ(a.finetune->option.mode, "qlora");
    // On a TPU: not here; elsewhere, the smallest device that runs NF4 (the 40 GB GPU, not the 32 GB TPU).
    q.nf4_kernels = false;
    a = advise_memory(q, linear_peak(q.peak_bytes, 0), {tpu, gpu});
    ASSERT_TRUE(a.finetune);
    EXPECT_FALSE(a.finetune->fits);
    ASSERT_TRUE(a.finetune->hardware);
    EXPECT_EQ(a.finetune->hardware->id, "gpu");
    EXPECT_EQ(a.summary.find("card (tpu)"), std::string::npos) << a.summary;
    // Only TPUs to choose from: no device is named for it.
    a = advise_memory(q, linear_peak(q.peak_bytes, 0), {tpu});
    ASSERT_TRUE(a.finetune);
    EXPECT_FALSE(a.finetune->fits);
    EXPECT_FALSE(a.finetune->hardware);
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

// ---- Ranked changes (ranked_changes) on a synthetic model, hand-worked ----
namespace {

// peak = states(zero) + per_sample(kind, loss) x batch; step = 100 ms x recompute factor(kind) + 3 ms per extra
// micro-batch of accumulation; the global batch is 8 (batch 8 x accumulation 1).
struct Synthetic {
    double states = 40e9, zero3_states = 10e9;
    std::map<CheckpointKind, double> per_sample = {{CheckpointKind::none, 6e9},
                                                   {CheckpointKind::attention_core, 5e9},
                                                   {CheckpointKind::op_level, 4.5e9},
                                                   {CheckpointKind::full, 1e9},
                                                   {CheckpointKind::offload, 0.5e9}};
    std::map<CheckpointKind, double> time_factor = {{CheckpointKind::none, 1.0},
                                                    {CheckpointKind::attention_core, 1.03},
                                                    {CheckpointKind::op_level, 1.1},
                                                    {CheckpointKind::full, 1.33},
                                                    {CheckpointKind::offload, 1.0}};
    double chunked_saves_per_sample = 0;  // what --loss chunked takes off per sample
    double zero3_ms = 0;                  // what ZeRO-3's gathers add

    ChangeModel model() const {
        ChangeModel m;
        m.memory = [this](const SettingsChange& c) {
            double per = per_sample.at(c.checkpointing.value_or(CheckpointKind::none));
            if (c.loss == LossMode::chunked) per -= chunked_saves_per_sample;
            MemoryUse use;
            use.peak_reserved = (c.zero == 3 ? zero3_states : states) + per * double(c.batch.value_or(8));
            use.peak = use.peak_reserved + 1e9;  // the CUDA context: judged, not reserved
            return use;
        };
        m.step_ms = [this](const SettingsChange& c) {
            return 100 * time_factor.at(c.checkpointing.value_or(CheckpointKind::none)) +
                   3.0 * double(c.grad_accum.value_or(1) - 1) + (c.zero == 3 ? zero3_ms : 0);
        };
        m.flags = [](const SettingsChange& c) {
            std::string f;
            if (c.loss) f += "loss ";
            if (c.checkpointing) f += std::string("ckpt:") + to_string(*c.checkpointing) + " ";
            if (c.batch) f += "batch:" + std::to_string(*c.batch) + " ";
            if (c.zero) f += "zero:" + std::to_string(*c.zero);
            return f;
        };
        return m;
    }
    ChangeRequest request(double capacity) const {
        ChangeRequest q;
        // Capacities below are written for the reserved peak; the device's adds the context.
        q.capacity_bytes = capacity + 1e9, q.step_ms = 100, q.batch = 8, q.grad_accum = 1;
        q.has_checkpoint_blocks = true;
        return q;
    }
};

}  // namespace

TEST(MemoryAdvice, HeavierCheckpointingKindsLightestFirst) {
    using K = CheckpointKind;
    EXPECT_EQ(heavier_checkpointing(K::none),
              (std::vector<K>{K::attention_core, K::op_level, K::full, K::offload}));
    EXPECT_EQ(heavier_checkpointing(K::op_level), (std::vector<K>{K::full, K::offload}));
    EXPECT_TRUE(heavier_checkpointing(K::offload).empty());
}

TEST(MemoryAdvice, OnlyFullCheckpointingFits) {
    Synthetic m;
    m.per_sample[CheckpointKind::none] = 12e9;  // 136 GB as asked; micro-batch 1: 52 GB > 50, no cut fits
    ChangeRequest q = m.request(50e9);
    std::vector<MemoryChange> changes = ranked_changes(q, m.model());
    // attention-core 40 + 40 = 80, op-selective 76: over; full 48 fits; offload (44) is not offered because full fits.
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].change.checkpointing, CheckpointKind::full);
    EXPECT_DOUBLE_EQ(changes[0].peak_reserved_bytes, 48e9);
    EXPECT_DOUBLE_EQ(changes[0].peak_bytes, 49e9);
    EXPECT_DOUBLE_EQ(changes[0].step_ms, 133);
    EXPECT_NEAR(changes[0].step_increase, 0.33, 1e-12);
    EXPECT_EQ(change_text(changes[0]), "ckpt:full : fits at 44.7 GiB reserved, step +33%");
}

TEST(MemoryAdvice, OffloadOnlyWhereNoOnDeviceKindFits) {
    Synthetic m;
    ChangeRequest q = m.request(45e9);  // full: 48 GB over; offload: 44 GB fits; micro-batch 1: 46 over
    std::vector<MemoryChange> changes = ranked_changes(q, m.model());
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].change.checkpointing, CheckpointKind::offload);
}

TEST(MemoryAdvice, ChunkedLossRanksFirstForItCostsNoTime) {
    Synthetic m;
    m.per_sample[CheckpointKind::none] = 3e9;  // 40 + 24 = 64 GB; a large vocabulary's logits: 1.5 GB a sample
    m.chunked_saves_per_sample = 1.5e9;
    ChangeRequest q = m.request(55e9);
    q.has_full_loss_logits = true;
    std::vector<MemoryChange> changes = ranked_changes(q, m.model());
    // chunked: 40 + 12 = 52 fits at +0%; attention-core 80, op-selective 76 over; full 48 fits at +33%;
    // micro-batch: 40 + 3b <= 55 -> b = 5, largest divisor of 8 is 4 (accumulation 2): +3%.
    ASSERT_EQ(changes.size(), 3u);
    EXPECT_EQ(changes[0].change.loss, LossMode::chunked);
    EXPECT_DOUBLE_EQ(changes[0].step_increase, 0);
    EXPECT_EQ(changes[1].change.batch, 4);
    EXPECT_EQ(changes[1].change.grad_accum, 2);
    EXPECT_DOUBLE_EQ(changes[1].step_ms, 103);
    // 5 fits but does not divide 8: the change says why its micro-batch is 4.
    EXPECT_EQ(changes[1].largest_fitting_batch, 5);
    EXPECT_EQ(change_text(changes[1]), "batch:4 : fits at 48.4 GiB reserved, step +3% (4 is the largest micro-batch "
                                       "that divides the global batch of 8; up to 5 fit)");
    EXPECT_EQ(changes[2].change.checkpointing, CheckpointKind::full);
    EXPECT_EQ(changes[2].largest_fitting_batch, 0);  // no micro-batch cut
}

TEST(MemoryAdvice, ZeroThreeOverAMicroBatchCutWhenCheaper) {
    Synthetic m;
    m.per_sample[CheckpointKind::none] = 3e9;  // 64 GB as asked
    ChangeRequest q = m.request(55e9);
    q.has_checkpoint_blocks = false;  // leave checkpointing out of it
    SettingsChange zero3;
    zero3.zero = 3;
    q.more.push_back(zero3);  // 10 + 24 = 34 GB
    m.zero3_ms = 2;           // its gathers: +2%, less than the micro-batch cut's +3%
    std::vector<MemoryChange> changes = ranked_changes(q, m.model());
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].change.zero, 3);
    EXPECT_DOUBLE_EQ(changes[0].peak_reserved_bytes, 34e9);
    EXPECT_EQ(changes[1].change.batch, 4);
    // The rule, not the order tried: ZeRO-3 costing more ranks after the cut.
    m.zero3_ms = 5;
    changes = ranked_changes(q, m.model());
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].change.batch, 4);
    EXPECT_EQ(changes[1].change.zero, 3);
}

TEST(MemoryAdvice, CombinationsOnlyWhereNoSingleChangeFits) {
    Synthetic m;
    m.states = 40e9;
    m.per_sample[CheckpointKind::none] = 12e9;
    m.per_sample[CheckpointKind::offload] = 1e9;  // offload keeps no less than full here
    ChangeRequest q = m.request(44e9);
    // Single: attention-core 80, op-selective 76, full 48, offload 48, micro-batch 1: 52: none fits. Pairs with
    // a micro-batch cut: attention-core 40 + 5b and op-selective 40 + 4.5b fit at no b; full 40 + b <= 44 -> 4
    // (accumulation 2), 133 + 3 ms; offload (the same peak, 103 ms) is not offered since full with the cut fits.
    std::vector<MemoryChange> changes = ranked_changes(q, m.model());
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].change.checkpointing, CheckpointKind::full);
    EXPECT_EQ(changes[0].change.batch, 4);
    EXPECT_EQ(changes[0].change.grad_accum, 2);
    EXPECT_DOUBLE_EQ(changes[0].peak_reserved_bytes, 44e9);
    EXPECT_DOUBLE_EQ(changes[0].step_ms, 136);
    q.combinations = false;
    EXPECT_TRUE(ranked_changes(q, m.model()).empty());
}
