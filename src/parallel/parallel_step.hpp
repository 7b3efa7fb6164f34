#pragma once
// One training step of a parallel layout on a cluster (docs/parallel.md): every pipeline stage's compute
// from the kernel predictor (its sharded model), the collectives of each kind of parallelism with what
// overlaps compute and what stays exposed, the pipeline schedule's bubble, and each device's memory.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "hardware/spec.hpp"
#include "ops/features.hpp"
#include "parallel/cluster.hpp"
#include "parallel/collectives.hpp"
#include "parallel/expert_parallel.hpp"
#include "parallel/layout.hpp"
#include "parallel/pipeline.hpp"
#include "predict/predictor.hpp"
#include "run/memory.hpp"
#include "run/memory_timeline.hpp"
#include "run/step.hpp"

namespace prenet {

// The model at a micro-batch and a sequence length (the request's model rebuilt; throws Error for "model").
using ModelAt = std::function<Model(std::int64_t micro_batch, std::int64_t tokens)>;

// Sharded models and their stages' features, built once per shape a search asks for.
class StageModels {
public:
    StageModels(ModelAt build, std::int64_t tokens, Precision precision, MixedRecipe mixed);
    // The features of each pipeline stage (pp of them) of the model one device runs for one micro-batch.
    // Stages holding the same block copies of one sharded model share their features (one object).
    const std::vector<const ModelFeatures*>& stages(const ParallelLayout& layout);
    // The unsharded model at this micro-batch (its shape and FLOPs).
    const Model& whole(std::int64_t micro_batch);
    const ModelShape& shape();
    // Bytes of one pipeline send under this layout (pipeline_message_bytes in parallel/pipeline.hpp).
    double pipeline_message_bytes(const ParallelLayout& layout);
    // Forward and backward FLOPs of one micro-batch of the unsharded model (no recompute, neither activation
    // checkpointing's nor FlashAttention's; attention counted whole even where causal masking skips half): MFU's
    // numerator.
    double flops(std::int64_t micro_batch);
    // Layers in the stages' features built so far: what its memory grows with (a keeper's measure of its size).
    std::size_t layers_held() const;

private:
    ModelAt build_;
    std::int64_t tokens_;
    Precision precision_;
    MixedRecipe mixed_;
    std::map<std::pair<std::int64_t, std::int64_t>, Model> built_;  // (micro-batch, tokens per device)
    // (micro-batch, cp, tp, sequence parallel, ep, expert tp): the model one device of a pipeline runs, before
    // it is split (shard_model in parallel/tensor_parallel.hpp reads these of the layout).
    using ShardKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, bool, std::int64_t, std::int64_t>;
    std::map<ShardKey, Model> devices_;
    std::map<std::pair<ShardKey, StagePieces>, ModelFeatures> stage_features_;
    // (shard, pp, vp, first and last stage blocks)
    using StagesKey = std::tuple<ShardKey, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
    std::map<StagesKey, std::vector<const ModelFeatures*>> stages_;
    std::unique_ptr<ModelShape> shape_;
    std::map<std::int64_t, double> flops_;
    const Model& built(std::int64_t micro_batch, std::int64_t tokens);
};

class StageCache;

struct ParallelContext {
    const HardwareSpec* hw = nullptr;
    const KernelPredictor* predictor = nullptr;
    const Cluster* cluster = nullptr;
    const CollectiveModel* collectives = nullptr;
    StepOptions step;  // precision, optimizer, ... (micro-batches and checkpointing come from each layout)
    FrameworkReserve reserve;
    // Remembers each stage's micro-batch time and unsharded memory across the layouts of one search (null: none).
    // Valid for this context's accelerator, predictor and step options only; search_plan sets its own.
    StageCache* cache = nullptr;
    ExpertOverlap ep_overlap = ExpertOverlap::none;  // --ep-overlap
    bool tp_comm_overlap = false;                    // --tp-comm-overlap (run/framework.hpp's tensor_overlap)
};

// One micro-batch's collectives on one stage, each kind's time before any overlap (what stage_comms leaves exposed
// against the micro-batch's kernels), and the data-parallel tail a step runs once.
struct StageCollectives {
    double tensor_forward = 0, tensor_backward = 0, expert = 0, context_forward = 0, context_backward = 0;
    double data_forward = 0, data_backward = 0, data_last = 0, data_after = 0;
    double data_unhidden_fraction = 0;
};
StageCollectives stage_collectives(const ModelFeatures& stage, const ParallelLayout& layout,
                                   const ParallelContext& context, const StepOptions& options);

// What the layouts of one plan search share: a stage's micro-batch (its kernels do not change with dp, ZeRO or
// the number of micro-batches), its collectives (they do not change with checkpointing or the number of
// micro-batches) and its memory before sharding. Keyed by the stage's features, which StageModels
// keeps for as long as it lives; a cache must not outlive the StageModels it was filled from.
class StageCache {
public:
    const MicroBatchTime& micro_batch(const ModelFeatures& stage, const StepOptions& options,
                                      const ParallelContext& context);
    const StageCollectives& collectives(const ModelFeatures& stage, const ParallelLayout& layout,
                                        const ParallelContext& context, const StepOptions& options);
    const MemoryUse& unsharded_memory(const ModelFeatures& stage, const MemoryOptions& options);
    // One micro-batch's activations under the options' checkpointing kind (run/checkpointing.hpp).
    const ActivationMemory& activations(const ModelFeatures& stage, const MemoryOptions& options);

private:
    // (stage, checkpointing kind, layer breakdown)
    using Key = std::tuple<const ModelFeatures*, CheckpointKind, bool>;
    // (stage, checkpointing kind, accumulation, the framework's BF16 optimizer or not)
    using MemoryKey = std::tuple<const ModelFeatures*, CheckpointKind, bool, bool>;
    std::map<Key, MicroBatchTime> micro_batches_;
    std::map<MemoryKey, MemoryUse> memory_;
    std::map<std::pair<const ModelFeatures*, CheckpointKind>, ActivationMemory> activations_;
    std::map<std::pair<const ModelFeatures*, ParallelLayout>, StageCollectives> collectives_;  // (layout as keyed)
};

// One pipeline stage's peak, as PyTorch reports it on that stage's devices.
struct StagePeak {
    double allocated = 0, reserved = 0;
};

struct ParallelStep {
    ParallelLayout layout;
    StepTime time;                      // of the slowest stage, with the exposed communication and the bubble
    double communication_total_ms = 0;  // every collective's time, before overlap
    std::map<std::string, double> exposed_by_kind_ms;  // "tensor parallel", "data parallel", ...
    std::map<std::string, double> total_by_kind_ms;
    MemoryUse memory;                   // the fullest stage's device (capacity set)
    std::int64_t fullest_stage = 0;
    std::vector<StagePeak> stage_peaks;  // each stage's peak (ParallelMemory)
    std::vector<double> stage_ms;       // forward + backward of one micro-batch on each stage
    bool uneven_stages = false;         // chunks of different block counts, or stage times 10% apart
    double model_flops = 0;             // per step over all devices (the unsharded model's, no recompute)
    double total_ms() const { return time.total_ms(); }
};

// No step of this layout can take less (predict_parallel_step's total_ms): its slowest stage's kernels and the
// communication they leave exposed, once per micro-batch (the step's slowest stage is the one slowest by both); the
// least once-a-step communication of any stage; and the framework's launch gaps for the fewest kernels a stage
// launches. What the step adds to them (the bubble, pipeline sends, accumulation, the optimizer, more launches, the
// overlap's loss) is never negative. What the plan search times layouts in order of, and prunes by; it costs one
// micro-batch per distinct stage (cached in the context's StageCache) and the stages' collectives.
// `last_stage_only`: a looser bound at a fraction of the cost, the last stage's kernels alone (the head's and the
// loss's stage; any stage's bounds the slowest's).
double step_lower_bound_ms(const ParallelLayout& layout, StageModels& models, const ParallelContext& context,
                           bool last_stage_only = false);

// Each device's memory (the fullest stage's), without timing anything: what the plan search prunes by first.
struct ParallelMemory {
    MemoryUse memory;
    std::int64_t fullest_stage = 0;
    // Every stage's peak, first to last: frameworks log one rank's (Megatron the last stage's), and the stages
    // differ by their micro-batches in flight, embeddings and loss.
    std::vector<StagePeak> stage_peaks;
};
ParallelMemory parallel_memory(const ParallelLayout& layout, StageModels& models, const ParallelContext& context);

// Each layout's memory for one model (one StageModels) and one set of training options, whatever the accelerator:
// memory does not depend on it, only its capacity does (applied on the way out). The API keeps one between the
// requests of a question asked one accelerator at a time (api/parallel_result.cpp); it must not be used with
// other options or another StageModels than it was filled with.
class LayoutMemories {
public:
    ParallelMemory memory(const ParallelLayout& layout, StageModels& models, const ParallelContext& context);

private:
    std::map<ParallelLayout, ParallelMemory> known_;
};

// The fullest stage's memory over one step (run/memory_timeline.hpp): `memory` is that stage's (ParallelStep's or
// ParallelMemory's), with its micro-batches in flight as the pipeline schedule holds them.
MemoryTimeline parallel_memory_timeline(const ParallelLayout& layout, StageModels& models, const ParallelContext& context,
                                        const MemoryUse& memory, std::int64_t fullest_stage);

// `memory`: the layout's parallel_memory when the caller has it already (the plan search computes it first).
ParallelStep predict_parallel_step(const ParallelLayout& layout, StageModels& models, const ParallelContext& context,
                                   const ParallelMemory* memory = nullptr);

// The ratio a layout's step time is judged by when the global batch differs between layouts: ms per sample.
double ms_per_sample(const ParallelStep& step);

}  // namespace prenet
