#pragma once
// Gradient accumulation (--grad-accum N): each optimizer step runs N micro-batches of --batch samples,
// forward and backward, and the optimizer once. PyTorch adds each micro-batch's weight gradients into the
// stored ones (AccumulateGrad: grad += new_grad) from the second micro-batch on: one elementwise pass over
// every gradient, reading both and writing one, per extra micro-batch.
#include <cstdint>

#include "ops/kernel.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

// Samples per optimizer step: micro_batch x grad_accum (checked for overflow).
std::int64_t global_batch(std::int64_t micro_batch, std::int64_t grad_accum);

// The accumulation pass of one extra micro-batch over `params` gradients.
Kernel gradient_accumulation_kernel(const PrecisionRecipe& recipe, std::int64_t params);

}  // namespace prenet
