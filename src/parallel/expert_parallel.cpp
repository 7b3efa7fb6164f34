#include "parallel/expert_parallel.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/precision.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {

std::vector<CommOp> expert_parallel_comms(const ModelFeatures& stage, const ParallelLayout& l, Precision p) {
    std::vector<CommOp> ops;
    if (l.ep == 1) return ops;
    // Ranks are ordered tp, cp, dp, pp. Carved from the data-parallel ranks, members are tp x cp ranks apart;
    // spanning the tp ranks, runs of tp adjacent ranks, a data-parallel rank (tp x cp ranks) apart.
    CollectiveGroup group = l.expert_tp() == 1 ? CollectiveGroup{l.ep, l.tp * l.cp, l.tp, 1}
                                               : CollectiveGroup{l.ep, l.tp * l.cp};
    for (const auto& lf : stage.layers) {
        if (!is_expert_layer(lf.layer)) continue;
        const Layer& m = lf.layer;
        double tokens = double(elements(m.input)) / double(m.input.back());
        double top_k = double(ops::int_attr(m, "top_k", 1));
        double capacity = ops::number_attr(m, "capacity_factor", 1.0);
        double bytes = tokens * top_k * capacity * double(m.input.back()) * activation_bytes(p);
        // The experts lie in ep order (ep rank r holds experts r E/ep to (r+1) E/ep - 1), so routing groups of
        // consecutive experts are runs of consecutive members.
        Fanout fanout{top_k, ops::int_attr(m, "expert_groups", 0), ops::int_attr(m, "groups_per_token", 0)};
        for (bool backward : {false, true}) {
            ops.push_back(comm_op(Collective::all_to_all, bytes, group, 2.0 * double(lf.repeat), "expert parallel", backward));
            ops.back().fanout = fanout;
        }
    }
    return ops;
}

ExpertOverlap parse_expert_overlap(const std::string& name) {
    if (name == "none") return ExpertOverlap::none;
    if (name == "full") return ExpertOverlap::full;
    throw Error("unknown expert-parallel overlap '" + name + "' (none, full)", ErrorCode::invalid_value, "ep_overlap");
}

const char* to_string(ExpertOverlap overlap) { return overlap == ExpertOverlap::full ? "full" : "none"; }

double expert_parallel_exposed_ms(double comm_ms, double compute_ms, ExpertOverlap overlap) {
    return overlap == ExpertOverlap::full ? std::max(0.0, comm_ms - compute_ms) : comm_ms;
}

}  // namespace prenet
