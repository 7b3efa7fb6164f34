#pragma once
// Pipeline parallelism (docs/parallel.md): the model's repeated blocks cut into pp x vp chunks (embeddings go
// with the first chunk, heads and losses with the last), each stage holding vp chunks; the schedule's bubble and
// the micro-batches whose activations a stage holds at once.
#include <cstdint>
#include <tuple>
#include <vector>

#include "core/precision.hpp"
#include "graph/model.hpp"
#include "parallel/layout.hpp"

namespace prenet {

// Block copies (a transformer's layers) a pipeline can split: the repeats of every named block.
std::int64_t pipeline_units(const Model& model);

// Which block copies a stage holds: a run of `copies` copies of the model's block `block` (its index).
struct PipelinePiece {
    size_t block = 0;
    std::int64_t copies = 0;
    bool operator<(const PipelinePiece& o) const { return std::tie(block, copies) < std::tie(o.block, o.copies); }
};
using StagePieces = std::vector<PipelinePiece>;

// Each stage's pieces, in order (pipeline_stages' split, before the stages are built as models): stages that
// hold the same pieces of one model are the same model, so their features are computed once
// (parallel/parallel_step.hpp's StageModels).
std::vector<StagePieces> pipeline_stage_pieces(const Model& model, std::int64_t pp, std::int64_t vp);
// Stage `stage` of `pp` built from its pieces of `model`.
Model pipeline_stage(const Model& model, const StagePieces& pieces, std::int64_t stage, std::int64_t pp);

// Stage i's model: chunks i, i + pp, ... of pp x vp chunks, split at block copies. check_layout
// (parallel/layout.hpp) has already refused pp above the copies and, for vp > 1, pp x vp not dividing them, so
// uneven stages arise only with vp = 1: then the first chunks take one more copy (reported as uneven stages).
// Throws Error (field "pp") when there are fewer copies than chunks, for callers that skip check_layout.
std::vector<Model> pipeline_stages(const Model& model, std::int64_t pp, std::int64_t vp);

// Bytes of one pipeline send, from one tp rank to its peer on the next stage: the activation between two block
// copies, micro-batch x tokens per device x hidden at the activation precision. `local_model`: the unsharded
// model at the layout's micro-batch and 1/cp of the sequence. Megatron-Core sends each tp rank's whole copy
// (sequence length / cp); with sequence parallelism the tensor is already split, so 1/tp of it (its
// p2p_communication shapes the tensor as seq / cp / tp with sequence parallelism, seq / cp without).
double pipeline_message_bytes(const Model& local_model, const ParallelLayout& layout, Precision precision);

// Sends the slowest stage makes in the steady state of one step, forward and backward: each of its vp chunks
// passes every micro-batch on and its gradient back, 2 x vp x m (a micro-batch crosses pp x vp - 1 boundaries
// each way over the whole pipeline). 0 without a pipeline.
double pipeline_steady_sends(const ParallelLayout& layout);

// The time the slowest stage idles in one step, filling and draining the pipeline: the other stages' forward and
// backward of one micro-batch, shrunk by vp for the interleaved schedule (each fill step is one chunk), plus the
// send/recv of one micro-batch's activations (and back its gradients) at each of the pp - 1 stage boundaries,
// which vp does not shrink (a chunk's send is as large as a stage's): (p - 1) / (m x vp) of the steady m
// micro-batches for even stages. `stage_ms`: forward + backward of one micro-batch on each stage (all its
// chunks); `p2p_ms`: one send of one micro-batch. The steady state (m x the slowest stage, and its own sends) is
// the slowest stage's step (parallel/parallel_step.hpp).
double pipeline_bubble_ms(const std::vector<double>& stage_ms, std::int64_t vp, double p2p_ms);
// Sends on the critical path of the fill and drain: 2 (pp - 1).
double pipeline_bubble_sends(std::int64_t pp);

// Micro-batches whose activations stage `stage` holds at its peak: all m for GPipe; min(m, pp - stage) for
// 1F1B; for interleaved, 1F1B's count plus (pp - 1) / vp of warm-up chunks, as Megatron-LM's schedule runs.
double micro_batches_in_flight(std::int64_t stage, const ParallelLayout& layout);

}  // namespace prenet
