#include "run/precision_recipe.hpp"

namespace prenet {

PrecisionRecipe precision_recipe(Precision p, MixedRecipe mixed) {
    PrecisionRecipe r;
    r.mode = p;
    r.mixed = p == Precision::fp16 || p == Precision::bf16 || p == Precision::fp8;
    r.half_model = r.mixed && !runs_autocast(p, mixed);
    r.loss_scaling = p == Precision::fp16;
    // fp8 keeps bf16 weights and gradients: the fp8 copies are transient casts inside each layer. Autocast
    // keeps fp32 weights and gradients: they are the master copy.
    r.weight_bytes = r.half_model ? 2.0 : 4.0;
    r.master_bytes = r.half_model ? 4.0 : 0.0;
    r.gradient_bytes = r.half_model ? 2.0 : 4.0;
    return r;
}

std::vector<Kernel> loss_scaling_kernels(const PrecisionRecipe& recipe, std::int64_t params) {
    if (!recipe.loss_scaling || params <= 0) return {};
    Kernel k;
    k.family = Family::optimizer;
    k.phase = Phase::optimizer;
    k.op = "unscale_inf_check";
    k.precision = recipe.mode;
    k.elements = params;
    k.flops = 2.0 * double(params);  // one multiply and one finiteness test per element
    k.bytes = 2.0 * recipe.gradient_bytes * double(params);
    return {k};
}

}  // namespace prenet
