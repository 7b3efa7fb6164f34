#include "graph/builder.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/utf8.hpp"

namespace prenet {
namespace {

// Every dimension of a shape within limits::dimension and the whole within limits::tensor_elements.
void check_shape(const Shape& shape, const std::string& model, const std::string& what) {
    std::int64_t n = 1;
    for (auto d : shape) {
        if (d > limits::dimension)
            throw Error("model '" + model + "': " + what + " " + to_string(shape) + " has a dimension over the limit of " +
                        std::to_string(limits::dimension));
        if (d > 0 && n > limits::tensor_elements / d)
            throw Error("model '" + model + "': " + what + " " + to_string(shape) + " has more than " +
                        std::to_string(limits::tensor_elements) + " elements (the limit on one tensor)");
        n *= d > 0 ? d : 1;
    }
}

// Every integer in a layer's attributes (nested lists included: kernel_size [3, 3]) within +-limits::dimension,
// before shape inference or any cost formula multiplies them. Floats must be finite and within the same bound.
// Strings (an imported op's name) are made valid UTF-8.
void check_attrs(json& attrs, const std::string& layer) {
    std::vector<std::pair<json*, std::string>> todo{{&attrs, ""}};
    while (!todo.empty()) {
        auto [v, key] = todo.back();
        todo.pop_back();
        if (v->is_structured()) {
            for (auto it = v->begin(); it != v->end(); ++it)
                todo.push_back({&*it, v->is_object() ? it.key() : key});
            continue;
        }
        if (v->is_string()) {
            *v = valid_utf8(v->get_ref<const std::string&>());
            continue;
        }
        bool too_big = false;
        if (v->is_number_unsigned()) too_big = v->get<std::uint64_t>() > std::uint64_t(limits::dimension);
        else if (v->is_number_integer())
            too_big = v->get<std::int64_t>() > limits::dimension || v->get<std::int64_t>() < -limits::dimension;
        else if (v->is_number_float())
            too_big = !std::isfinite(v->get<double>()) || std::fabs(v->get<double>()) > double(limits::dimension);
        if (too_big)
            throw Error("layer '" + layer + "': '" + key + "' is " + v->dump() + ", out of the range +-" +
                        std::to_string(limits::dimension) + " (the limit on any dimension)")
                .at_attr(key);
    }
}

}  // namespace

ModelBuilder::ModelBuilder(std::string name, Shape input, ShapeInference infer)
    : shape_(std::move(input)), infer_(std::move(infer)) {
    model_.name = valid_utf8(name);
    if (!infer_) throw Error("model '" + model_.name + "': no shape inference given");
    if (shape_.empty() || shape_[0] <= 0) throw Error("model '" + model_.name + "': batch size must be positive");
    model_.batch = shape_[0];
    check_shape(shape_, model_.name, "input shape");
}

Layer& ModelBuilder::add(const std::string& kind, const std::string& given_name, json attrs) {
    const std::string name = valid_utf8(given_name);
    if (!in_block_ && (model_.blocks.empty() || model_.blocks.back().repeat != 1 || !model_.blocks.back().name.empty()))
        model_.blocks.push_back(Block{"", 1, {}});
    if (++layer_count_ > limits::layers)
        throw Error("model '" + model_.name + "' has more than " + std::to_string(limits::layers) +
                    " layers (the limit on stored layers; a repeated block counts once)");
    check_attrs(attrs, name);
    Layer layer;
    layer.kind = kind;
    layer.name = name;
    layer.attrs = std::move(attrs);
    layer.input = shape_;
    layer.needs_input_grad = !first_layer_;
    first_layer_ = false;
    infer_(layer);
    check_shape(layer.output, model_.name, "layer '" + name + "' output");
    shape_ = layer.output;
    model_.blocks.back().layers.push_back(std::move(layer));
    return model_.blocks.back().layers.back();
}

void ModelBuilder::set_shape(Shape shape, const std::string& what) {
    check_shape(shape, model_.name, what);
    shape_ = std::move(shape);
}

void ModelBuilder::begin_block(const std::string& given_name, std::int64_t repeat) {
    const std::string name = valid_utf8(given_name);
    if (repeat <= 0) throw Error("block '" + name + "': repeat count must be positive");
    if (repeat > limits::dimension)
        throw Error("block '" + name + "': repeat count " + std::to_string(repeat) + " is over the limit of " +
                    std::to_string(limits::dimension));
    model_.blocks.push_back(Block{name, repeat, {}});
    in_block_ = true;
}

void ModelBuilder::end_block() { in_block_ = false; }

void ModelBuilder::count_unknown(const std::string& op, std::int64_t count) { unknown_[valid_utf8(op)] += count; }

Model ModelBuilder::finish(const std::string& domain, std::int64_t tokens_per_sample) {
    model_.domain = domain;
    model_.tokens_per_sample = tokens_per_sample;
    std::vector<Block> kept;
    for (auto& b : model_.blocks)
        if (!b.layers.empty()) kept.push_back(std::move(b));
    model_.blocks = std::move(kept);
    for (const auto& [op, count] : unknown_) model_.unknown_ops.push_back({op, count});
    return std::move(model_);
}

}  // namespace prenet
