#pragma once
// What each --precision mode keeps in memory and which extra kernels it runs each step
// (docs/training-model.md states the assumptions):
//   fp32  fp32 weights, gradients and kernels.
//   tf32  fp32 storage; matmuls and convolutions run on TF32 tensor cores (the op catalogue picks the peak).
//   fp16  mixed precision with dynamic loss scaling: every step unscales the gradients and checks them for
//         inf/NaN before the update. With the autocast recipe (default) the weights and gradients stay fp32 and
//         autocast casts to fp16 (the ops carry the casts and the fp32 ops, ops/features.cpp); with the half
//         recipe the model is fp16 (weights, activations, gradients) beside an fp32 master copy.
//   bf16  mixed precision as fp16 without loss scaling (bf16 has fp32's exponent range).
//   fp8   matmuls read fp8 inputs (per-tensor scaled casts made inside the layers); everything else is bf16,
//         with an fp32 master copy: memory as bf16.
#include <cstdint>
#include <vector>

#include "core/precision.hpp"
#include "ops/kernel.hpp"

namespace prenet {

struct PrecisionRecipe {
    Precision mode = Precision::fp32;
    bool mixed = false;         // half-precision matmuls and activations (fp16, bf16, fp8)
    bool half_model = false;    // half-precision weights and gradients beside an fp32 master copy
    bool loss_scaling = false;  // fp16 only
    double weight_bytes = 4;    // per parameter, the weights the forward and backward passes read
    double master_bytes = 0;    // per parameter, the fp32 master copy (0: the weights are the master)
    double gradient_bytes = 4;  // per parameter, a stored gradient (the one accumulated, reduced and stepped on)
    // Per parameter, half-precision gradients kept beside those (DeepSpeed's BF16_Optimizer keeps the bf16
    // gradients autograd writes beside its fp32 ones): memory only, no kernel reads them twice.
    double kept_half_gradient_bytes = 0;

    // Per parameter, the weights as the matmuls read them, which ZeRO / FSDP gather: half precision under mixed
    // precision (a half model's own weights, or the half copies of autocast and FSDP's mixed precision), the
    // stored weights otherwise.
    double matmul_weight_bytes() const { return mixed || half_model ? half_bytes : weight_bytes; }
};

PrecisionRecipe precision_recipe(Precision p, MixedRecipe mixed = MixedRecipe::autocast);

// The mixed-precision recipe a step runs: `asked`, except that a LoRA or QLoRA base (`adapters`) is loaded in half
// precision (torch_dtype) and so runs as a half model under fp16/bf16 (api/settings.cpp refuses an explicit
// --mixed autocast with adapters).
MixedRecipe effective_mixed_recipe(Precision p, MixedRecipe asked, bool adapters);

// What the trained parameters keep when they are LoRA adapters: fp32 weights and gradients beside any base
// (PEFT's get_peft_model(autocast_adapter_dtype=True) upcasts half-precision adapters), or with `half` (QLoRA's
// bf16 adapters, Dettmers et al. 2023 eq. 5) half-precision ones under mixed precision; never a master copy (the
// optimizer's fp32 states update them in place). The loss scaling of `base` stays.
PrecisionRecipe adapter_recipe(const PrecisionRecipe& base, bool half = false);

// fp16 only (empty otherwise): the unscale/inf-check pass over every gradient that GradScaler runs before
// the optimizer (`_amp_foreach_non_finite_check_and_unscale_`): reads and writes each gradient once.
std::vector<Kernel> loss_scaling_kernels(const PrecisionRecipe& recipe, std::int64_t params);

}  // namespace prenet
