#include "parallel/layout.hpp"

#include "core/error.hpp"

namespace prenet {

using nlohmann::json;

const char* to_string(PipelineSchedule s) {
    switch (s) {
        case PipelineSchedule::one_f_one_b: return "1f1b";
        case PipelineSchedule::interleaved: return "interleaved";
        case PipelineSchedule::gpipe: return "gpipe";
    }
    return "1f1b";
}

PipelineSchedule parse_schedule(const std::string& name) {
    if (name == "1f1b") return PipelineSchedule::one_f_one_b;
    if (name == "interleaved") return PipelineSchedule::interleaved;
    if (name == "gpipe") return PipelineSchedule::gpipe;
    throw Error("schedule must be 1f1b, interleaved or gpipe, got '" + name + "'", ErrorCode::invalid_value, "schedule");
}

const char* to_string(Recompute r) {
    switch (r) {
        case Recompute::none: return "none";
        case Recompute::selective: return "selective";
        case Recompute::full: return "full";
    }
    return "none";
}

Recompute parse_recompute(const std::string& name) {
    if (name == "none") return Recompute::none;
    if (name == "selective") return Recompute::selective;
    if (name == "full") return Recompute::full;
    throw Error("checkpointing must be none, selective or full, got '" + name + "'", ErrorCode::invalid_value,
                "checkpointing");
}

bool ParallelLayout::operator==(const ParallelLayout& o) const {
    return dp == o.dp && tp == o.tp && pp == o.pp && cp == o.cp && ep == o.ep && vp == o.vp && zero == o.zero &&
           sequence_parallel == o.sequence_parallel && schedule == o.schedule && micro_batch == o.micro_batch &&
           grad_accum == o.grad_accum && recompute == o.recompute;
}

json to_json(const ParallelLayout& l) {
    return {{"dp", l.dp},
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
}

bool LayoutRequest::fully_given() const {
    return dp && tp && pp && cp && ep && vp && zero && micro_batch && recompute;
}

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& message, ErrorCode code = ErrorCode::invalid_value) {
    throw Error(message, code, field);
}

std::string n(std::int64_t x) { return std::to_string(x); }

}  // namespace

void check_layout(const ParallelLayout& l, const ModelShape& m, std::int64_t gpus) {
    for (auto [field, v] : {std::pair{"dp", l.dp}, {"tp", l.tp}, {"pp", l.pp}, {"cp", l.cp}, {"ep", l.ep}, {"vp", l.vp},
                            {"batch", l.micro_batch}, {"grad_accum", l.grad_accum}})
        if (v < 1) bad(field, std::string(field) + " must be at least 1, got " + n(v));
    if (l.zero < 0 || l.zero > 3) bad("zero", "zero must be 0, 1, 2 or 3, got " + n(l.zero));
    if (l.devices() != gpus)
        bad("gpus", "dp x tp x pp x cp = " + n(l.dp) + " x " + n(l.tp) + " x " + n(l.pp) + " x " + n(l.cp) + " = " +
                        n(l.devices()) + " devices, but --gpus is " + n(gpus),
            ErrorCode::conflict);
    if (l.tp > 1) {
        if (m.heads == 0) bad("tp", "tensor parallelism splits attention heads; '" + m.name + "' has no attention layers");
        if (m.heads % l.tp)
            bad("tp", "tp " + n(l.tp) + " does not divide the " + n(m.heads) + " attention heads of '" + m.name + "'");
        if (m.kv_heads > l.tp && m.kv_heads % l.tp)
            bad("tp", "tp " + n(l.tp) + " does not divide the " + n(m.kv_heads) + " key/value heads of '" + m.name + "'");
    }
    if (l.sequence_parallel && l.tp == 1) bad("sequence_parallel", "sequence parallelism needs tp > 1", ErrorCode::conflict);
    if (l.pp > 1 && l.pp > m.blocks)
        bad("pp", "pp " + n(l.pp) + " is more pipeline stages than the " + n(m.blocks) + " blocks of '" + m.name + "'");
    if (l.vp > 1) {
        if (l.pp == 1) bad("vp", "virtual stages (vp) need pipeline parallelism (pp > 1)", ErrorCode::conflict);
        if (m.blocks % (l.pp * l.vp))
            bad("vp", "pp x vp = " + n(l.pp * l.vp) + " model chunks do not divide the " + n(m.blocks) + " blocks of '" +
                          m.name + "'");
        if (l.schedule != PipelineSchedule::interleaved)
            bad("schedule", "vp > 1 runs the interleaved schedule", ErrorCode::conflict);
        if (l.grad_accum % l.pp)
            bad("grad_accum", "the interleaved schedule needs the micro-batches (" + n(l.grad_accum) +
                                  ") to be a multiple of pp (" + n(l.pp) + ")", ErrorCode::conflict);
    }
    if (l.cp > 1 && m.tokens_per_sample == 0)
        bad("cp", "context parallelism splits the sequence; '" + m.name + "' has no tokens");
    if (l.cp > 1 && m.tokens_per_sample % l.cp)
        bad("cp", "cp " + n(l.cp) + " does not divide the sequence of " + n(m.tokens_per_sample) + " tokens");
    if (l.ep > 1) {
        if (m.experts == 0) bad("ep", "expert parallelism needs a mixture-of-experts model; '" + m.name + "' is dense");
        if (m.experts % l.ep) bad("ep", "ep " + n(l.ep) + " does not divide the " + n(m.experts) + " experts");
        // Expert-parallel groups come from the data-parallel ranks (ep divides dp), or from the tensor- and
        // data-parallel ranks together (ep a multiple of tp dividing dp x tp; experts then are not tensor-split).
        bool from_dp = l.dp % l.ep == 0;
        bool from_tp_and_dp = l.ep % l.tp == 0 && (l.dp * l.tp) % l.ep == 0;
        if (!from_dp && !from_tp_and_dp)
            bad("ep", "ep " + n(l.ep) + " must divide dp " + n(l.dp) + ", or be a multiple of tp " + n(l.tp) +
                          " dividing dp x tp = " + n(l.dp * l.tp), ErrorCode::conflict);
        if (!from_dp && l.tp > 1 && !l.sequence_parallel)
            bad("sequence_parallel", "ep " + n(l.ep) + " spans tensor-parallel ranks, which needs sequence parallelism "
                                     "(each tp rank routes its own tokens)", ErrorCode::conflict);
    }
    if (l.zero > 0 && l.dp == 1 && l.cp == 1)
        bad("zero", "ZeRO shards over data-parallel ranks; dp is 1", ErrorCode::conflict);
}

}  // namespace prenet
