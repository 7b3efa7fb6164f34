#pragma once
// Pipeline parallelism (docs/parallel.md): the model's repeated blocks cut into pp x vp chunks (embeddings go
// with the first chunk, heads and losses with the last), each stage holding vp chunks; the schedule's time and
// the micro-batches whose activations a stage holds at once.
#include <cstdint>
#include <vector>

#include "graph/model.hpp"
#include "parallel/layout.hpp"

namespace prenet {

// Block copies (a transformer's layers) a pipeline can split: the repeats of every named block.
std::int64_t pipeline_units(const Model& model);

// Stage i's model: chunks i, i + pp, ... of pp x vp chunks, split at block copies; when the copies do not
// divide evenly the first chunks take one more (reported as uneven stages). Throws Error (field "pp") when
// there are fewer copies than chunks.
std::vector<Model> pipeline_stages(const Model& model, std::int64_t pp, std::int64_t vp);

struct PipelineTime {
    double total_ms = 0;   // the pipelined forward and backward passes of all micro-batches
    double bubble_ms = 0;  // of which the slowest stage idles: fill and drain
};

// `stage_ms`: forward + backward of one micro-batch on each stage (all its chunks), `p2p_ms` the send/recv
// of one micro-batch's activations (and back its gradients) between neighbouring stages.
// 1F1B and GPipe: m x slowest + (sum of the others); interleaved: the fill and drain shrink by vp
// (bubble fraction (p - 1) / (m x vp) for even stages).
PipelineTime pipeline_time(const std::vector<double>& stage_ms, std::int64_t micro_batches, std::int64_t vp,
                           double p2p_ms);

// Micro-batches whose activations stage `stage` holds at its peak: all m for GPipe; min(m, pp - stage) for
// 1F1B; for interleaved, 1F1B's count plus (pp - 1) / vp of warm-up chunks, as Megatron-LM's schedule runs.
double micro_batches_in_flight(std::int64_t stage, const ParallelLayout& layout);

}  // namespace prenet
