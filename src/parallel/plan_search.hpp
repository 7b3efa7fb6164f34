#pragma once
// The plan search (docs/parallel.md): every layout the request leaves open, under dp x tp x pp x cp = gpus,
// pruned by memory first (no kernel is timed for a layout that does not fit) and then by a lower bound of
// its step time (step_lower_bound_ms: its slowest stage's kernels and exposed communication), timed lowest bound first until the bound
// passes the runners-up kept; the fastest that fits wins, by time per sample. Deterministic: ties go to fewer pipeline stages, then less tensor parallelism, lower ZeRO,
// less recomputation, larger micro-batches, in that order.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parallel/parallel_step.hpp"

namespace prenet {

struct PlanAlternative {
    ParallelStep step;
    bool fits = true;
    std::string loses_on;  // "memory", "bubble", "exposed communication" or "compute"
    std::string why;       // in words, with the numbers
};

struct PlanSearch {
    ParallelStep best;
    bool fits = true;  // false: nothing fits; `best` is the layout that needs the least memory
    std::vector<PlanAlternative> alternatives;
    // When nothing fits: the fewest devices (doubling, up to limits::advised_devices) on which some layout of the request's
    // choices fits, with that layout (memory only, nothing timed); none if even that does not.
    std::optional<std::pair<std::int64_t, ParallelLayout>> fits_on;
    std::int64_t layouts = 0;   // layouts the request allows
    std::int64_t timed = 0;     // of which timed (the rest pruned by memory or the bound)
};

// Throws Error for a request no layout satisfies (a given dimension that cannot divide the device count, a
// global batch that no micro-batch divides, ...), naming the field at fault. `memories`: the layouts' memory
// known from searches of other accelerators with the same models and options (LayoutMemories), filled as it goes.
PlanSearch search_plan(const LayoutRequest& request, StageModels& models, const ParallelContext& context,
                       size_t alternatives = 4, LayoutMemories* memories = nullptr);

// The layouts a request allows, in the tie-breaking order (for tests and the bench).
std::vector<ParallelLayout> candidate_layouts(const LayoutRequest& request, const ModelShape& shape,
                                              const Cluster& cluster);

}  // namespace prenet
