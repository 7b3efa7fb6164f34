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
    r.weight_bytes = r.gradient_bytes = r.half_model ? half_bytes : fp32_bytes;
    r.master_bytes = r.half_model ? fp32_bytes : 0.0;
    return r;
}

MixedRecipe effective_mixed_recipe(Precision p, MixedRecipe asked, bool adapters) {
    return adapters && precision_recipe(p, asked).mixed ? MixedRecipe::half_model : asked;
}

PrecisionRecipe adapter_recipe(const PrecisionRecipe& base, bool half) {
    PrecisionRecipe r = base;
    r.half_model = false;
    r.weight_bytes = r.gradient_bytes = half && base.mixed ? half_bytes : fp32_bytes;
    r.master_bytes = 0.0;
    return r;
}

std::vector<Kernel> loss_scaling_kernels(const PrecisionRecipe& recipe, std::int64_t params) {
    if (!recipe.loss_scaling || params <= 0) return {};
    // One multiply and one finiteness test per gradient; each is read and written once.
    double n = double(params);
    return {streaming_kernel(Family::optimizer, Phase::optimizer, "unscale_inf_check", recipe.mode, n, 2.0 * n,
                             2.0 * recipe.gradient_bytes * n)};
}

}  // namespace prenet
