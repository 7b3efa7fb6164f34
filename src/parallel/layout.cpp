#include "parallel/layout.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace prenet {

using nlohmann::json;

const char* to_string(PipelineSchedule s) {
    switch (s) {
        case PipelineSchedule::one_f_one_b: return "1f1b";
        case PipelineSchedule::interleaved: return "interleaved";
        case PipelineSchedule::gpipe: return "gpipe";
        case PipelineSchedule::zb_h1: return "zb-h1";
        case PipelineSchedule::dualpipe: return "dualpipe";
    }
    return "1f1b";
}

PipelineSchedule parse_schedule(const std::string& name) {
    if (name == "1f1b") return PipelineSchedule::one_f_one_b;
    if (name == "interleaved") return PipelineSchedule::interleaved;
    if (name == "gpipe") return PipelineSchedule::gpipe;
    if (name == "zb-h1") return PipelineSchedule::zb_h1;
    if (name == "dualpipe") return PipelineSchedule::dualpipe;
    throw Error("schedule must be 1f1b, interleaved, gpipe, zb-h1 or dualpipe, got '" + name + "'",
                ErrorCode::invalid_value, "schedule");
}

const char* to_string(Recompute r) {
    switch (r) {
        case Recompute::none: return "none";
        case Recompute::selective: return "selective";
        case Recompute::attention_core: return "attention-core";
        case Recompute::op_selective: return "op-selective";
        case Recompute::full: return "full";
        case Recompute::offload: return "offload";
    }
    return "none";
}

std::vector<std::string> recompute_names() {
    std::vector<std::string> names;
    for (Recompute r : {Recompute::none, Recompute::selective, Recompute::attention_core, Recompute::op_selective,
                        Recompute::full, Recompute::offload})
        names.push_back(to_string(r));
    return names;
}

Recompute parse_recompute(const std::string& name) {
    for (Recompute r : {Recompute::none, Recompute::selective, Recompute::attention_core, Recompute::op_selective,
                        Recompute::full, Recompute::offload})
        if (name == to_string(r)) return r;
    throw Error("checkpointing must be none, selective, attention-core, op-selective, full or offload, got '" + name +
                    "'",
                ErrorCode::invalid_value, "checkpointing");
}

CheckpointKind checkpoint_kind(Recompute r, const FrameworkPreset& framework) {
    switch (r) {
        case Recompute::none: return CheckpointKind::none;
        case Recompute::selective: return framework.selective;
        case Recompute::attention_core: return CheckpointKind::attention_core;
        case Recompute::op_selective: return CheckpointKind::op_level;
        case Recompute::full: return CheckpointKind::full;
        case Recompute::offload: return CheckpointKind::offload;
    }
    return CheckpointKind::none;
}

Recompute named_recompute(CheckpointKind kind) {
    switch (kind) {
        case CheckpointKind::none: return Recompute::none;
        case CheckpointKind::attention_core: return Recompute::attention_core;
        case CheckpointKind::op_level: return Recompute::op_selective;
        case CheckpointKind::full: return Recompute::full;
        case CheckpointKind::offload: return Recompute::offload;
    }
    return Recompute::none;
}

json to_json(const ParallelLayout& l) {
    json out = {{"dp", l.dp},
            {"tp", l.tp},
            {"pp", l.pp},
            {"cp", l.cp},
            {"ep", l.ep},
            {"vp", l.vp},
            {"zero", l.zero},
            {"sequence_parallel", l.sequence_parallel},
            {"schedule", to_string(l.schedule)},
            {"micro_batch", l.micro_batch},
            {"grad_accum", l.grad_accum},
            {"global_batch", l.global_batch()},
            {"checkpointing", to_string(l.recompute)}};
    if (l.first_stage_blocks > 0) out["first_stage_blocks"] = l.first_stage_blocks;
    if (l.last_stage_blocks > 0) out["last_stage_blocks"] = l.last_stage_blocks;
    return out;
}

bool LayoutRequest::fully_given() const {
    return dp && tp && pp && cp && ep && vp && zero && micro_batch && recompute;
}

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& message, ErrorCode code = ErrorCode::invalid_value) {
    throw Error(message, code, field);
}

std::string n(std::int64_t x) { return std::to_string(x); }

// Megatron-Core's num_layers_in_first/last_pipeline_stage (TransformerConfig.__post_init__'s checks).
std::vector<std::int64_t> given_ends_split(const ParallelLayout& l, std::int64_t blocks) {
    const std::int64_t pp = l.pp, vp = l.vp;
    std::int64_t middle = blocks, middle_stages = pp;
    for (auto [field, given] : {std::pair{"first_stage_blocks", l.first_stage_blocks}, {"last_stage_blocks", l.last_stage_blocks}}) {
        if (given == 0) continue;
        if (given % vp)
            bad(field, std::string(field) + " " + n(given) + " must split into the stage's vp = " + n(vp) +
                           " equal chunks (a multiple of vp)");
        middle -= given;
        --middle_stages;
    }
    std::string ends = "first_stage_blocks " + n(l.first_stage_blocks) + " + last_stage_blocks " +
                       n(l.last_stage_blocks);
    const char* field = l.last_stage_blocks > 0 ? "last_stage_blocks" : "first_stage_blocks";
    if (middle_stages == 0 && middle != 0)
        bad(field, "with pp 2, " + ends + " must be the " + n(blocks) + " blocks");
    if (middle_stages > 0) {
        if (middle < middle_stages * vp)
            bad(field, ends + " leave " + n(middle) + " of the " + n(blocks) + " blocks for the " + n(middle_stages) +
                           " stages between: fewer than vp = " + n(vp) + " each");
        if (middle % (middle_stages * vp))
            bad(field, ends + " leave " + n(middle) + " of the " + n(blocks) + " blocks, which do not split evenly " +
                           "into the " + n(middle_stages) + " stages between" +
                           (vp > 1 ? " x vp = " + n(vp) + " chunks" : std::string()));
    }
    std::int64_t per_middle_chunk = middle_stages > 0 ? middle / (middle_stages * vp) : 0;
    std::vector<std::int64_t> chunks(size_t(pp * vp), per_middle_chunk);
    for (std::int64_t v = 0; v < vp; ++v) {
        if (l.first_stage_blocks > 0) chunks[size_t(v * pp)] = l.first_stage_blocks / vp;
        if (l.last_stage_blocks > 0) chunks[size_t(v * pp + pp - 1)] = l.last_stage_blocks / vp;
    }
    return chunks;
}

}  // namespace

std::vector<std::int64_t> stage_chunk_blocks(const ParallelLayout& l, std::int64_t blocks) {
    const std::int64_t chunks = l.pp * l.vp;
    if (l.first_stage_blocks > 0 || l.last_stage_blocks > 0) {
        if (l.pp == 1)
            bad(l.first_stage_blocks > 0 ? "first_stage_blocks" : "last_stage_blocks",
                "first and last stage blocks need pipeline parallelism (pp > 1)", ErrorCode::conflict);
        return given_ends_split(l, blocks);
    }
    std::vector<std::int64_t> out(size_t(chunks), blocks / chunks);
    if (blocks % chunks == 0) return out;
    if (l.vp == 1) {
        for (std::int64_t c = 0; c < blocks % chunks; ++c) ++out[size_t(c)];
        return out;
    }
    if ((blocks + 2) % chunks == 0) {
        std::fill(out.begin(), out.end(), (blocks + 2) / chunks);
        --out.front();
        --out.back();
        return out;
    }
    bad("vp", "pp x vp = " + n(chunks) + " model chunks divide neither the " + n(blocks) + " blocks nor " +
                  n(blocks + 2) + " (the embedding and the loss counted as a block each); give first_stage_blocks " +
                  "and last_stage_blocks (multiples of vp) for an uneven split");
}

std::optional<Error> layout_refusal(const ParallelLayout& l, const ModelShape& m, std::int64_t gpus) {
    auto bad = [](const std::string& field, const std::string& message, ErrorCode code = ErrorCode::invalid_value) {
        return std::optional<Error>(Error(message, code, field));
    };
    for (auto [field, v] : {std::pair{"dp", l.dp}, {"tp", l.tp}, {"pp", l.pp}, {"cp", l.cp}, {"ep", l.ep}, {"vp", l.vp},
                            {"batch", l.micro_batch}, {"grad_accum", l.grad_accum}})
        if (v < 1) return bad(field, std::string(field) + " must be at least 1, got " + n(v));
    if (l.zero < 0 || l.zero > 3) return bad("zero", "zero must be 0, 1, 2 or 3, got " + n(l.zero));
    if (l.devices() != gpus)
        return bad("gpus", "dp x tp x pp x cp = " + n(l.dp) + " x " + n(l.tp) + " x " + n(l.pp) + " x " + n(l.cp) + " = " +
                        n(l.devices()) + " devices, but --gpus is " + n(gpus),
            ErrorCode::conflict);
    if (l.tp > 1) {
        if (m.heads == 0 && m.ssm_heads == 0)
            return bad("tp", "tensor parallelism splits attention heads or Mamba mixers; '" + m.name + "' has neither");
        if (m.ssm_heads % l.tp)
            return bad("tp", "tp " + n(l.tp) + " does not divide the " + n(m.ssm_heads) + " SSM heads of '" + m.name + "'");
        if (m.heads && m.heads % l.tp)
            return bad("tp", "tp " + n(l.tp) + " does not divide the " + n(m.heads) + " attention heads of '" + m.name + "'");
        if (m.kv_heads > l.tp && m.kv_heads % l.tp)
            return bad("tp", "tp " + n(l.tp) + " does not divide the " + n(m.kv_heads) + " key/value heads of '" + m.name + "'");
    }
    if (l.sequence_parallel && l.tp == 1) return bad("sequence_parallel", "sequence parallelism needs tp > 1", ErrorCode::conflict);
    if (l.pp > 1 && l.pp > m.blocks)
        return bad("pp", "pp " + n(l.pp) + " is more pipeline stages than the " + n(m.blocks) + " blocks of '" + m.name + "'");
    if (l.vp > 1) {
        if (l.pp == 1) return bad("vp", "virtual stages (vp) need pipeline parallelism (pp > 1)", ErrorCode::conflict);
        if (l.schedule != PipelineSchedule::interleaved)
            return bad("schedule", "vp > 1 runs the interleaved schedule", ErrorCode::conflict);
        if (l.grad_accum % l.pp)
            return bad("grad_accum", "the interleaved schedule needs the micro-batches (" + n(l.grad_accum) +
                                  ") to be a multiple of pp (" + n(l.pp) + ")", ErrorCode::conflict);
    }
    if (l.pp > 1 && l.pp <= m.blocks) try {
            stage_chunk_blocks(l, m.blocks);
        } catch (const Error& e) {
            return e;
        }
    // DeepSeek's DualPipe (github.com/deepseek-ai/DualPipe, dualpipe.py step()): num_ranks % 2 == 0 and
    // num_chunks (micro-batches) even and >= 2 x num_ranks.
    if (l.schedule == PipelineSchedule::dualpipe) {
        if (l.pp % 2) return bad("pp", "DualPipe runs two pipelines in opposite directions: pp must be even, got " + n(l.pp),
                          ErrorCode::conflict);
        if (l.grad_accum % 2 || l.grad_accum < 2 * l.pp)
            return bad("grad_accum", "DualPipe needs an even number of micro-batches, at least 2 x pp = " + n(2 * l.pp) +
                                  ", got " + n(l.grad_accum), ErrorCode::conflict);
    }
    if (l.cp > 1 && m.tokens_per_sample == 0)
        return bad("cp", "context parallelism splits the sequence; '" + m.name + "' has no tokens");
    if (l.cp > 1 && m.tokens_per_sample % l.cp)
        return bad("cp", "cp " + n(l.cp) + " does not divide the sequence of " + n(m.tokens_per_sample) + " tokens");
    if (l.ep > 1) {
        if (m.experts == 0) return bad("ep", "expert parallelism needs a mixture-of-experts model; '" + m.name + "' is dense");
        if (m.experts % l.ep) return bad("ep", "ep " + n(l.ep) + " does not divide the " + n(m.experts) + " experts");
        // Expert-parallel groups come from the data-parallel ranks (ep divides dp), or from the tensor- and
        // data-parallel ranks together (ep a multiple of tp dividing dp x tp; experts then are not tensor-split).
        bool from_dp = l.dp % l.ep == 0;
        bool from_tp_and_dp = l.ep % l.tp == 0 && (l.dp * l.tp) % l.ep == 0;
        if (!from_dp && !from_tp_and_dp)
            return bad("ep", "ep " + n(l.ep) + " must divide dp " + n(l.dp) + ", or be a multiple of tp " + n(l.tp) +
                          " dividing dp x tp = " + n(l.dp * l.tp), ErrorCode::conflict);
        if (!from_dp && l.tp > 1 && !l.sequence_parallel)
            return bad("sequence_parallel", "ep " + n(l.ep) + " spans tensor-parallel ranks, which needs sequence parallelism "
                                     "(each tp rank routes its own tokens)", ErrorCode::conflict);
    }
    if (l.zero > 0 && l.dp == 1 && l.cp == 1)
        return bad("zero", "ZeRO shards over data-parallel ranks; dp is 1", ErrorCode::conflict);
    return std::nullopt;
}

void check_layout(const ParallelLayout& l, const ModelShape& m, std::int64_t gpus) {
    if (auto refusal = layout_refusal(l, m, gpus)) throw *refusal;
}

}  // namespace prenet
