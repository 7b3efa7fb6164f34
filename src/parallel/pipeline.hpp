#pragma once
// Pipeline parallelism (docs/parallel.md): the model's repeated blocks cut into pp x vp chunks (embeddings go
// with the first chunk, heads and losses with the last), each stage holding vp chunks; the schedule's bubble and
// the micro-batches whose activations a stage holds at once.
#include <cstdint>
#include <vector>

#include "graph/model.hpp"
#include "parallel/layout.hpp"

namespace prenet {

// Block copies (a transformer's layers) a pipeline can split: the repeats of every named block.
std::int64_t pipeline_units(const Model& model);

// Stage i's model: chunks i, i + pp, ... of pp x vp chunks, split at block copies. check_layout
// (parallel/layout.hpp) has already refused pp above the copies and, for vp > 1, pp x vp not dividing them, so
// uneven stages arise only with vp = 1: then the first chunks take one more copy (reported as uneven stages).
// Throws Error (field "pp") when there are fewer copies than chunks, for callers that skip check_layout.
std::vector<Model> pipeline_stages(const Model& model, std::int64_t pp, std::int64_t vp);

// The time the slowest stage idles in one step, filling and draining the pipeline: the other stages' forward and
// backward of one micro-batch, plus the send/recv of its activations (and back its gradients) at every stage
// boundary, shrunk by vp for the interleaved schedule: (p - 1) / (m x vp) of the steady m micro-batches for even
// stages. `stage_ms`: forward + backward of one micro-batch on each stage (all its chunks); `p2p_ms`: one
// boundary's transfer of one micro-batch. The steady state (m x the slowest stage, and its own transfers) is the
// slowest stage's step (parallel/parallel_step.hpp).
double pipeline_bubble_ms(const std::vector<double>& stage_ms, std::int64_t vp, double p2p_ms);

// Micro-batches whose activations stage `stage` holds at its peak: all m for GPipe; min(m, pp - stage) for
// 1F1B; for interleaved, 1F1B's count plus (pp - 1) / vp of warm-up chunks, as Megatron-LM's schedule runs.
double micro_batches_in_flight(std::int64_t stage, const ParallelLayout& layout);

}  // namespace prenet
