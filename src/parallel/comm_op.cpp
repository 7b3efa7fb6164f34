#include "parallel/comm_op.hpp"

namespace prenet {

CommOp comm_op(Collective op, double bytes, CollectiveGroup group, double count, const char* what, bool backward) {
    return CommOp{op, bytes, group, count, what, backward};
}

}  // namespace prenet
