#pragma once
// Memory over one training step (`memory.timeline`; docs/training-model.md "Memory over one step"): points in
// time order through the forward pass, the loss, the backward pass in reverse and the optimizer step, each with
// the parts live on the device. It draws the memory model's own parts (run/memory.hpp) over time, so its
// largest point is the model's peak, to the byte: the model places the forward/backward peak at the turn from
// forward to backward (every saved activation alive, the last block's recompute, the largest transient), and
// each other point holds at most as much of every part.
//
// Like the peak, the points follow the model's rules rather than an allocator trace: gradients, weights and
// optimizer states count in full from the start (exact with accumulation, where the last micro-batch is
// shown); the layer transients are the model's one bound for the phase (the largest layer's output and
// gradient, FSDP's gathered units, DDP's buckets, a dequantised weight), held at every forward/backward point;
// the activations between the ends follow the forward's kept bytes stretch by stretch (run/checkpointing.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "run/checkpointing.hpp"
#include "run/memory.hpp"

namespace prenet {

// One micro-batch's forward pass as a device runs it, and how many micro-batches it holds at its peak.
struct ForwardProfile {
    std::vector<KeptStretch> stretches;  // kept_activations of the device's layers (a pipeline stage's)
    double recompute_block = 0;          // ActivationMemory::recompute_block: alive once, in the backward
    // Micro-batches whose activations the device holds at its peak (a pipeline stage's in flight; 1 otherwise):
    // the ones before the current one show as the pipeline's warm-up, and leave in its cool-down.
    double micro_batches_in_flight = 1;
};
ForwardProfile forward_profile(const ModelFeatures& features, Precision precision, CheckpointKind kind,
                               double micro_batches_in_flight = 1);

// What is live at one point, in bytes; the parts add up to `device`.
struct TimelineParts {
    double weights = 0, gradients = 0, optimizer_states = 0;
    double activations = 0;  // saved for the backward (every micro-batch held)
    double buffers = 0;      // transient: layer transients, weight copies, gathered units, optimizer scratch
    double logits = 0;       // the loss's logits and their gradient (loss_temporary), at the backward's start
    double workspace = 0;    // cuBLAS workspaces (inside the allocator)
    double allocator = 0;    // reserved minus allocated: rounding and fragmentation
    double outside = 0;      // CUDA context and NCCL buffers, beside the allocator
};

struct TimelinePoint {
    std::string phase;  // "start", "warmup", "forward", "backward", "cooldown", "optimizer"
    std::string label;  // what has just run (forward) or been differentiated (backward): "blocks 1-4", ...
    TimelineParts parts;
    double allocated = 0, reserved = 0, device = 0;  // DeviceMemory at this point
};

struct MemoryTimeline {
    std::vector<TimelinePoint> points;  // in time order
    // The point of the peak phase (MemoryUse::peak_phase): its allocated, reserved and device totals are the
    // estimate's peak_allocated, peak_reserved and peak, and no point has more of any.
    std::size_t peak_point = 0;
};

// At most this many points for each pass's blocks: a model of hundreds of blocks shows them in groups of
// consecutive copies ("blocks 1-12"), so that the reply stays small and a page recompute stays fast.
constexpr std::size_t kTimelineBlockPoints = 8;
// At most this many points for a pipeline's warm-up and for its cool-down (micro-batches grouped likewise).
constexpr std::size_t kTimelinePipelinePoints = 3;

// `use`: a settled estimate (settle_peak), capacity irrelevant; `reserve`: the one it was settled with.
MemoryTimeline memory_timeline(const MemoryUse& use, const ForwardProfile& profile, const FrameworkReserve& reserve);

}  // namespace prenet
