#pragma once
// Activation checkpointing (--checkpointing; docs/training-model.md "Activation checkpointing"), each kind as
// the framework that names it runs it. Every named block of the model (a transformer layer, a residual block;
// each of a repeated block's copies) is a checkpoint unit, as torch.utils.checkpoint / Hugging Face
// gradient_checkpointing / Megatron's --recompute-granularity full wrap them. Layers outside named blocks
// (embeddings, heads, losses) keep their activations as usual under every kind.
#include <cstdint>
#include <string>
#include <vector>

#include "ops/features.hpp"

namespace prenet {

// What a block keeps from its forward pass for its backward pass, and what the backward runs again.
enum class CheckpointKind {
    none,            // everything kept, nothing recomputed
    attention_core,  // Megatron's selective recomputation (Korthikanti et al. 2022, arXiv 2205.05198): the
                     // attention core (scores, softmax, their dropout, the context product) recomputed, what its
                     // fused (flash) form keeps kept; everything else kept
    op_level,        // PyTorch's per-op selective checkpointing (torch.utils.checkpoint's
                     // create_selective_checkpoint_contexts, torchtitan's "op" mode): each block keeps its input
                     // and the outputs of its matmuls (torch.mm: the projections, not the attention core's
                     // batched products) and of fused attention; every other forward kernel is recomputed
    full,            // each block keeps its input only and runs its whole forward again in the backward pass
    offload,         // each block's activations are copied to host memory after its forward and back before its
                     // backward (torch.autograd.graph.save_on_cpu, Megatron's activation offloading); the device
                     // keeps one block's at a time and nothing is recomputed
};
const char* to_string(CheckpointKind kind);

// Whether a layer belongs to a checkpoint unit (a named block).
bool is_checkpointed(const LayerFeatures& layer);

struct ActivationMemory {
    double saved = 0;            // activations alive at the backward pass's peak of one micro-batch
    double block_inputs = 0;     // of which: what checkpointed blocks keep (their inputs; op_level: + matmul outputs)
    double recompute_block = 0;  // of which: the largest single block's activations, alive while it is
                                 // recomputed and differentiated (full, op_level) or back on the device (offload)
    std::int64_t checkpointed_blocks = 0;  // checkpoint units executed per forward pass (repeats counted)
    // Of saved: the layers outside named blocks before the first block (embeddings) and after the last (the
    // head, the logits and the loss), which a pipeline's first and last model chunks hold.
    double leading = 0, trailing = 0;
    // What each further micro-batch held at once adds (a pipeline stage's in-flight micro-batches): everything
    // but the one block being recomputed, which only the micro-batch in its backward pass has.
    double per_micro_batch() const { return saved - recompute_block; }
};

// Saved activations of one micro-batch (the features' batch) under `kind`.
ActivationMemory activation_memory(const ModelFeatures& features, Precision precision, CheckpointKind kind);

// What one micro-batch's forward pass keeps for the backward, stretch by stretch in the order it runs (the memory
// timeline walks it, run/memory_timeline.hpp): each named block's copies, and the layers outside blocks between
// them (merged). The same rules as activation_memory, which the once-alive recompute block adds to.
struct KeptStretch {
    std::string name;        // the block's name, or "" for layers outside named blocks
    double kept_per_copy = 0;
    std::int64_t copies = 1;
};
std::vector<KeptStretch> kept_activations(const ModelFeatures& features, Precision precision, CheckpointKind kind);

// Whether the backward pass runs `kernel` (a forward kernel of `layer`) again under `kind`.
bool is_recomputed(const LayerFeatures& layer, const Kernel& kernel, CheckpointKind kind);

// Checkpoint units executed per forward pass, whether or not checkpointing is on.
std::int64_t checkpoint_units(const ModelFeatures& features);

}  // namespace prenet
