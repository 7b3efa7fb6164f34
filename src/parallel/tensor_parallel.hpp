#pragma once
// Tensor and sequence parallelism applied to a model (docs/parallel.md): the model one device runs for one
// micro-batch (with its context and expert shards), and the tensor-parallel collectives its layers add. Each layer kind declares how tensor
// parallelism splits it (OpTraits::tensor_split, ops/catalogue.hpp); this file is how each split is done.
#include <cstdint>
#include <vector>

#include "graph/model.hpp"
#include "ops/features.hpp"
#include "parallel/comm_op.hpp"
#include "parallel/layout.hpp"
#include "run/framework.hpp"

namespace prenet {

// The model's heads, pipeline-splittable blocks and experts, which a layout must agree with.
ModelShape model_shape(const Model& model);

// The part of `model` one device holds: attention heads / tp (key/value heads replicated when fewer than tp),
// MLP hidden units / tp, vocabulary rows / tp (padded up, as Megatron pads the vocabulary), experts / ep, and
// with sequence parallelism the replicated layers' tokens / tp; with context parallelism attention attends
// over all cp shards' keys. `model` must already be built at the micro-batch and at 1/cp of the sequence.
// Throws Error naming the field ("tp", "ep") a layer cannot be split by.
Model shard_model(Model model, const ParallelLayout& layout);

// The tensor-parallel collectives of one micro-batch through `stage` (features of a sharded model):
// per split attention or MLP layer one all-reduce of its output forward and of its input gradient backward
// (sequence parallel: an all-gather and a reduce-scatter each), the vocab-parallel embedding's forward
// all-reduce, and the output layer's input-gradient all-reduce. What of them overlaps compute is the
// framework's (exposed_tensor_parallel_ms); the generic preset overlaps none.
std::vector<CommOp> tensor_parallel_comms(const ModelFeatures& stage, const ParallelLayout& layout, Precision precision);

// Of one micro-batch's tensor-parallel collectives (forward_ms and backward_ms of them), what stays exposed when
// they overlap matrix work as `overlap` says: the backward's behind the weight-gradient GEMMs
// (weight_gradient_ms), or all of them behind every matrix-unit kernel of the micro-batch (matmul_ms).
double exposed_tensor_parallel_ms(double forward_ms, double backward_ms, double matmul_ms, double weight_gradient_ms,
                                  TensorOverlap overlap);

}  // namespace prenet
