#include "run/grad_accumulation.hpp"

#include "core/checked.hpp"

namespace prenet {

std::int64_t global_batch(std::int64_t micro_batch, std::int64_t grad_accum) {
    return checked_mul(micro_batch, grad_accum, "global batch (batch x grad_accum)");
}

Kernel gradient_accumulation_kernel(const PrecisionRecipe& recipe, std::int64_t params) {
    Kernel k;
    k.family = Family::elementwise;
    k.phase = Phase::backward_weight;
    k.op = "grad_accumulate";
    k.precision = recipe.mode;
    k.elements = params;
    k.flops = double(params);
    k.bytes = 3.0 * recipe.gradient_bytes * double(params);
    return k;
}

}  // namespace prenet
