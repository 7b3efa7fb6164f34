#include "parallel/expert_parallel.hpp"

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
        for (bool backward : {false, true})
            ops.push_back(comm_op(Collective::all_to_all, bytes, group, 2.0 * double(lf.repeat), "expert parallel", backward));
    }
    return ops;
}

}  // namespace prenet
