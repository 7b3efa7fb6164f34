// Memory over one step (run/memory_timeline.hpp): hand-worked points, and the largest point is the peak.
#include <gtest/gtest.h>

#include "test-helpers.hpp"

#include <algorithm>

#include "importers/resolve.hpp"
#include "run/memory_timeline.hpp"

using namespace prenet;

namespace {

using prenet::testing::blocks_model;
using prenet::testing::memory_options;

// A two-block model by hand: embeddings keep 10 bytes, each block 100, the head and loss 30.
ForwardProfile two_blocks() {
    ForwardProfile p;
    p.stretches = {{"", 10, 1}, {"block", 100, 2}, {"", 30, 1}};
    return p;
}

// Its estimate: model states 4000, the activations the profile keeps (240), layer transients 55 = the loss's 50
// (larger than the largest layer's 20) + 5 more (a dequantised weight), a 100-byte optimizer scratch.
MemoryUse two_block_use(FrameworkReserve& reserve) {
    MemoryUse m;
    m.weights = 1000, m.gradients = 1000, m.optimizer_states = 2000;
    m.activations = 240;
    m.layer_output = 20, m.loss_temporary = 50, m.dequantization = 5, m.layer_temporary = 55;
    m.optimizer_scratch = 100;
    m.rounded_tensors = 3;  // rounding per tensor is the reserve's (none in the hand-worked cases)
    reserve.library_workspace_bytes = 64;
    settle_peak(m, reserve);
    return m;
}

double largest(const MemoryTimeline& t, double TimelinePoint::*total) {
    double most = 0;
    for (const auto& p : t.points) most = std::max(most, p.*total);
    return most;
}

void expect_peak(const MemoryUse& m, const MemoryTimeline& t) {
    EXPECT_EQ(largest(t, &TimelinePoint::allocated), m.peak_allocated);
    EXPECT_EQ(largest(t, &TimelinePoint::reserved), m.peak_reserved);
    EXPECT_EQ(largest(t, &TimelinePoint::device), m.peak);
    EXPECT_EQ(t.points[t.peak_point].allocated, m.peak_allocated);
    EXPECT_EQ(t.points[t.peak_point].phase, m.peak_phase == "optimizer" ? "optimizer" : "backward");
}

}  // namespace

TEST(MemoryTimeline, TwoBlocksByHand) {
    FrameworkReserve reserve;
    MemoryUse m = two_block_use(reserve);
    ASSERT_EQ(m.peak_allocated, 4000 + 240 + 55 + 64);
    MemoryTimeline t = memory_timeline(m, two_blocks(), reserve);
    std::vector<std::string> labels;
    std::vector<double> activations, allocated;
    for (const auto& p : t.points) {
        labels.push_back(p.phase + " " + p.label);
        activations.push_back(p.parts.activations);
        allocated.push_back(p.allocated);
        // Weights, gradients and states count in full at every point, as the peak counts them (exact with
        // accumulation: the last micro-batch's backward adds into gradients that exist).
        EXPECT_EQ(p.parts.gradients, 1000);
        EXPECT_EQ(p.parts.optimizer_states, 2000);
    }
    EXPECT_EQ(labels, (std::vector<std::string>{
                          "start before the forward pass", "forward layers before the blocks", "forward block 1",
                          "forward block 2", "forward layers after the blocks",
                          "backward backward starts (loss gradient)",
                          "backward layers after the blocks", "backward block 2", "backward block 1",
                          "backward layers before the blocks", "optimizer optimizer step"}));
    // After the forward through block 2 both blocks' activations are held (10 + 100 + 100); after block 2's
    // backward its 100 are freed.
    EXPECT_EQ(activations, (std::vector<double>{0, 10, 110, 210, 240, 240, 210, 110, 10, 0, 0}));
    // Forward/backward points: states 4000 + workspace 64 + activations + buffers (the largest layer's 20 and the
    // other 5); the turn: the loss's 50 in place of the layer's 20; the optimizer: its scratch.
    EXPECT_EQ(allocated, (std::vector<double>{4064, 4099, 4199, 4299, 4329, 4359, 4299, 4199, 4099, 4089, 4164}));
    EXPECT_EQ(t.peak_point, 5u);
    EXPECT_EQ(t.points[5].parts.logits, 50);
    EXPECT_EQ(t.points[5].parts.buffers, 5);
    EXPECT_EQ(t.points[10].parts.buffers, 100);  // the optimizer's scratch
    expect_peak(m, t);
}

TEST(MemoryTimeline, PartsAddUpToTheDevicesTotal) {
    FrameworkReserve reserve = FrameworkReserve::pytorch_default();
    MemoryUse m = two_block_use(reserve);
    for (const auto& p : memory_timeline(m, two_blocks(), reserve).points) {
        const TimelineParts& x = p.parts;
        EXPECT_NEAR(x.weights + x.gradients + x.optimizer_states + x.activations + x.buffers + x.logits + x.workspace,
                    p.allocated, 1e-6);
        EXPECT_NEAR(p.allocated + x.allocator, p.reserved, 1e-6);
        EXPECT_NEAR(p.reserved + x.outside, p.device, 1e-6);
        EXPECT_GT(x.allocator, 0);  // rounding of the persistent tensors at least
    }
}

TEST(MemoryTimeline, AnOptimizerPeakIsTheOptimizerPoint) {
    FrameworkReserve reserve;
    MemoryUse m = two_block_use(reserve);
    m.optimizer_scratch = 1000;
    settle_peak(m, reserve);
    MemoryTimeline t = memory_timeline(m, two_blocks(), reserve);
    EXPECT_EQ(t.peak_point, t.points.size() - 1);
    EXPECT_EQ(t.points.back().allocated, 5064);
    expect_peak(m, t);
}

TEST(MemoryTimeline, APipelineStageWarmsUpAndCoolsDown) {
    FrameworkReserve reserve;
    MemoryUse m = two_block_use(reserve);
    ForwardProfile p = two_blocks();
    p.micro_batches_in_flight = 4;  // 1F1B's first stage of pp 4: three micro-batches held before this one
    m.activations = 4 * 240;
    settle_peak(m, reserve);
    MemoryTimeline t = memory_timeline(m, p, reserve);
    std::vector<double> warmup, cooldown;
    for (const auto& x : t.points) {
        if (x.phase == "warmup") warmup.push_back(x.parts.activations);
        if (x.phase == "cooldown") cooldown.push_back(x.parts.activations);
    }
    EXPECT_EQ(warmup, (std::vector<double>{240, 480, 720}));
    EXPECT_EQ(cooldown, (std::vector<double>{480, 240, 0}));
    EXPECT_EQ(t.points[t.peak_point].parts.activations, 960);
    expect_peak(m, t);
}

TEST(MemoryTimeline, HundredsOfBlocksAreGrouped) {
    ForwardProfile p;
    p.stretches = {{"", 1, 1}, {"layers", 2, 126}, {"", 1, 1}};
    FrameworkReserve reserve;
    MemoryUse m = two_block_use(reserve);
    MemoryTimeline t = memory_timeline(m, p, reserve);
    std::vector<std::string> forward;
    for (const auto& x : t.points)
        if (x.phase == "forward") forward.push_back(x.label);
    // 126 copies in groups of ceil(126 / 8) = 16: 7 groups of 16 and one of 14.
    EXPECT_EQ(forward.size(), 2 + kTimelineBlockPoints);
    EXPECT_EQ(forward[1], "blocks 1-16");
    EXPECT_EQ(forward[8], "blocks 113-126");
    EXPECT_LE(t.points.size(), 2 * (2 + kTimelineBlockPoints) + 3);
}

TEST(MemoryTimeline, LargestPointIsThePeakUnderEveryCheckpointingKind) {
    ModelFeatures f = compute_features(resolve_model("gpt2", ModelInputs{2, 256, 0}), Precision::bf16);
    for (CheckpointKind kind : {CheckpointKind::none, CheckpointKind::attention_core, CheckpointKind::op_level,
                                CheckpointKind::full, CheckpointKind::offload})
        for (std::int64_t accumulation : {1, 4}) {
            SCOPED_TRACE(std::string(to_string(kind)) + " x" + std::to_string(accumulation));
            MemoryOptions o = memory_options(Precision::bf16, "adamw");
            o.checkpointing = kind == CheckpointKind::full;
            o.other_checkpointing = o.checkpointing ? CheckpointKind::none : kind;
            o.grad_accum = accumulation;
            o.reserve = FrameworkReserve::pytorch_default();
            MemoryUse m = estimate_memory(f, o);
            MemoryTimeline t = memory_timeline(m, forward_profile(f, o.precision, kind), o.reserve);
            expect_peak(m, t);
            // Time order: forward activations only grow, backward ones only shrink.
            for (size_t i = 1; i < t.points.size(); ++i) {
                const auto &a = t.points[i - 1], &b = t.points[i];
                if (a.phase == "forward" && b.phase == "forward") EXPECT_GE(b.parts.activations, a.parts.activations);
                if (a.phase == "backward" && b.phase == "backward") EXPECT_LE(b.parts.activations, a.parts.activations);
            }
        }
}

TEST(MemoryTimeline, KeptStretchesFollowTheModelsOrder) {
    ModelFeatures f = compute_features(blocks_model(8), Precision::bf16);
    std::vector<KeptStretch> s = kept_activations(f, Precision::bf16, CheckpointKind::full);
    ASSERT_EQ(s.size(), 3u);  // input linear, 6 copies of the block, head
    EXPECT_EQ(s[0].name, "");
    EXPECT_EQ(s[1].name, "layers");
    EXPECT_EQ(s[1].copies, 6);
    EXPECT_EQ(s[1].kept_per_copy, 8.0 * 64 * 256 * 2);  // full: the block's bf16 input only
    ActivationMemory a = activation_memory(f, Precision::bf16, CheckpointKind::full);
    EXPECT_DOUBLE_EQ(s[0].kept_per_copy + 6 * s[1].kept_per_copy + s[2].kept_per_copy + a.recompute_block, a.saved);
}
