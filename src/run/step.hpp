#pragma once
// One optimizer step on one accelerator (docs/training-model.md): grad_accum micro-batches, each a forward
// and a backward pass (input and weight gradients, plus a recompute of every checkpointed block's forward
// when checkpointing is on), the gradient accumulation passes, the fp16 unscale/inf-check pass and the
// optimizer update; kernel times come from a KernelPredictor. An input pipeline slower than the step
// stretches it (the step waits for data; loading overlaps compute otherwise).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hardware/clocks.hpp"
#include "hardware/spec.hpp"
#include "ops/features.hpp"
#include "predict/predictor.hpp"
#include "run/memory.hpp"
#include "run/optimizer.hpp"
#include "run/overhead.hpp"

namespace prenet {

struct StepOptions : TrainingSetup {
    std::int64_t micro_batch = 1;        // samples per micro-batch (the features' batch), for the input cap
    double input_samples_per_s = 0;      // the input pipeline's rate; 0: it never limits the step
    // What the framework's step adds to the kernel times (run/overhead.hpp; --overhead): the launch gaps and the
    // step's fixed cost here, the overlapped communication's loss in parallel/. None by default in the core; the
    // API sets the fitted one.
    OverheadModel overhead;
    bool layer_breakdown = false;  // fill StepTime::layers
    // Parameters this device accumulates gradients of and updates, when ZeRO shards them (parallel/);
    // negative: all of the features' parameters.
    std::int64_t accumulated_params = -1, updated_params = -1;
};

// One layer's share of a step (every repeat of its block and every micro-batch).
struct LayerTime {
    std::string name, block, kind;
    std::int64_t repeat = 1;
    double forward_ms = 0, backward_ms = 0;  // backward includes the recompute of a checkpointed block
    double kernels = 0;
    double total_ms() const { return forward_ms + backward_ms; }
};

struct StepTime {
    double forward_ms = 0, backward_ms = 0, optimizer_ms = 0, communication_ms = 0;
    double recompute_ms = 0;          // checkpointing's extra forward, included in backward_ms
    double grad_accumulation_ms = 0;  // the accumulation passes, included in backward_ms
    double micro_batch_ms = 0;        // forward + backward (with recompute) of one micro-batch
    double input_ms = 0;              // time the input pipeline needs for one step's samples (0: unlimited)
    double input_stall_ms = 0;        // waiting for input, added to the step
    double bubble_ms = 0;             // a pipeline's fill and drain (parallel/pipeline.hpp); 0 on one device
    double matmul_ms = 0;             // in matrix-unit kernels (gemm, conv, attention, rnn)
    double weight_gradient_ms = 0;    // of which: the weight-gradient pass (what async tensor parallelism hides behind)
    double kernels = 0;               // kernel launches per step
    double overhead_ms = 0;           // the framework's step overhead (run/overhead.hpp), a part of the total
    std::int64_t grad_accum = 1;
    std::map<Family, double> by_family_ms;       // summed over passes and micro-batches (no input stall)
    std::map<Precision, double> matmul_by_precision_ms;  // matrix-unit kernels' time by the precision they ran at
    std::vector<LayerTime> layers;               // in model order, with StepOptions::layer_breakdown
    // The clock matrix-unit kernels ran at (docs/clocks.md): their predicted times are scaled to it here, in the
    // step, and not in the kernel predictor, whose fitted data are short microbenchmarks at the vendor's limit.
    SustainedClock clock;
    double compute_ms() const {
        return forward_ms + backward_ms + optimizer_ms + communication_ms + bubble_ms + overhead_ms;
    }
    double total_ms() const { return compute_ms() + input_stall_ms; }
    bool input_bound() const { return input_stall_ms > 0; }
};

// One micro-batch's forward and backward (with the recompute of what checkpointing frees): what a step
// repeats grad_accum times. It does not depend on the accumulation, the update or ZeRO's shards, so a plan
// search that weighs many layouts of one stage times it once (parallel/parallel_step.hpp's StageCache).
// Reads of the options: checkpoint_kind(), compile, channels_last and layer_breakdown.
struct MicroBatchTime {
    double forward_ms = 0, backward_ms = 0;  // backward without the recompute
    double recompute_ms = 0;                 // checkpointing's extra forward
    double matmul_ms = 0;                    // recompute included
    double weight_gradient_ms = 0;           // of backward: the matrix-unit weight-gradient kernels
    double kernels = 0;                      // launches, recompute included
    std::map<Family, double> by_family_ms;   // recompute included
    std::map<Precision, double> matmul_by_precision_ms;  // recompute included
    std::vector<LayerTime> layers;           // one micro-batch's share, with StepOptions::layer_breakdown
};
MicroBatchTime predict_micro_batch(const ModelFeatures& features, const HardwareSpec& hw,
                                   const KernelPredictor& predictor, const StepOptions& options);

StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      const StepOptions& options);
// The same with its micro-batch already timed (predict_micro_batch with the same options).
StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      const StepOptions& options, const MicroBatchTime& micro_batch);

// A result's warnings (`warnings`, batch_warnings' first) with what makes this step's time misleading:
// kernels so short that an eager framework's host paces them (run/overhead.hpp's host_pace_warning).
std::vector<std::string> step_warnings(std::vector<std::string> warnings, const StepTime& t, const StepOptions& options);

// StepTime::by_family_ms as a JSON object keyed by family name (to_string(Family)).
json by_family_json(const std::map<Family, double>& ms_by_family);

// One micro-batch, fused optimizer, no checkpointing: the plain step.
StepTime predict_step(const ModelFeatures& features, const HardwareSpec& hw, const KernelPredictor& predictor,
                      Precision precision, const OptimizerDef& optimizer);

}  // namespace prenet
