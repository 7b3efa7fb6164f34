#include "parallel/comm_op.hpp"

namespace prenet {

CommOp comm_op(Collective op, double bytes, CollectiveGroup group, double count, const char* what, bool backward) {
    return CommOp{op, bytes, group, count, what, backward, Fanout{}};
}

double comm_op_ms(const CommOp& op, const CollectiveModel& model, const Cluster& cluster) {
    return model.time_ms(op.op, op.bytes, op.group, cluster, op.fanout);
}

}  // namespace prenet
