#pragma once
// The op catalogue: for every layer kind, how to validate it and infer its output shape, and what it costs
// (parameters, FLOPs, bytes, saved activations, kernels). One source file per layer family registers its kinds.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "ops/kernel.hpp"

namespace prenet {

struct OpDef {
    std::string kind;
    std::string summary;  // one line for the docs and `prenet layers`
    std::function<void(Layer&)> infer;  // validates attrs + input, sets layer.output; throws Error
    std::function<void(const Layer&, Precision, LayerCost&)> cost;
};

class OpCatalogue {
public:
    static const OpCatalogue& instance();
    const OpDef& find(const std::string& kind) const;  // throws Error listing known kinds
    std::vector<std::string> kinds() const;
    void add(OpDef def);

private:
    std::map<std::string, OpDef> ops_;
};

// Validates `layer` and sets its output shape.
void infer_shape(Layer& layer);
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
void register_elementwise_ops(OpCatalogue&);
void register_loss_ops(OpCatalogue&);

}  // namespace prenet
