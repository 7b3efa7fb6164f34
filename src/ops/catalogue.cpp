#include "ops/catalogue.hpp"

#include "core/error.hpp"
#include "ops/op_support.hpp"

namespace prenet {

const OpCatalogue& OpCatalogue::instance() {
    static const OpCatalogue catalogue = [] {
        OpCatalogue c;
        register_linear_ops(c);
        register_conv_ops(c);
        register_pool_ops(c);
        register_norm_ops(c);
        register_embedding_ops(c);
        register_attention_ops(c);
        register_mlp_ops(c);
        register_moe_ops(c);
        register_rnn_ops(c);
        register_ssm_ops(c);
        register_elementwise_ops(c);
        register_loss_ops(c);
        return c;
    }();
    return catalogue;
}

const OpDef& OpCatalogue::find(const std::string& kind) const {
    auto it = index_.find(kind);
    if (it != index_.end()) return *it->second;
    std::string known;
    for (const auto& [name, def] : ops_) known += (known.empty() ? "" : ", ") + name;
    throw Error("unknown layer type '" + kind + "' (known: " + known + ")");
}

std::vector<std::string> OpCatalogue::kinds() const {
    std::vector<std::string> out;
    for (const auto& [name, def] : ops_) out.push_back(name);
    return out;
}

void OpCatalogue::add(OpDef def) {
    if (def.traits.autocast == AutocastClass::unset)
        throw Error("op catalogue: layer type '" + def.kind + "' declares no autocast class");
    if (ops_.count(def.kind)) throw Error("op catalogue: layer type '" + def.kind + "' is registered twice");
    std::string kind = def.kind;
    index_[kind] = &(ops_[kind] = std::move(def));  // map nodes stay where they are
}

void infer_shape(Layer& layer) {
    const OpDef& def = OpCatalogue::instance().find(layer.kind);
    if (layer.input.empty()) throw Error("layer '" + layer.name + "' (" + layer.kind + ") has no input shape");
    for (auto d : layer.input)
        if (d <= 0)
            throw Error("layer '" + layer.name + "' (" + layer.kind + ") has a non-positive input dimension " +
                        to_string(layer.input));
    def.infer(layer);
    elements(layer.output);  // rejects outputs whose size overflows
}

const OpTraits& op_traits(const Layer& layer) { return OpCatalogue::instance().find(layer.kind).traits; }

bool is_attention(const std::string& kind) {
    return OpCatalogue::instance().find(kind).traits.tensor_split == TensorSplit::heads;
}

bool is_expert_layer(const Layer& layer) { return op_traits(layer).routes_to_experts; }

LayerCost layer_cost(const Layer& layer, Precision precision) {
    LayerCost cost;
    OpCatalogue::instance().find(layer.kind).cost(layer, precision, cost);
    // A layer that runs weights another layer owns (Zamba2's shared transformer blocks, invoked at several
    // depths): its compute and its weight gradients are its own, its parameters are counted once, at the owner.
    if (ops::bool_attr(layer, "shares_weights", false)) cost.params = 0;
    return cost;
}

}  // namespace prenet
