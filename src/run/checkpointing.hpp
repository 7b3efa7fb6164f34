#pragma once
// Activation checkpointing (--checkpointing), as torch.utils.checkpoint / Hugging Face
// gradient_checkpointing apply it: every named block of the model (a transformer layer, a residual block;
// each of a repeated block's copies) is a checkpoint unit. Its forward pass keeps only the block's input
// tensor; the backward pass first runs the block's forward again (recompute), keeping that one block's
// activations while its gradients are computed. Layers outside named blocks (embeddings, heads, losses)
// keep their activations as usual.
#include <cstdint>

#include "ops/features.hpp"

namespace prenet {

// Whether a layer belongs to a checkpoint unit (a named block).
bool is_checkpointed(const LayerFeatures& layer);

struct ActivationMemory {
    double saved = 0;                  // activations alive at the end of the forward pass
    double block_inputs = 0;           // of which: checkpointed blocks' inputs (0 without checkpointing)
    double recompute_block = 0;        // of which: the largest single block's activations during recompute
    std::int64_t checkpointed_blocks = 0;  // checkpoint units executed per forward pass (repeats counted)
};

// Saved activations of one micro-batch (the features' batch) with or without checkpointing.
// `selective` (without checkpointing): attention layers keep what their flash form keeps, since the attention
// core is recomputed rather than saved (Megatron's selective recomputation).
ActivationMemory activation_memory(const ModelFeatures& features, Precision precision, bool checkpointing,
                                   bool selective = false);

// Whether the backward pass runs `kernel` (a forward kernel of `layer`) again.
bool is_recomputed(const LayerFeatures& layer, const Kernel& kernel, bool checkpointing, bool selective);

// Checkpoint units executed per forward pass, whether or not checkpointing is on.
std::int64_t checkpoint_units(const ModelFeatures& features);

}  // namespace prenet
