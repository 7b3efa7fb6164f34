#include "parallel/context_parallel.hpp"

#include <algorithm>

#include "core/precision.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {

std::vector<CommOp> context_parallel_comms(const ModelFeatures& stage, const ParallelLayout& l, Precision p) {
    std::vector<CommOp> ops;
    if (l.cp == 1) return ops;
    CollectiveGroup ring{2, l.tp};  // neighbours on the cp ring are tp ranks apart
    for (const auto& lf : stage.layers) {
        if (op_traits(lf.layer).tensor_split != TensorSplit::heads) continue;
        const Layer& a = lf.layer;
        std::int64_t heads = ops::int_attr(a, "heads", 1);
        std::int64_t kv = ops::int_attr(a, "kv_heads", heads);
        std::int64_t dim = ops::int_attr(a, "head_dim", a.input.back() / std::max<std::int64_t>(heads, 1));
        double kv_bytes = 2.0 * double(a.input[0]) * double(a.input[1]) * double(kv * dim) * activation_bytes(p);
        double steps = double(l.cp - 1) * double(lf.repeat);
        ops.push_back(comm_op(Collective::send_recv, kv_bytes, ring, steps, "context parallel", false));
        ops.push_back(comm_op(Collective::send_recv, 2.0 * kv_bytes, ring, steps, "context parallel", true));
    }
    return ops;
}

}  // namespace prenet
