#pragma once
// The op catalogue: for every layer kind, how to validate it and infer its output shape, and what it costs
// (parameters, FLOPs, bytes, saved activations, kernels). One source file per layer family registers its kinds.
#include <functional>
#include <utility>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/model.hpp"
#include "ops/kernel.hpp"

namespace prenet {

// How torch.autocast (mixed fp16/bf16 training) treats a layer: the precision it runs at and the dtype it hands
// on decide its casts and the type of the stream between layers (ops/features.cpp).
enum class AutocastClass {
    unset,          // not declared: OpCatalogue::add rejects it, so a new kind cannot be silently mis-costed
    half,           // matmuls or convolutions run in half precision, casting an fp32 input and the weights
    fp32_list,      // on autocast's fp32 list (norms, softmax, losses): a half-precision input is cast to fp32
    fp32_output,    // produces its fp32 weights' type (embeddings), whatever it receives
    follows_input,  // element-wise or shape-only: runs in the type it receives
};

// How Megatron-style tensor parallelism splits a layer of this kind over `tp` devices (parallel/
// tensor_parallel.cpp applies it; docs/parallel.md): replicated layers run whole on every device (on 1/tp of the
// tokens with sequence parallelism), attention splits its heads, MLPs their hidden units (column- then row-
// parallel linears), embeddings their vocabulary rows and a loss its classes (Megatron's vocab-parallel output).
enum class TensorSplit { replicated, heads, hidden_units, vocabulary, classes };

// A linear projection inside a layer, as PEFT sees it (a LoRA target, a bitsandbytes-quantised weight):
// `target` is PEFT's short name (q, k, v, o, gate, up, down; "linear" for a plain dense layer), `count` the
// independent copies (a mixture's experts), each multiplying `rows` x `in` by an `in` x `out` weight.
// `reads_layer_input`: its input is the layer's input (q, k, v, gate, up), whose gradient the layer owes only
// when the layer needs an input gradient.
struct LinearModule {
    std::string target;
    std::int64_t in = 0, out = 0, rows = 0, count = 1;
    bool reads_layer_input = false;
};

// What a kind's cost depends on beyond its own shapes: how it meets its neighbours and torch.autocast.
struct OpTraits {
    AutocastClass autocast = AutocastClass::unset;
    bool saves_input = false;  // keeps its input for the backward pass (for its weight or input gradient)
    // Keeps its output for the backward pass (PyTorch's ReLU, sigmoid, tanh); may depend on the attrs. Null: never.
    std::function<bool(const Layer&)> saves_output;
    // Its fp32 output feeds the residual adds (token and position embeddings, the class token): under autocast
    // the model then carries an fp32 residual stream.
    bool starts_fp32_stream = false;
    // Adds a branch back onto the residual stream: with an fp32 stream the sum is promoted to fp32.
    bool adds_to_residual_stream = false;
    // Eager attention's softmax runs in fp32 under autocast (costed through the layer's `softmax_fp32` attr).
    bool fp32_softmax_under_autocast = false;
    TensorSplit tensor_split = TensorSplit::replicated;
    // Routes tokens to experts, each device of an expert-parallel group holding some of them (the `expert_shards`
    // attribute): its weights are expert parameters, replicated fewer times than the dense ones.
    bool routes_to_experts = false;
    // Its linear projections (fine-tuning's LoRA targets, ops/finetune.cpp). Null: it has none.
    std::function<std::vector<LinearModule>(const Layer&)> linear_modules;

    bool keeps_output(const Layer& layer) const { return saves_output && saves_output(layer); }

    // For the registrations: OpTraits::of(AutocastClass::half).saving_input() reads as what it declares.
    static OpTraits of(AutocastClass autocast_class) {
        OpTraits t;
        t.autocast = autocast_class;
        return t;
    }
    OpTraits& saving_input() { saves_input = true; return *this; }
    OpTraits& saving_output(std::function<bool(const Layer&)> when) { saves_output = std::move(when); return *this; }
    OpTraits& starting_fp32_stream() { starts_fp32_stream = true; return *this; }
    OpTraits& adding_to_residual_stream() { adds_to_residual_stream = true; return *this; }
    OpTraits& with_fp32_softmax_under_autocast() { fp32_softmax_under_autocast = true; return *this; }
    OpTraits& split_by(TensorSplit split) { tensor_split = split; return *this; }
    OpTraits& routing_to_experts() { routes_to_experts = true; return *this; }
    OpTraits& with_linear_modules(std::function<std::vector<LinearModule>(const Layer&)> modules) {
        linear_modules = std::move(modules);
        return *this;
    }
};

struct OpDef {
    std::string kind;
    std::string summary;  // one line for the docs and `prenet layers`
    std::function<void(Layer&)> infer;  // validates attrs + input, sets layer.output; throws Error
    std::function<void(const Layer&, Precision, LayerCost&)> cost;
    OpTraits traits;  // its autocast class must be declared (OpCatalogue::add)
};

class OpCatalogue {
public:
    static const OpCatalogue& instance();
    const OpDef& find(const std::string& kind) const;  // throws Error listing known kinds
    std::vector<std::string> kinds() const;
    void add(OpDef def);  // throws Error for a kind without an autocast class or registered twice

private:
    std::map<std::string, OpDef> ops_;  // in name order, for listing
    // The same by hash: find runs for every layer of every stage of every layout a plan search weighs.
    std::unordered_map<std::string, const OpDef*> index_;
};

// Validates `layer` and sets its output shape.
void infer_shape(Layer& layer);
// The catalogue entry's traits of a layer's kind (throws Error for an unknown kind).
const OpTraits& op_traits(const Layer& layer);
// Whether a kind is attention with its own projections (attention, mla_attention; not a bare attention_core):
// the kinds whose heads tensor parallelism splits. Selective checkpointing recomputes their core, a
// context-parallel ring overlaps them, and their `flash` attribute is the attention kernel the model runs.
// Throws Error for an unknown kind.
bool is_attention(const std::string& kind);
// Whether a layer's kind routes tokens to experts (the trait routes_to_experts: moe), which expert parallelism
// splits. Throws Error for an unknown kind.
bool is_expert_layer(const Layer& layer);
// The layer's features and kernels for one execution at `precision`.
LayerCost layer_cost(const Layer& layer, Precision precision);

// Registration entry points, one per family file.
void register_linear_ops(OpCatalogue&);
void register_conv_ops(OpCatalogue&);
void register_pool_ops(OpCatalogue&);
void register_norm_ops(OpCatalogue&);
void register_embedding_ops(OpCatalogue&);
void register_attention_ops(OpCatalogue&);
void register_mlp_ops(OpCatalogue&);
void register_moe_ops(OpCatalogue&);
void register_rnn_ops(OpCatalogue&);
void register_ssm_ops(OpCatalogue&);
void register_elementwise_ops(OpCatalogue&);
void register_loss_ops(OpCatalogue&);

}  // namespace prenet
