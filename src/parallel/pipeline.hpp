#pragma once
// Pipeline parallelism (docs/parallel.md): the model's repeated blocks cut into pp x vp chunks (embeddings go
// with the first chunk, heads and losses with the last: why frameworks give those stages fewer blocks), each
// stage holding vp chunks; the schedule's bubble and the micro-batches whose activations a stage holds at once.
#include <cstdint>
#include <tuple>
#include <vector>

#include "core/precision.hpp"
#include "graph/model.hpp"
#include "ops/features.hpp"
#include "parallel/layout.hpp"
#include "run/memory.hpp"

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

// Each stage's pieces: chunks i, i + pp, ... of the pp x vp chunks, split at block copies as stage_chunk_blocks
// (parallel/layout.hpp) says. Unnamed blocks (embeddings, heads, losses) run with the block copy before them:
// leading ones with the first chunk, trailing ones with the last, even where that chunk holds no block copy.
// Stages that hold the same pieces of one model are the same model, so their features are computed once
// (parallel/parallel_step.hpp's StageModels). Throws Error (field "pp") when there are fewer copies than stages,
// for callers that skip check_layout, and stage_chunk_blocks' errors.
std::vector<StagePieces> pipeline_stage_pieces(const Model& model, const ParallelLayout& layout);
// Stage `stage` of `pp` built from its pieces of `model`.
Model pipeline_stage(const Model& model, const StagePieces& pieces, std::int64_t stage, std::int64_t pp);
// Every stage built (the whole model when pp x vp is 1).
std::vector<Model> pipeline_stages(const Model& model, const ParallelLayout& layout);

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

// One stage's work on one micro-batch, what the schedules' bubbles are made of: forward + backward (`ms`, with
// the stage's exposed communication), its backward (B, input and weight gradients) and the weight-gradient part
// of that (W), which ZB-H1 and DualPipe defer into the bubble.
struct StagePass {
    double ms = 0, backward_ms = 0, weight_grad_ms = 0;
};

// W's share of a stage's backward. The kernels carry their phase but a step's times are summed over phases, so
// this is the weight-gradient kernels' share of the backward FLOPs (backward_weight_flops / backward FLOPs:
// about half for a transformer's GEMMs, less with attention's input-only gradients); 0.5 without backward FLOPs.
double weight_grad_share(const ModelFeatures& stage);

// The time the slowest stage idles in one step, filling and draining the pipeline, plus the send/recv of one
// micro-batch's activations (and back its gradients) at each of the pp - 1 stage boundaries (`p2p_ms`: one
// send), which vp does not shrink (a chunk's send is as large as a stage's). With F, B and W a stage's forward,
// backward and weight-gradient times (t = F + B), and the sums over every stage but the slowest (for even
// stages, p - 1 times one stage's):
// - 1F1B, GPipe: sum t (p - 1 of the m + p - 1 slots idle: (p - 1) / m of the steady state);
// - interleaved: sum t / vp (each fill step is one chunk: Narayanan et al. 2021, (p - 1) / (m x vp));
// - ZB-H1: sum (t - 2W) = (p - 1)(F + B_input - W) with B_input = B - W (Qi et al. 2023, Table 1:
//   (p - 1)(T_F + T_B - T_W); DeepSeek-V3's Table 2 writes it (PP - 1)(F + B - 2W) with B the whole backward);
// - DualPipe: (p/2 - 1)/(p - 1) x sum (t + B - 3W) = (PP/2 - 1)(F&B + B - 3W) (DeepSeek-V3, arXiv 2412.19437,
//   Table 2), taking the overlapped forward-and-backward chunk F&B as F + B: the overlap it names hides
//   communication, not compute.
// The steady state (m x the slowest stage, and its own sends) is the slowest stage's step
// (parallel/parallel_step.hpp); uneven stages enter through the sums, uneven chunks through their stage's.
double pipeline_bubble_ms(const std::vector<StagePass>& stages, const ParallelLayout& layout, double p2p_ms);
// Sends on the critical path of the fill and drain: 2 (pp - 1).
double pipeline_bubble_sends(std::int64_t pp);

// Micro-batches whose activations stage `stage` holds at its peak: all m for GPipe; min(m, pp - stage) for
// 1F1B and ZB-H1 (its W passes free what B leaves, keeping 1F1B's peak: Qi et al. 2023, Table 1); for
// interleaved, 1F1B's count plus (pp - 1) / vp of warm-up chunks, as Megatron-LM's schedule runs (each chunk
// 1/vp of the stage's activations, the equal chunks stage_chunk_blocks gives a stage); for DualPipe, pp + 1 on
// every rank (DeepSeek-V3, Table 2: each rank holds both directions' chunks).
double micro_batches_in_flight(std::int64_t stage, const ParallelLayout& layout);

// Micro-batches whose activations model chunk `chunk` (0 to vp - 1) of stage `stage` holds at the stage's
// peak: the stage's count without interleaving; interleaved, Megatron-Core's warm-up chunk forwards plus one
// (micro_batches_in_flight's numerator) dealt to the chunks in groups of pp micro-batches, at most m each:
// the first stage's first chunk holds 2 pp - 1, the last stage's last chunk one.
double chunk_micro_batches_in_flight(std::int64_t stage, std::int64_t chunk, const ParallelLayout& layout);

// Activations stage `stage` holds at its peak, from `one` micro-batch's (run/checkpointing.hpp): each
// micro-batch in flight keeps what it keeps between its forward and its backward, and the one in its backward
// pass also has its current block's activations (recomputed under full or per-op checkpointing, back from the
// host under offload), once: the peak is one micro-batch's backward, not all of theirs. The embeddings (on the
// first chunk) and the head and loss (on the last) count with their chunk's micro-batches.
double stage_activation_bytes(const ActivationMemory& one, std::int64_t stage, const ParallelLayout& layout);

// The pipeline rank holding stage `stage`'s mirror: DualPipe's rank i also runs stage pp - 1 - i of the
// other direction, so it holds twice a stage's parameters (DeepSeek-V3, Table 2: "Parameter 2x").
std::int64_t dualpipe_mirror_stage(std::int64_t stage, std::int64_t pp);
// `own` with the mirror stage's weights, gradients and optimizer states added (its activations are counted by
// micro_batches_in_flight); the peak grows by as much.
MemoryUse with_mirror_parameters(MemoryUse own, const MemoryUse& mirror);

}  // namespace prenet
