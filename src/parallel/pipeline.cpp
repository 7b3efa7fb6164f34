#include "parallel/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace prenet {

std::int64_t pipeline_units(const Model& model) {
    std::int64_t units = 0;
    for (const auto& b : model.blocks)
        if (!b.name.empty()) units += b.repeat;
    return units;
}

std::vector<StagePieces> pipeline_stage_pieces(const Model& model, const ParallelLayout& layout) {
    const std::int64_t pp = layout.pp, vp = layout.vp, chunks = pp * vp, units = pipeline_units(model);
    if (units < pp)
        throw Error("pp = " + std::to_string(pp) + " pipeline stages need at least as many blocks; '" + model.name +
                        "' has " + std::to_string(units),
                    ErrorCode::invalid_value, "pp");
    const std::vector<std::int64_t> quota = stage_chunk_blocks(layout, units);

    std::vector<StagePieces> chunk_pieces(static_cast<size_t>(chunks));
    size_t chunk = 0;
    std::int64_t left = quota[0], placed = 0;
    auto next_chunk_with_room = [&] {
        while (left == 0 && chunk + 1 < size_t(chunks)) left = quota[++chunk];
    };
    next_chunk_with_room();
    size_t last_unit_chunk = 0;
    for (size_t b = 0; b < model.blocks.size(); ++b) {
        const Block& block = model.blocks[b];
        if (block.name.empty()) {
            // Unnamed blocks (embeddings, heads, losses) run with the block copy before them: leading ones with
            // the first chunk, trailing ones with the last (which may hold no block copy: Megatron's loss slot).
            size_t at = placed == units ? size_t(chunks - 1) : last_unit_chunk;
            chunk_pieces[at].push_back({b, block.repeat});
            continue;
        }
        std::int64_t copies = block.repeat;
        while (copies > 0) {
            std::int64_t take = std::min(copies, left);
            chunk_pieces[chunk].push_back({b, take});
            last_unit_chunk = chunk;
            copies -= take;
            left -= take;
            placed += take;
            next_chunk_with_room();
        }
    }

    std::vector<StagePieces> stages(static_cast<size_t>(pp));
    for (std::int64_t s = 0; s < pp; ++s)
        for (std::int64_t v = 0; v < vp; ++v)
            for (const PipelinePiece& piece : chunk_pieces[size_t(s + v * pp)]) stages[size_t(s)].push_back(piece);
    return stages;
}

Model pipeline_stage(const Model& model, const StagePieces& pieces, std::int64_t stage, std::int64_t pp) {
    Model m;
    m.name = model.name + " (stage " + std::to_string(stage + 1) + " of " + std::to_string(pp) + ")";
    m.domain = model.domain;
    m.tokens_per_sample = model.tokens_per_sample;
    m.batch = model.batch;
    for (const PipelinePiece& piece : pieces) {
        Block b = model.blocks[piece.block];
        b.repeat = piece.copies;
        m.blocks.push_back(std::move(b));
    }
    // A tied weight (an LM head sharing the token embedding's table) whose table is on another stage: this stage
    // keeps a copy of its own, with its gradient and optimizer state, and the two copies' gradients are summed
    // across the stages (Megatron's embedding group, DeepSpeed's TiedLayerSpec). Counted here as untied, and marked
// `tied_copy` for that all-reduce (ModelFeatures::tied_copy_params).
    bool holds_table = false;
    for (const auto& block : m.blocks)
        for (const auto& layer : block.layers)
            holds_table = holds_table || (layer.kind == "embedding" && !layer.attrs.value("tied", false));
    if (!holds_table)
        for (auto& block : m.blocks)
            for (auto& layer : block.layers)
                if (layer.attrs.value("tied", false)) layer.attrs["tied"] = false, layer.attrs["tied_copy"] = true;
    return m;
}

std::vector<Model> pipeline_stages(const Model& model, const ParallelLayout& layout) {
    if (layout.pp * layout.vp == 1) return {model};
    std::vector<StagePieces> pieces = pipeline_stage_pieces(model, layout);
    std::vector<Model> stages;
    for (std::int64_t s = 0; s < layout.pp; ++s) stages.push_back(pipeline_stage(model, pieces[size_t(s)], s, layout.pp));
    return stages;
}

double pipeline_message_bytes(const Model& local_model, const ParallelLayout& l, Precision precision) {
    // The output of a block copy's last layer is what the next copy, on the next stage, reads.
    for (const auto& b : local_model.blocks)
        if (!b.name.empty() && !b.layers.empty()) {
            double bytes = double(elements(b.layers.back().output)) * activation_bytes(precision);
            return l.sequence_parallel ? bytes / double(l.tp) : bytes;
        }
    return 0;
}

double pipeline_steady_sends(const ParallelLayout& l) {
    if (l.pp == 1) return 0;
    return 2.0 * double(l.vp) * double(l.grad_accum);
}

double pipeline_bubble_sends(std::int64_t pp) { return 2.0 * double(std::max<std::int64_t>(pp - 1, 0)); }

double weight_grad_share(const ModelFeatures& stage) {
    double backward = stage.backward_flops();
    return backward > 0 ? stage.backward_weight_flops / backward : 0.5;
}

double pipeline_bubble_ms(const std::vector<StagePass>& stages, const ParallelLayout& l, double p2p_ms) {
    if (stages.empty()) return 0;
    size_t slowest = size_t(std::max_element(stages.begin(), stages.end(), [](const StagePass& a, const StagePass& b) {
                                return a.ms < b.ms;
                            }) - stages.begin());
    // What each other stage adds to the fill and drain, by schedule.
    auto idle = [&](const StagePass& s) {
        switch (l.schedule) {
            case PipelineSchedule::zb_h1: return std::max(0.0, s.ms - 2.0 * s.weight_grad_ms);
            case PipelineSchedule::dualpipe: return std::max(0.0, s.ms + s.backward_ms - 3.0 * s.weight_grad_ms);
            default: return s.ms;
        }
    };
    // All stages' less the slowest's (summed in stage order, so 1F1B's sum is bit for bit the plain sum).
    double others = 0;
    for (const StagePass& s : stages) others += idle(s);
    others -= idle(stages[slowest]);
    double p = double(stages.size());
    double fill = l.schedule == PipelineSchedule::dualpipe
                      ? others * std::max(0.0, p / 2.0 - 1.0) / std::max(1.0, p - 1.0)
                      : others / double(std::max<std::int64_t>(l.vp, 1));
    return fill + pipeline_bubble_sends(std::int64_t(stages.size())) * p2p_ms;
}

double micro_batches_in_flight(std::int64_t stage, const ParallelLayout& l) {
    double m = double(l.grad_accum);
    if (l.pp == 1) return 1.0;
    if (l.schedule == PipelineSchedule::gpipe) return m;
    if (l.schedule == PipelineSchedule::dualpipe) return std::min(m, double(l.pp) + 1.0);
    double p = double(l.pp), r = double(stage);
    if (l.schedule == PipelineSchedule::interleaved && l.vp > 1) {
        // Megatron-LM's interleaved warm-up: (p - r - 1) x 2 + (vp - 1) x p chunk forwards, plus the one in flight,
        // each holding 1/vp of the stage's activations.
        double v = double(l.vp);
        return std::min(m, ((p - r - 1.0) * 2.0 + (v - 1.0) * p + 1.0) / v);
    }
    return std::min(m, p - r);
}

double chunk_micro_batches_in_flight(std::int64_t stage, std::int64_t chunk, const ParallelLayout& l) {
    if (l.pp == 1 || l.schedule != PipelineSchedule::interleaved || l.vp == 1)
        return micro_batches_in_flight(stage, l);
    double m = double(l.grad_accum), p = double(l.pp), v = double(l.vp);
    double forwards = (p - double(stage) - 1.0) * 2.0 + (v - 1.0) * p + 1.0;
    if (forwards >= m * v) return m;  // every forward runs before the first backward
    // Forward k runs chunk (k / p) mod vp.
    double cycles = std::floor(forwards / (p * v)), rest = forwards - cycles * p * v;
    return std::min(m, cycles * p + std::clamp(rest - double(chunk) * p, 0.0, p));
}

double stage_activation_bytes(const ActivationMemory& one, std::int64_t stage, const ParallelLayout& l) {
    double in_flight = micro_batches_in_flight(stage, l);
    double blocks = one.per_micro_batch() - one.leading - one.trailing;
    return in_flight * blocks + chunk_micro_batches_in_flight(stage, 0, l) * one.leading +
           chunk_micro_batches_in_flight(stage, l.vp - 1, l) * one.trailing + one.recompute_block;
}

std::int64_t dualpipe_mirror_stage(std::int64_t stage, std::int64_t pp) { return pp - 1 - stage; }

MemoryUse with_mirror_parameters(MemoryUse own, const MemoryUse& mirror) {
    own.weights += mirror.weights;
    own.gradients += mirror.gradients;
    own.optimizer_states += mirror.optimizer_states;
    // The mirror's model states are persistent tensors like the stage's own: all three peaks hold them.
    double states = model_state_bytes(mirror);
    own.peak_allocated += states;
    own.peak_reserved += states;
    own.peak += states;
    return own;
}

}  // namespace prenet
