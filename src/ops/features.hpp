#pragma once
// Whole-model computational features: per layer (cost of one execution, times its block's repeat count)
// and in total. These are what `prenet features` prints and what the predictor consumes.
#include <vector>

#include "graph/model.hpp"
#include "ops/finetune.hpp"
#include "ops/kernel.hpp"

namespace prenet {

struct LayerFeatures {
    Layer layer;  // a copy: features outlive the model they were computed from
    std::string block;
    std::int64_t repeat = 1;
    LayerCost cost;  // of one execution
    bool input_fp32 = false;  // the layer receives an fp32 tensor although training is mixed (autocast)
    // Fine-tuning (ops/finetune.hpp): its own parameters are frozen; what it trains per execution (its
    // parameters unless frozen, plus LoRA adapters); false when nothing before or in it trains, so that it
    // runs forward only (no backward, no recompute, nothing kept).
    bool frozen = false;
    std::int64_t trainable_params = 0;
    bool runs_backward = true;
    // The model's block it belongs to: consecutive blocks may share a name and repeat (a pipeline stage's
    // chunks, each one copy of the same block), and each is a checkpoint unit of its own.
    size_t block_index = 0;
};

struct ModelFeatures {
    std::int64_t params = 0;  // every parameter, LoRA adapters included (PEFT's "all params")
    // Fine-tuning: what the optimizer updates (all of params without it), the adapters' share, and the frozen
    // base: unquantised parameters, and the quantised ones with their stored bytes (scales included).
    std::int64_t trainable_params = 0, adapter_params = 0;
    double frozen_params = 0, quantized_params = 0, quantized_weight_bytes = 0;
    double largest_dequantized_bytes = 0;  // the largest weight a quantised base dequantises at once
    double macs = 0, forward_flops = 0, backward_input_flops = 0, backward_weight_flops = 0;
    double forward_bytes = 0, saved_activation_bytes = 0;
    // Under autocast: the half-precision copies of the weights that matmuls and convolutions keep for the
    // backward pass (2 bytes per weight, alive from the forward until the backward has used them).
    double half_weight_copy_bytes = 0;
    // What every parallel layout reads of a stage (parallel/data_parallel.cpp), counted here once: the routed
    // experts' parameters (their router and shared experts are replicated like the dense ones), and the
    // parameters of the largest unit FSDP gathers at once (one block copy, or one layer outside blocks).
    double routed_expert_params = 0, largest_unit_params = 0;
    // A pipeline stage's copies of weights tied to another stage's table (parallel/pipeline.cpp's `tied_copy`):
    // their gradients are summed with the table's once a step, an all-reduce between the two stages (Megatron's
    // _allreduce_word_embedding_grads) that nothing overlaps. 0 outside a pipeline.
    double tied_copy_params = 0;
    bool has_conv = false;  // some kernel is a convolution (what run/memory_format.cpp's layout transposes look for)
    std::vector<LayerFeatures> layers;
    double backward_flops() const { return backward_input_flops + backward_weight_flops; }
};

// `mixed` matters for fp16 and bf16 only (core/precision.hpp); `finetune` says what trains (all by default).
ModelFeatures compute_features(const Model& model, Precision precision, MixedRecipe mixed = MixedRecipe::autocast,
                               const FineTune& finetune = FineTune{});
json to_json(const ModelFeatures& features);

}  // namespace prenet
