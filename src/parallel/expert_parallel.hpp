#pragma once
// Expert parallelism (docs/parallel.md): the token exchange of the MoE layers and where its group sits; which
// experts a device holds is shard_model's (parallel/tensor_parallel.hpp), the expert replicas' count
// ParallelLayout::expert_replicas (parallel/layout.hpp).
#include <vector>

#include "ops/features.hpp"
#include "parallel/comm_op.hpp"
#include "parallel/layout.hpp"

namespace prenet {

// Expert parallelism for one micro-batch: two all-to-alls (dispatch, combine) per MoE layer forward and two
// backward, of the routed tokens (top_k x capacity factor per token), over ep ranks. Exposed.
std::vector<CommOp> expert_parallel_comms(const ModelFeatures& stage, const ParallelLayout& layout, Precision precision);

}  // namespace prenet
