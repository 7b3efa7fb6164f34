#pragma once
// What the attention layer (ops/attention.cpp) tells other parts about its kernels beyond the catalogue: the share
// of a FlashAttention backward that is recomputation.
#include "ops/kernel.hpp"

namespace prenet {

// The FLOPs of a FlashAttention backward kernel (flash_attention_kernels) that recompute the forward's scores
// (q k^T, one of its five products): work the hardware does but the model does not need, which MFU leaves out
// (parallel/parallel_step.hpp). 0 for any other kernel.
double flash_backward_recompute_flops(const Kernel& kernel);

// How much longer a first-generation fused attention kernel (AttentionShape::generation 1: FlashAttention 1, or
// the Triton FlashAttention of 2022) takes than the FlashAttention-2-class kernel the attention model is fitted on,
// for the same problem; 1 for every other kernel. A published ratio, not fitted here (ops/attention.cpp says whose).
double flash_generation_slowdown(const Kernel& kernel);

}  // namespace prenet
