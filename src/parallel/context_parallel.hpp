#pragma once
// Context parallelism (docs/parallel.md): ring attention's collectives; the sharding itself (queries local, keys
// and values of every shard) is shard_model's (parallel/tensor_parallel.hpp).
#include <vector>

#include "ops/features.hpp"
#include "parallel/comm_op.hpp"
#include "parallel/layout.hpp"

namespace prenet {

// Context parallelism's ring attention for one micro-batch: each attention layer passes its keys and values
// round the cp ring (cp - 1 sends forward; twice that backward, keys, values and their gradients). Overlapped
// with the attention computation.
std::vector<CommOp> context_parallel_comms(const ModelFeatures& stage, const ParallelLayout& layout, Precision precision);

}  // namespace prenet
