#include "graph/builder.hpp"

#include "core/error.hpp"

namespace prenet {

ModelBuilder::ModelBuilder(std::string name, Shape input, ShapeInference infer)
    : shape_(std::move(input)), infer_(std::move(infer)) {
    model_.name = std::move(name);
    if (!infer_) throw Error("model '" + model_.name + "': no shape inference given");
    if (shape_.empty() || shape_[0] <= 0) throw Error("model '" + model_.name + "': batch size must be positive");
    model_.batch = shape_[0];
}

Layer& ModelBuilder::add(const std::string& kind, const std::string& name, json attrs) {
    if (!in_block_ && (model_.blocks.empty() || model_.blocks.back().repeat != 1 || !model_.blocks.back().name.empty()))
        model_.blocks.push_back(Block{"", 1, {}});
    Layer layer;
    layer.kind = kind;
    layer.name = name;
    layer.attrs = std::move(attrs);
    layer.input = shape_;
    layer.needs_input_grad = !first_layer_;
    first_layer_ = false;
    infer_(layer);
    shape_ = layer.output;
    model_.blocks.back().layers.push_back(std::move(layer));
    return model_.blocks.back().layers.back();
}

void ModelBuilder::begin_block(const std::string& name, std::int64_t repeat) {
    if (repeat <= 0) throw Error("block '" + name + "': repeat count must be positive");
    model_.blocks.push_back(Block{name, repeat, {}});
    in_block_ = true;
}

void ModelBuilder::end_block() { in_block_ = false; }

Model ModelBuilder::finish(const std::string& domain, std::int64_t tokens_per_sample) {
    model_.domain = domain;
    model_.tokens_per_sample = tokens_per_sample;
    std::vector<Block> kept;
    for (auto& b : model_.blocks)
        if (!b.layers.empty()) kept.push_back(std::move(b));
    model_.blocks = std::move(kept);
    return std::move(model_);
}

}  // namespace prenet
