#pragma once
// The mixture-of-experts op's parameters as parallelism splits them.
#include <cstdint>

#include "graph/model.hpp"

namespace prenet {

// Of an expert layer's parameters, its routed experts' on this device (experts / expert_shards MLPs): what expert
// parallelism splits and what has replicas only outside the expert-parallel group. Its router and any shared
// expert are on every expert-parallel rank, as dense weights are. 0 for a layer that is not an expert layer.
std::int64_t routed_expert_params(const Layer& layer);

}  // namespace prenet
