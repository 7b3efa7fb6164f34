#include "run/memory_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace prenet {

ForwardProfile forward_profile(const ModelFeatures& features, Precision precision, CheckpointKind kind,
                               double micro_batches_in_flight) {
    ForwardProfile p;
    p.stretches = kept_activations(features, precision, kind);
    p.recompute_block = activation_memory(features, precision, kind).recompute_block;
    p.micro_batches_in_flight = std::max(1.0, micro_batches_in_flight);
    return p;
}

namespace {

// One forward point's worth of the profile: a stretch of layers outside blocks, or a group of block copies.
struct Group {
    std::string label;
    double kept = 0;
    bool blocks = false;
};

std::string blocks_label(std::int64_t first, std::int64_t last) {
    return first == last ? "block " + std::to_string(first)
                         : "blocks " + std::to_string(first) + "-" + std::to_string(last);
}

// The profile's stretches as forward points: hundreds of block copies become at most kTimelineBlockPoints groups
// of consecutive copies; each stretch of layers outside blocks is a point of its own.
std::vector<Group> forward_groups(const std::vector<KeptStretch>& stretches) {
    std::int64_t copies = 0;
    for (const auto& s : stretches)
        if (!s.name.empty()) copies += s.copies;
    const std::int64_t per_group =
        std::max<std::int64_t>(1, (copies + std::int64_t(kTimelineBlockPoints) - 1) / std::int64_t(kTimelineBlockPoints));
    std::vector<Group> out;
    std::int64_t done = 0, in_group = 0;
    double group_kept = 0;
    auto close_group = [&] {
        if (in_group == 0) return;
        out.push_back({blocks_label(done - in_group + 1, done), group_kept, true});
        in_group = 0, group_kept = 0;
    };
    for (const auto& s : stretches) {
        if (s.name.empty()) {
            close_group();
            const char* where = copies == 0 ? "layers" : done == 0 ? "layers before the blocks"
                                                      : done == copies ? "layers after the blocks" : "layers between blocks";
            out.push_back({where, s.kept_per_copy * double(s.copies), false});
            continue;
        }
        for (std::int64_t left = s.copies; left > 0;) {
            std::int64_t take = std::min(left, per_group - in_group);
            group_kept += double(take) * s.kept_per_copy;
            in_group += take, done += take, left -= take;
            if (in_group == per_group) close_group();
        }
    }
    close_group();
    return out;
}

std::string micro_batches_label(double n) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g micro-batch%s held", n, n == 1.0 ? "" : "es");
    return buf;
}

}  // namespace

MemoryTimeline memory_timeline(const MemoryUse& use, const ForwardProfile& profile, const FrameworkReserve& reserve) {
    MemoryTimeline t;
    const double states = model_state_bytes(use);
    // The layer transients but the loss's: the model's bound for the forward and backward passes' buffers.
    const double other_transients = std::max(0.0, use.layer_temporary - std::max(use.layer_output, use.loss_temporary));
    const double layer_buffers = std::min(use.layer_temporary, other_transients + use.layer_output);

    auto add = [&](const char* phase, std::string label, double activations, double copies, double working,
                   double logits, double transient) {
        TimelinePoint p;
        p.phase = phase;
        p.label = std::move(label);
        DeviceMemory d = device_memory(states, transient, use, reserve);
        p.allocated = d.allocated, p.reserved = d.reserved, p.device = d.device;
        TimelineParts& parts = p.parts;
        parts.weights = use.weights;
        parts.gradients = use.gradients;
        parts.optimizer_states = use.optimizer_paged ? 0.0 : use.optimizer_states;
        parts.activations = activations;
        parts.logits = logits;
        parts.buffers = copies + working - logits;
        parts.workspace = reserve.library_workspace_bytes;
        parts.allocator = d.reserved - d.allocated;
        parts.outside = d.device - d.reserved;
        t.points.push_back(std::move(p));
    };
    // A forward/backward point: `activations` and `working` never above the turn's, so never above the peak
    // (rounding is monotone: the sums below are the turn's, term by term no larger).
    auto pass_point = [&](const char* phase, std::string label, double activations) {
        activations = std::min(activations, use.activations);
        add(phase, std::move(label), activations, use.weight_copies, layer_buffers, 0.0,
            activations + use.weight_copies + layer_buffers);
    };

    const std::vector<Group> groups = forward_groups(profile.stretches);
    double kept = 0;  // one micro-batch's, over the whole forward
    for (const auto& g : groups) kept += g.kept;
    const double earlier = profile.micro_batches_in_flight - 1.0;  // held from before the current micro-batch
    const double others = earlier * kept;
    const double whole = others + kept + profile.recompute_block;
    // The model's activations at the peak, shared out in proportion to the profile's bytes (they differ where the
    // model counts more than the profile: the loss's logits, a stage's chunks in flight).
    auto live = [&](double bytes) { return whole > 0 ? use.activations * (bytes / whole) : 0.0; };
    const std::size_t pipeline_points = std::size_t(std::min<double>(double(kTimelinePipelinePoints), std::ceil(earlier)));

    add("start", "before the forward pass", 0.0, 0.0, 0.0, 0.0, 0.0);
    for (std::size_t i = 1; i <= pipeline_points; ++i) {
        double held = earlier * double(i) / double(pipeline_points);
        pass_point("warmup", micro_batches_label(held), live(held * kept));
    }
    double done = 0;
    for (const auto& g : groups) {
        done += g.kept;
        pass_point("forward", g.label, live(others + done));
    }
    // The turn: the model's forward/backward peak, every part at its bound (forward_backward_bytes, as settle_peak).
    double logits = use.loss_temporary >= use.layer_output ? std::min(use.loss_temporary, use.layer_temporary) : 0.0;
    const std::size_t turn = t.points.size();
    add("backward", "backward starts (loss gradient)", use.activations,
        use.weight_copies, use.layer_temporary, logits, forward_backward_bytes(use));
    // Backward in reverse: after each group its kept activations are freed; the next block down is recomputed
    // (full, per-op, offload) while blocks remain.
    for (std::size_t j = groups.size(); j-- > 0;) {
        done -= groups[j].kept;
        bool blocks_left = std::any_of(groups.begin(), groups.begin() + std::ptrdiff_t(j), [](const Group& g) { return g.blocks; });
        pass_point("backward", groups[j].label, live(others + std::max(0.0, done) + (blocks_left ? profile.recompute_block : 0.0)));
    }
    for (std::size_t i = 1; i <= pipeline_points; ++i) {
        double held = earlier * double(pipeline_points - i) / double(pipeline_points);
        pass_point("cooldown", micro_batches_label(held), live(held * kept));
    }
    add("optimizer", "optimizer step", 0.0, 0.0, use.optimizer_scratch, 0.0, use.optimizer_scratch);

    // The peak phase's point is the model's peak: its totals are the estimate's own (the same device_memory sum,
    // or that sum plus a DualPipe mirror stage's model states, pipeline.hpp). No point exceeds them; a mirror's
    // states added in another order could by a rounding step, which the bound takes back.
    t.peak_point = use.peak_phase == "optimizer" ? t.points.size() - 1 : turn;
    for (auto& p : t.points) {
        p.allocated = std::min(p.allocated, use.peak_allocated);
        p.reserved = std::min(p.reserved, use.peak_reserved);
        p.device = std::min(p.device, use.peak);
    }
    TimelinePoint& peak = t.points[t.peak_point];
    peak.allocated = use.peak_allocated, peak.reserved = use.peak_reserved, peak.device = use.peak;
    peak.parts.allocator = peak.reserved - peak.allocated;
    peak.parts.outside = peak.device - peak.reserved;
    return t;
}

}  // namespace prenet
