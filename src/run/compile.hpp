#pragma once
// torch.compile (--compile): TorchInductor fuses the pointwise and reduction ops that follow each other in a
// compiled region into one generated kernel, so such a chain reads its inputs once instead of re-reading each
// intermediate from memory (https://pytorch.org/docs/stable/torch.compiler.html; the residual add, norm, casts
// and activations of a transformer block). Matrix kernels and attention stay library calls and break a chain.
#include "ops/features.hpp"

namespace prenet {

// Whether a kernel joins a fused chain: element-wise and normalisation kernels, except those of an attention
// core (selective recomputation runs those again, so they keep their own kernels).
bool is_fusable(const Kernel& kernel);

// `features` with each chain of consecutive fusable kernels over the same number of elements, of one pass
// inside one block copy (consecutive layers of the same block and repeat; the backward runs the layers in
// reverse), replaced by one kernel: its
// FLOPs summed, and its bytes the chain's less one read of each intermediate (every kernel's output is still
// written: autograd saves it or a later layer reads it). The fused kernel belongs to the chain's first layer
// in execution order and is a norm when the chain holds one. Parameters, FLOPs and memory are unchanged.
ModelFeatures fuse_memory_bound_kernels(const ModelFeatures& features);

}  // namespace prenet
