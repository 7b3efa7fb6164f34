#pragma once
// Builds a Model layer by layer while tracking the current tensor shape, so every layer gets its input shape
// and is validated (shape inference) as it is added. Branches (residual shortcuts) save and restore the shape.
// Every importer's text passes here: the model's, blocks' and layers' names, string attributes and unknown-op
// names are made valid UTF-8 (core/utf8.hpp) as they are given, so no reply can carry bytes JSON cannot.
#include <functional>
#include <map>
#include <string>

#include "graph/model.hpp"

namespace prenet {

// Validates a layer's attrs against its input shape and sets its output shape; throws Error. The op
// catalogue's infer_shape (ops/catalogue.hpp) is the one the importers pass: graph/ knows no layer kinds.
using ShapeInference = std::function<void(Layer&)>;

class ModelBuilder {
public:
    ModelBuilder(std::string name, Shape input, ShapeInference infer);

    // Appends a layer fed by the current shape; the current shape becomes its output. Throws Error on bad attrs,
    // on an integer attribute or a dimension over limits::dimension, and past limits::layers layers.
    Layer& add(const std::string& kind, const std::string& name, json attrs = json::object());
    // Later layers go into a new block executed `repeat` times (identical repeated layers stored once).
    void begin_block(const std::string& name, std::int64_t repeat = 1);
    void end_block();
    // An op of the imported graph or document that maps to no layer kind (the importer costs it itself): counted
    // by name, listed in the model's unknown_ops by finish(). Indexed by name: 10^5 distinct ops stay cheap.
    void count_unknown(const std::string& op, std::int64_t count = 1);

    const Shape& shape() const { return shape_; }
    // Sets the current shape (a branch's input, an importer's shape change that adds no layer: a Keras
    // ZeroPadding, a Permute). Throws Error on a dimension over limits::dimension or a tensor over
    // limits::tensor_elements, as add() does for every layer's output, so no shape escapes the limits; `what`
    // names the shape in that message.
    void set_shape(Shape shape, const std::string& what = "shape");
    // Layers added so far (a repeated block's counted once): 0 when the model computes nothing.
    std::int64_t layer_count() const { return layer_count_; }

    Model finish(const std::string& domain, std::int64_t tokens_per_sample);

private:
    Model model_;
    Shape shape_;
    ShapeInference infer_;
    bool first_layer_ = true;
    bool in_block_ = false;
    std::int64_t layer_count_ = 0;
    std::map<std::string, std::int64_t> unknown_;
};

}  // namespace prenet
