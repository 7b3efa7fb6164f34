#include "parallel/pipeline.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace prenet {

std::int64_t pipeline_units(const Model& model) {
    std::int64_t units = 0;
    for (const auto& b : model.blocks)
        if (!b.name.empty()) units += b.repeat;
    return units;
}

std::vector<StagePieces> pipeline_stage_pieces(const Model& model, std::int64_t pp, std::int64_t vp) {
    std::int64_t chunks = pp * vp, units = pipeline_units(model);
    if (units < chunks)
        throw Error("pp x vp = " + std::to_string(chunks) + " pipeline chunks need at least as many blocks; '" +
                        model.name + "' has " + std::to_string(units),
                    ErrorCode::invalid_value, "pp");
    // Copies per chunk: the first (units % chunks) chunks take one more.
    std::vector<std::int64_t> quota(static_cast<size_t>(chunks), units / chunks);
    for (std::int64_t c = 0; c < units % chunks; ++c) ++quota[size_t(c)];

    std::vector<StagePieces> chunk_pieces(static_cast<size_t>(chunks));
    size_t chunk = 0;
    std::int64_t left = quota[0];
    size_t last_unit_chunk = 0;
    for (size_t b = 0; b < model.blocks.size(); ++b) {
        const Block& block = model.blocks[b];
        if (block.name.empty()) {
            // Unnamed blocks (embeddings, heads, losses) run with the block copy before them: leading ones with
            // the first chunk, trailing ones with the last.
            chunk_pieces[last_unit_chunk].push_back({b, block.repeat});
            continue;
        }
        std::int64_t copies = block.repeat;
        while (copies > 0) {
            std::int64_t take = std::min(copies, left);
            chunk_pieces[chunk].push_back({b, take});
            last_unit_chunk = chunk;
            copies -= take;
            left -= take;
            if (left == 0 && chunk + 1 < size_t(chunks)) left = quota[++chunk];
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
    return m;
}

std::vector<Model> pipeline_stages(const Model& model, std::int64_t pp, std::int64_t vp) {
    if (pp * vp == 1) return {model};
    std::vector<StagePieces> pieces = pipeline_stage_pieces(model, pp, vp);
    std::vector<Model> stages;
    for (std::int64_t s = 0; s < pp; ++s) stages.push_back(pipeline_stage(model, pieces[size_t(s)], s, pp));
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

double pipeline_bubble_ms(const std::vector<double>& stage_ms, std::int64_t vp, double p2p_ms) {
    if (stage_ms.empty()) return 0;
    double slowest = *std::max_element(stage_ms.begin(), stage_ms.end());
    double sum = std::accumulate(stage_ms.begin(), stage_ms.end(), 0.0);
    return (sum - slowest) / double(std::max<std::int64_t>(vp, 1)) +
           pipeline_bubble_sends(std::int64_t(stage_ms.size())) * p2p_ms;
}

double micro_batches_in_flight(std::int64_t stage, const ParallelLayout& l) {
    double m = double(l.grad_accum);
    if (l.pp == 1) return 1.0;
    if (l.schedule == PipelineSchedule::gpipe) return m;
    double p = double(l.pp), r = double(stage);
    if (l.schedule == PipelineSchedule::interleaved && l.vp > 1) {
        // Megatron-LM's interleaved warm-up: (p - r - 1) x 2 + (vp - 1) x p chunk forwards, plus the one in flight,
        // each holding 1/vp of the stage's activations.
        double v = double(l.vp);
        return std::min(m, ((p - r - 1.0) * 2.0 + (v - 1.0) * p + 1.0) / v);
    }
    return std::min(m, p - r);
}

}  // namespace prenet
