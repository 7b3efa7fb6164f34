#pragma once
// Expert parallelism (docs/parallel.md): the token exchange of the MoE layers, where its group sits, and how much
// of it hides behind compute; which experts a device holds is shard_model's (parallel/tensor_parallel.hpp), the
// expert replicas' count ParallelLayout::expert_replicas (parallel/layout.hpp).
#include <string>
#include <vector>

#include "ops/features.hpp"
#include "parallel/comm_op.hpp"
#include "parallel/layout.hpp"

namespace prenet {

// Expert parallelism for one micro-batch: per MoE layer, two all-to-alls forward (dispatch the routed tokens to
// their experts, combine the experts' outputs back) and two backward (their gradients the other way), each of
// tokens x top_k x capacity factor x hidden x activation bytes sent per device, over ep ranks; the share addressed
// to the device's own experts, 1/ep of it, stays local (the all-to-all's (n-1)/n bus factor). A layer with
// group-limited routing (expert_groups, groups_per_token) carries it as the ops' Fanout.
std::vector<CommOp> expert_parallel_comms(const ModelFeatures& stage, const ParallelLayout& layout, Precision precision);

// Whether the all-to-alls overlap compute (--ep-overlap). none: exposed whole (a framework that waits on each
// dispatch and combine). full: DualPipe's or DeepEP's two-stream overlap, where one micro-batch's dispatch and
// combine run while another micro-batch's forward and backward compute.
enum class ExpertOverlap { none, full };
ExpertOverlap parse_expert_overlap(const std::string& name);  // throws Error (field "ep_overlap")
const char* to_string(ExpertOverlap overlap);

// The exposed part of one micro-batch's all-to-all time `comm_ms`, given the compute of a micro-batch (forward and
// backward, recompute included) it may hide behind: all of it with none; with full, max(0, comm - compute).
double expert_parallel_exposed_ms(double comm_ms, double compute_ms, ExpertOverlap overlap);

}  // namespace prenet
