#pragma once
// One collective a step runs (docs/parallel.md): what each kind of parallelism asks of the collective model
// (parallel/collectives.hpp), with how often and in which pass.
#include <string>

#include "parallel/collectives.hpp"

namespace prenet {

// One collective a step runs, `count` times (repeats of a block, micro-batches).
struct CommOp {
    Collective op = Collective::all_reduce;
    double bytes = 0;
    CollectiveGroup group;
    double count = 1;
    std::string what;      // "tensor parallel", "data parallel", ... for the reply
    bool backward = false;  // in the backward pass (else forward)
    Fanout fanout;          // an all-to-all's routing (expert parallelism's node-limited dispatch)
};
CommOp comm_op(Collective op, double bytes, CollectiveGroup group, double count, const char* what, bool backward);

// Milliseconds of one run of `op` (not times its count).
double comm_op_ms(const CommOp& op, const CollectiveModel& model, const Cluster& cluster);

}  // namespace prenet
