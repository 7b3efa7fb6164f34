#include "run/grad_accumulation.hpp"

#include "core/checked.hpp"

namespace prenet {

std::int64_t global_batch(std::int64_t micro_batch, std::int64_t grad_accum) {
    return checked_mul(micro_batch, grad_accum, "global batch (batch x grad_accum)");
}

Kernel gradient_accumulation_kernel(const PrecisionRecipe& recipe, std::int64_t params) {
    // grad += new_grad: read two gradients, write one.
    double n = double(params);
    return streaming_kernel(Family::elementwise, Phase::backward_weight, "grad_accumulate", recipe.mode, n, n,
                            3.0 * recipe.gradient_bytes * n);
}

}  // namespace prenet
