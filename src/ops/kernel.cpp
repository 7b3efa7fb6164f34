#include "ops/kernel.hpp"

namespace prenet {

const char* to_string(Family f) {
    switch (f) {
        case Family::gemm: return "gemm";
        case Family::conv: return "conv";
        case Family::elementwise: return "elementwise";
        case Family::norm: return "norm";
        case Family::softmax: return "softmax";
        case Family::gather: return "gather";
        case Family::attention: return "attention";
        case Family::rnn: return "rnn";
        case Family::pool: return "pool";
        case Family::optimizer: return "optimizer";
        case Family::loss: return "loss";
    }
    return "elementwise";
}

const char* to_string(Phase p) {
    switch (p) {
        case Phase::forward: return "forward";
        case Phase::backward_input: return "backward_input";
        case Phase::backward_weight: return "backward_weight";
        case Phase::optimizer: return "optimizer";
    }
    return "forward";
}

}  // namespace prenet
