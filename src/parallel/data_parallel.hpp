#pragma once
// Data parallelism and ZeRO / FSDP (docs/parallel.md): the gradient and parameter collectives of a step and
// what ZeRO's sharding leaves in each device's memory.
//   zero 0 (DDP)     gradients all-reduced once per step in buckets during the last micro-batch's backward
//                    (under DeepSpeed's BF16 optimizer a bf16 model runs as zero 1: partitioning_zero);
//   zero 1           gradients reduce-scattered (all-reduced in fp32 under DeepSpeed's BF16 optimizer,
//                    run/framework.hpp), optimizer states (and a half model's fp32 master weights)
//                    sharded, updated weights all-gathered (overlapped with the next step's forward);
//   zero 2           + gradients sharded: FSDP SHARD_GRAD_OP gathers the weights before each micro-batch's
//                    forward and reduce-scatters its gradients in its backward;
//   zero 3 (FSDP)    + weights sharded: FULL_SHARD gathers each block's weights before its forward and again
//                    before its backward, and reduce-scatters its gradients; two blocks' weights are whole at once.
// Data-parallel groups span dp x cp ranks (context-parallel ranks hold the same weights), tp ranks apart.
#include <vector>

#include "ops/features.hpp"
#include "parallel/layout.hpp"
#include "parallel/comm_op.hpp"
#include "run/framework.hpp"
#include "run/memory.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

struct DataParallelComms {
    std::vector<CommOp> forward;   // per micro-batch, overlapped with its forward
    std::vector<CommOp> backward;  // per micro-batch, overlapped with its backward
    std::vector<CommOp> last_backward;  // once per step, overlapped with the last micro-batch's backward
    std::vector<CommOp> after_step;     // once per step, after the optimizer (overlapped with the next forward)
    // The part of each overlapped phase that cannot overlap: the first block's gather, the last bucket.
    double unhidden_fraction = 1.0;
};

// `stage`: the features of the sharded model one device runs (its pipeline stage); `framework` says what
// overlaps, how large the gradient buckets are and whether ZeRO-3 gathers again in the backward.
DataParallelComms data_parallel_comms(const ModelFeatures& stage, const ParallelLayout& layout,
                                      const PrecisionRecipe& recipe, const FrameworkPreset& framework = {});

// Parameters this device's optimizer updates under ZeRO (all of them below zero 1; the stage is the one the step
// partitions with, run/framework.hpp's partitioning_zero).
std::int64_t updated_params(const ModelFeatures& stage, const ParallelLayout& layout, const PrecisionRecipe& recipe,
                            const FrameworkPreset& framework = {});
// Parameters whose gradients this device accumulates across micro-batches (sharded from zero 2).
std::int64_t accumulated_params(const ModelFeatures& stage, const ParallelLayout& layout);

// One device's memory: `unsharded` is the stage's estimate for one micro-batch with nothing sharded (its
// framework reserve included); ZeRO's shards, FSDP's gathered blocks and the pipeline's activations of
// `in_flight` micro-batches replace the corresponding parts, and the peak and reserve are recomputed; the
// framework says how many blocks ZeRO-3 holds gathered at once.
MemoryUse shard_memory(const MemoryUse& unsharded, const ModelFeatures& stage, const ParallelLayout& layout,
                       const PrecisionRecipe& recipe, double in_flight, const FrameworkReserve& reserve,
                       const FrameworkPreset& framework = {});

}  // namespace prenet
