#include "importers/keras_json.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "graph/builder.hpp"
#include "ops/catalogue.hpp"
#include "ops/window.hpp"

namespace prenet {
namespace {

const std::set<std::string> kModelClasses = {"Sequential", "Functional", "Model"};

bool is_model_object(const json& j) {
    return j.is_object() && j.contains("class_name") && j["class_name"].is_string() &&
           kModelClasses.count(j["class_name"].get<std::string>()) && j.contains("config") &&
           (j["config"].is_object() || (j["class_name"] == "Sequential" && j["config"].is_array()));
}

// A Sequential's layers: config.layers, or the config itself in Keras <= 2.1 and TensorFlow.js' older form.
const json& layer_list(const json& config) {
    static const json none = json::array();
    if (config.is_array()) return config;
    auto it = config.find("layers");
    return it != config.end() && it->is_array() ? *it : none;
}

// The model object inside the document: to_json() itself, an HDF5 file's model_config, or a TensorFlow.js
// layers model's modelTopology (which holds either).
const json* unwrap(const json& doc) {
    if (is_model_object(doc)) return &doc;
    if (!doc.is_object()) return nullptr;
    for (const char* key : {"modelTopology", "model_config"}) {
        auto it = doc.find(key);
        if (it == doc.end() || !it->is_object()) continue;
        if (const json* inner = unwrap(*it)) return inner;
    }
    return nullptr;
}

[[noreturn]] void fail(const std::string& where, const std::string& message) {
    throw Error("Keras JSON: " + where + ": " + message).at_path(where);
}

// Typed access to one layer's config with errors that name the layer.
class LayerConfig {
public:
    LayerConfig(const json& j, std::string where) : j_(j), where_(std::move(where)) {}
    const json* find(const char* key) const {
        auto it = j_.find(key);
        return it == j_.end() || it->is_null() ? nullptr : &*it;
    }
    std::int64_t integer(const char* key, std::int64_t fallback, std::int64_t lo = 0) const {
        const json* v = find(key);
        if (!v) return fallback;
        return to_int(key, *v, lo);
    }
    std::int64_t required(const char* key) const {
        if (!find(key)) fail(where_, std::string("missing field '") + key + "'");
        std::int64_t v = integer(key, 0);
        if (v <= 0) fail(where_, std::string("field '") + key + "' must be positive");
        return v;
    }
    // An int or a list of `rank` ints (Keras writes kernel_size as [3, 3]; tf.keras 1 also as 3).
    std::vector<std::int64_t> ints(const char* key, size_t rank, std::int64_t fallback) const {
        const json* v = find(key);
        if (!v) return std::vector<std::int64_t>(rank, fallback);
        if (v->is_array()) {
            if (v->size() != rank)
                fail(where_, std::string("field '") + key + "' must hold " + std::to_string(rank) + " integers, got " +
                                 v->dump());
            std::vector<std::int64_t> out;
            for (const auto& x : *v) out.push_back(to_int(key, x, 1));
            return out;
        }
        return std::vector<std::int64_t>(rank, to_int(key, *v, 1));
    }
    bool boolean(const char* key, bool fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) fail(where_, std::string("field '") + key + "' must be true or false");
        return v->get<bool>();
    }
    double number(const char* key, double fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_number()) fail(where_, std::string("field '") + key + "' must be a number");
        return v->get<double>();
    }
    std::string text(const char* key, const std::string& fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_string()) fail(where_, std::string("field '") + key + "' must be a string");
        return v->get<std::string>();
    }
    // Keras 3 writes an activation as a name or as {"class_name": ..., "config": ...} for a serialised function.
    std::string activation(const char* key) const {
        const json* v = find(key);
        if (!v) return "linear";
        if (v->is_string()) return v->get<std::string>();
        if (v->is_object() && v->contains("class_name") && (*v)["class_name"].is_string()) {
            std::string name = (*v)["class_name"];
            if (v->contains("config") && (*v)["config"].is_string()) name = (*v)["config"];
            return name;
        }
        fail(where_, std::string("field '") + key + "' must name an activation");
    }
    // An axis: an int or a list of one int (BatchNormalization writes [3] in Keras 3), counted from the end when
    // negative; integers only, within +-limits::dimension, never cast from 1.5 or 2^64 - 1.
    std::int64_t axis(const char* key, std::int64_t fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (v->is_array()) {
            if (v->size() != 1)
                fail(where_, std::string("field '") + key + "' must be one axis (an integer or a list of one), got " +
                                 v->dump());
            return to_int(key, v->front(), -limits::dimension);
        }
        return to_int(key, *v, -limits::dimension);
    }
    std::int64_t to_int(const char* key, const json& v, std::int64_t lo) const {
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(limits::dimension))
            fail(where_, std::string("field '") + key + "' is " + v.dump() + ", over the limit of " +
                             std::to_string(limits::dimension) + " on any dimension");
        if (!v.is_number_integer())
            fail(where_, std::string("field '") + key + "' must be an integer, got " + v.dump());
        std::int64_t x = v.get<std::int64_t>();
        if (x < lo || x > limits::dimension)
            fail(where_, std::string("field '") + key + "' is " + std::to_string(x) + ", out of the range " +
                             std::to_string(lo) + " to " + std::to_string(limits::dimension));
        return x;
    }
    const std::string& where() const { return where_; }
    const json& raw() const { return j_; }

private:
    const json& j_;
    std::string where_;
};

// Keras' output length of a convolution or pooling window: its padding words on the op catalogue's rule
// ("valid" pads nothing; 0 when the window does not fit).
std::int64_t window_output(std::int64_t n, std::int64_t span, std::int64_t stride, const std::string& padding) {
    if (padding == "same" || padding == "causal") return ops::same_padding_output(n, stride);
    return ops::window_output(n, span, stride, 0, false).value_or(0);
}

class Importer {
public:
    Importer(ModelBuilder& b, const ModelInputs& in, std::vector<std::string>& notes)
        : b_(b), in_(in), notes_(notes) {}

    // Runs a layer (or a nested model) on its input tensors' shapes (Keras layout, batch first) and returns the
    // shapes of its outputs. `next_shape` is the shape Keras recorded for its output, if it did (Keras 3).
    std::vector<Shape> apply(const json& layer, const std::vector<Shape>& inputs, const std::string& where,
                             const std::optional<Shape>& recorded) {
        if (!layer.is_object() || !layer.contains("class_name") || !layer["class_name"].is_string())
            fail(where, "a layer must be an object with a string 'class_name'");
        const std::string cls = layer["class_name"];
        static const json empty = json::object();
        const json& config = layer.contains("config") && layer["config"].is_object() ? layer["config"] : empty;
        std::string name = config.contains("name") && config["name"].is_string() ? config["name"].get<std::string>()
                                                                                  : where;
        if (inputs.empty()) fail(where, "layer '" + name + "' has no input");
        if (kModelClasses.count(cls)) {
            if (!is_model_object(layer))
                fail(where, "the nested " + cls + " model '" + name + "' needs a 'config' object (a list for a Sequential)");
            return run_model(layer, inputs, name);
        }
        LayerConfig c(config, where + " ('" + name + "', " + cls + ")");
        std::optional<Shape> out = lower(cls, c, name, inputs);
        if (out) return {*out};
        // A layer PreNeT has no kind for: costed memory-bound over its tensors, as an ONNX graph's unknown ops
        // are (one rule for every importer), counted in the model's unknown_ops, and said in its notes.
        Shape assumed = recorded ? *recorded : inputs[0];
        b_.set_shape(inputs[0]);
        add("memory_bound", name, {{"op", cls}, {"output_shape", assumed}});
        ++unknown_[cls];
        notes_.push_back("layer '" + name + "' (" + cls + ") has no PreNeT kind: costed as memory-bound over its "
                         "tensors, its parameters not counted; its output is taken as " + to_string(assumed));
        return {assumed};
    }

    std::vector<Shape> run_model(const json& model, const std::vector<Shape>& inputs, const std::string& name) {
        if (++depth_ > 16) fail(name, "models nested more than 16 deep");
        const json& config = model["config"];
        std::vector<Shape> out = model["class_name"] == "Sequential" ? run_sequential(config, inputs, name)
                                                                      : run_functional(config, inputs, name);
        // Every caller reads the first output (a TimeDistributed's inner model, the next Sequential layer): a
        // model with none (a Functional of only InputLayers whose output_layers name nothing it made) is refused.
        if (out.empty())
            fail(name, "the model has no output: no layer after its InputLayers, and no 'output_layers' entry naming "
                       "a tensor it makes");
        --depth_;
        return out;
    }

    Shape input_shape_of(const json& shape_list, const std::string& where) {
        if (!shape_list.is_array() || shape_list.empty())
            fail(where, "the input shape must be a list [null, dims...], got " + shape_list.dump());
        Shape s = {in_.batch};
        for (size_t i = 1; i < shape_list.size(); ++i) {
            const json& d = shape_list[i];
            if (d.is_null()) {
                s.push_back(0);  // resolved below
                continue;
            }
            if (d.is_number_unsigned() && d.get<std::uint64_t>() > std::uint64_t(limits::dimension))
                fail(where, "input dim " + d.dump() + " is over the limit of " + std::to_string(limits::dimension));
            if (!d.is_number_integer() || d.get<std::int64_t>() <= 0)
                fail(where, "the input shape must hold positive integers or null, got " + shape_list.dump());
            s.push_back(d.get<std::int64_t>());
        }
        // --seq sets a sequence's length ([tokens] or [steps, features]); --image an image's height and width.
        if (s.size() == 4) {
            for (size_t i = 1; i <= 2; ++i)
                if (in_.image) s[i] = in_.image;
        } else if (s.size() >= 2 && s.size() <= 3 && in_.seq) {
            s[1] = in_.seq;
        }
        for (size_t i = 1; i < s.size(); ++i)
            if (s[i] == 0)
                fail(where, "the input shape " + shape_list.dump() + " leaves a dim open (null): give " +
                                (s.size() == 4 ? "--image" : "--seq") + " for it");
        return s;
    }

private:
    std::vector<Shape> run_sequential(const json& config, std::vector<Shape> inputs, const std::string& name) {
        const json& layers = layer_list(config);
        if (layers.empty()) fail(name, "a Sequential model needs a non-empty 'layers' list");
        for (size_t i = 0; i < layers.size(); ++i) {
            const json& layer = layers[i];
            if (layer.is_object() && layer.value("class_name", json()) == "InputLayer") continue;
            std::optional<Shape> recorded;
            if (i + 1 < layers.size()) recorded = recorded_input(layers[i + 1]);
            inputs = apply(layer, {inputs.front()}, name + ".layers[" + std::to_string(i) + "]", recorded);
        }
        return inputs;
    }

    // Keras 3 records each layer's input shape in build_config: the shape an unmodelled layer before it gave.
    std::optional<Shape> recorded_input(const json& layer) {
        if (!layer.is_object() || !layer.contains("build_config") || !layer["build_config"].is_object()) return std::nullopt;
        const json& bc = layer["build_config"];
        if (!bc.contains("input_shape")) return std::nullopt;
        return recorded_shape(bc["input_shape"]);
    }

    std::optional<Shape> recorded_shape(const json& shape) {
        if (!shape.is_array() || shape.empty()) return std::nullopt;
        Shape s = {in_.batch};
        for (size_t i = 1; i < shape.size(); ++i) {
            const json& d = shape[i];
            if (!d.is_number_integer() || d.get<std::int64_t>() <= 0 || d.get<std::int64_t>() > limits::dimension)
                return std::nullopt;
            s.push_back(d.get<std::int64_t>());
        }
        return s;
    }

    struct TensorRef {
        std::string layer;
        std::int64_t node = 0, index = 0;
        std::optional<Shape> shape;  // as Keras 3 recorded it
    };

    // A reference to a tensor: Keras 2 ["name", node, index(, kwargs)], Keras 3 {"class_name": "__keras_tensor__",
    // "config": {"shape", "keras_history": ["name", node, index]}}.
    std::optional<TensorRef> tensor_ref(const json& j) {
        if (j.is_object() && j.value("class_name", json()) == "__keras_tensor__" && j.contains("config") &&
            j["config"].is_object()) {
            const json& cfg = j["config"];
            if (!cfg.contains("keras_history")) return std::nullopt;
            auto ref = tensor_ref(cfg["keras_history"]);
            if (ref && cfg.contains("shape")) ref->shape = recorded_shape(cfg["shape"]);
            return ref;
        }
        if (j.is_array() && j.size() >= 3 && j[0].is_string() && j[1].is_number_integer() && j[2].is_number_integer()) {
            std::int64_t node = j[1].get<std::int64_t>(), index = j[2].get<std::int64_t>();
            if (node < 0 || index < 0 || node > limits::layers || index > limits::layers) return std::nullopt;
            return TensorRef{j[0].get<std::string>(), node, index, std::nullopt};
        }
        return std::nullopt;
    }

    void collect_tensors(const json& j, std::vector<TensorRef>& out, int depth = 0) {
        if (depth > 8) return;
        if (auto ref = tensor_ref(j)) {
            out.push_back(*ref);
            if (j.is_array() && j.size() >= 4 && j[3].is_object()) collect_kwargs(j[3], out, depth + 1);
            return;
        }
        if (j.is_array())
            for (const auto& x : j) collect_tensors(x, out, depth + 1);
    }

    // Tensors passed by keyword, in the order a layer takes them (MultiHeadAttention: query, value, key).
    void collect_kwargs(const json& kwargs, std::vector<TensorRef>& out, int depth) {
        for (const char* key : {"query", "value", "key"})
            if (kwargs.contains(key)) collect_tensors(kwargs[key], out, depth + 1);
    }

    std::vector<TensorRef> node_inputs(const json& node, const std::string& where) {
        std::vector<TensorRef> refs;
        if (node.is_object()) {  // Keras 3
            if (node.contains("args")) collect_tensors(node["args"], refs);
            if (node.contains("kwargs") && node["kwargs"].is_object()) collect_kwargs(node["kwargs"], refs, 0);
        } else if (node.is_array()) {  // Keras 2: a list of tensor references
            collect_tensors(node, refs);
        } else {
            fail(where, "an inbound node must be a list (Keras 2) or an object with 'args' (Keras 3)");
        }
        return refs;
    }

    std::vector<Shape> run_functional(const json& config, const std::vector<Shape>& outer, const std::string& name) {
        if (!config.is_object() || !config.contains("layers") || !config["layers"].is_array() || config["layers"].empty())
            fail(name, "a Functional model needs a non-empty 'layers' list");
        // Outputs by (layer name, call index).
        std::map<std::pair<std::string, std::int64_t>, std::vector<Shape>> produced;
        std::vector<std::string> input_names;
        if (config.contains("input_layers")) {
            std::vector<TensorRef> refs;
            collect_tensors(config["input_layers"], refs);
            for (const auto& r : refs) input_names.push_back(r.layer);
        }
        const json& layers = config["layers"];
        size_t next_input = 0;
        std::vector<Shape> last;
        for (size_t i = 0; i < layers.size(); ++i) {
            const json& layer = layers[i];
            std::string where = name + ".layers[" + std::to_string(i) + "]";
            if (!layer.is_object()) fail(where, "a layer must be an object");
            std::string lname = layer.contains("name") && layer["name"].is_string() ? layer["name"].get<std::string>()
                                : layer.contains("config") && layer["config"].is_object() && layer["config"].contains("name") &&
                                          layer["config"]["name"].is_string()
                                      ? layer["config"]["name"].get<std::string>()
                                      : where;
            if (layer.value("class_name", json()) == "InputLayer") {
                // A nested model's inputs are the tensors it is called on, in input_layers' order.
                auto pos = std::find(input_names.begin(), input_names.end(), lname);
                size_t k = pos != input_names.end() ? size_t(pos - input_names.begin()) : next_input;
                ++next_input;
                Shape s;
                if (depth_ > 1 && k < outer.size()) s = outer[k];
                else {
                    const json& cfg = layer.contains("config") ? layer["config"] : json();
                    const char* key = cfg.contains("batch_shape") ? "batch_shape" : "batch_input_shape";
                    if (!cfg.is_object() || !cfg.contains(key)) fail(where, "an InputLayer needs 'batch_shape' (Keras 3) or 'batch_input_shape'");
                    s = input_shape_of(cfg[key], where);
                }
                produced[{lname, 0}] = {s};
                continue;
            }
            if (!layer.contains("inbound_nodes") || !layer["inbound_nodes"].is_array())
                fail(where, "layer '" + lname + "' needs 'inbound_nodes'");
            const json& nodes = layer["inbound_nodes"];
            for (size_t n = 0; n < nodes.size(); ++n) {
                std::vector<TensorRef> refs = node_inputs(nodes[n], where);
                std::vector<Shape> ins;
                for (const auto& r : refs) {
                    auto it = produced.find({r.layer, r.node});
                    if (it == produced.end() || size_t(r.index) >= it->second.size())
                        fail(where, "layer '" + lname + "' reads '" + r.layer + "' (call " + std::to_string(r.node) +
                                        ", output " + std::to_string(r.index) +
                                        "), which no layer before it produces");
                    ins.push_back(it->second[size_t(r.index)]);
                }
                // The shape Keras 3 recorded for this output, for a layer that is not modelled: read from the
                // first later layer that takes it.
                std::optional<Shape> recorded = recorded_output(layers, i, lname, std::int64_t(n));
                last = apply(layer, ins, where, recorded);
                produced[{lname, std::int64_t(n)}] = last;
            }
        }
        if (config.contains("output_layers")) {
            std::vector<TensorRef> refs;
            collect_tensors(config["output_layers"], refs);
            std::vector<Shape> outs;
            for (const auto& r : refs) {
                auto it = produced.find({r.layer, r.node});
                if (it != produced.end() && size_t(r.index) < it->second.size()) outs.push_back(it->second[size_t(r.index)]);
            }
            if (!outs.empty()) return outs;
        }
        return last;
    }

    std::optional<Shape> recorded_output(const json& layers, size_t from, const std::string& lname, std::int64_t node) {
        for (size_t j = from + 1; j < layers.size() && j < from + 64; ++j) {
            const json& later = layers[j];
            if (!later.is_object() || !later.contains("inbound_nodes") || !later["inbound_nodes"].is_array()) continue;
            for (const auto& n : later["inbound_nodes"]) {
                if (!n.is_object()) continue;
                std::vector<TensorRef> refs = node_inputs(n, "");
                for (const auto& r : refs)
                    if (r.layer == lname && r.node == node && r.shape) return r.shape;
            }
        }
        return std::nullopt;
    }

    // Channels-last <-> PreNeT's channels-first.
    static Shape channels_first(const Shape& s) {
        if (s.size() < 3) return s;
        Shape out = {s[0], s.back()};
        out.insert(out.end(), s.begin() + 1, s.end() - 1);
        return out;
    }
    static Shape channels_last(const Shape& s) {
        if (s.size() < 3) return s;
        Shape out = {s[0]};
        out.insert(out.end(), s.begin() + 2, s.end());
        out.push_back(s[1]);
        return out;
    }

    Layer& add(const std::string& kind, const std::string& name, json attrs) {
        return b_.add(kind, name, std::move(attrs));
    }

    // Keras activation names as PreNeT activations; false for "linear".
    bool add_activation(const std::string& fn, const std::string& name, const LayerConfig& c) {
        static const std::map<std::string, std::string> names = {
            {"relu", "relu"}, {"relu6", "relu6"}, {"gelu", "gelu"}, {"silu", "silu"}, {"swish", "silu"},
            {"tanh", "tanh"}, {"sigmoid", "sigmoid"}, {"hard_sigmoid", "hardsigmoid"}, {"hard_swish", "hardswish"},
            {"hard_silu", "hardswish"}, {"leaky_relu", "leaky_relu"}, {"elu", "tanh"}, {"selu", "tanh"},
            {"softplus", "tanh"}, {"softsign", "tanh"}, {"exponential", "tanh"}, {"mish", "silu"}};
        if (fn == "linear" || fn.empty()) return false;
        if (fn == "softmax" || fn == "log_softmax") {
            add("softmax", name, json::object());
            return true;
        }
        auto it = names.find(fn);
        if (it == names.end()) fail(c.where(), "unsupported activation '" + fn + "'");
        add("activation", name, {{"function", it->second}});
        return true;
    }

    void activation_after(const LayerConfig& c, const std::string& name) {
        add_activation(c.activation("activation"), name + ".activation", c);
    }

    static std::string data_format(const LayerConfig& c) { return c.text("data_format", "channels_last"); }

    // The spatial convolution / pooling: Keras layout in, Keras layout out.
    Shape conv(const LayerConfig& c, const std::string& name, const Shape& x, size_t rank, const std::string& kind,
               std::int64_t out_channels, std::int64_t groups, bool bias, const std::vector<std::int64_t>& kernel,
               bool transposed = false) {
        if (x.size() != rank + 2)
            fail(c.where(), "expects a rank-" + std::to_string(rank + 2) + " input, got " + to_string(x));
        bool last = data_format(c) == "channels_last";
        Shape cf = last ? channels_first(x) : x;
        auto strides = c.ints("strides", rank, 1);
        auto dilation = c.ints("dilation_rate", rank, 1);
        std::string padding = c.text("padding", "valid");
        if (padding != "valid" && padding != "same" && padding != "causal")
            fail(c.where(), "padding must be valid, same or causal, got '" + padding + "'");
        Shape expected = {cf[0], out_channels};
        std::vector<std::int64_t> pads;
        for (size_t i = 0; i < rank; ++i) {
            std::int64_t span = checked_add(checked_mul(dilation[i], kernel[i] - 1, "kernel span"), 1, "kernel span");
            std::int64_t n = cf[2 + i], o;
            if (transposed) {
                o = padding == "same" ? checked_mul(n, strides[i], "output size")
                                      : checked_add(checked_mul(n - 1, strides[i], "output size"),
                                                    std::max(span, strides[i]), "output size");
            } else {
                o = window_output(n, span, strides[i], padding);
            }
            if (o <= 0) fail(c.where(), "the window " + std::to_string(span) + " is larger than the input " + to_string(x));
            expected.push_back(o);
            pads.push_back(padding == "valid" ? 0 : (span - 1) / 2);
        }
        b_.set_shape(cf);
        json attrs = {{"out_channels", out_channels}, {"kernel_size", kernel}, {"stride", strides},
                      {"padding", pads}, {"groups", groups}, {"bias", bias}};
        if (!transposed) attrs["dilation"] = dilation;
        Layer& layer = add(kind, name, attrs);
        // "same" keeps ceil(n / stride), which symmetric padding cannot always give: Keras' shape wins.
        layer.output = expected;
        b_.set_shape(expected);
        return last ? channels_last(expected) : expected;
    }

    Shape pool(const LayerConfig& c, const std::string& name, const Shape& x, size_t rank, bool max) {
        if (x.size() != rank + 2)
            fail(c.where(), "expects a rank-" + std::to_string(rank + 2) + " input, got " + to_string(x));
        bool last = data_format(c) == "channels_last";
        Shape cf = last ? channels_first(x) : x;
        auto size = c.ints("pool_size", rank, 2);
        auto strides = c.find("strides") ? c.ints("strides", rank, 1) : size;
        std::string padding = c.text("padding", "valid");
        Shape expected = {cf[0], cf[1]};
        for (size_t i = 0; i < rank; ++i) {
            std::int64_t o = window_output(cf[2 + i], size[i], strides[i], padding);
            if (o <= 0) fail(c.where(), "the pool window is larger than the input " + to_string(x));
            expected.push_back(o);
        }
        b_.set_shape(cf);
        std::vector<std::int64_t> pads(rank, 0);
        if (padding == "same")
            for (size_t i = 0; i < rank; ++i) pads[i] = size[i] / 2;
        Layer& layer = add(max ? "maxpool2d" : "avgpool2d", name,
                           {{"kernel_size", size}, {"stride", strides}, {"padding", pads}, {"ceil_mode", padding == "same"}});
        layer.output = expected;
        b_.set_shape(expected);
        return last ? channels_last(expected) : expected;
    }

    Shape rnn(const std::string& cls, const LayerConfig& c, const std::string& name, const Shape& x, bool bidirectional,
              const std::string& merge) {
        if (x.size() != 3) fail(c.where(), "a recurrent layer expects [batch, steps, features], got " + to_string(x));
        std::int64_t units = c.required("units");
        std::string kind = cls == "LSTM" || cls == "CuDNNLSTM" ? "lstm" : cls == "GRU" || cls == "CuDNNGRU" ? "gru" : "rnn";
        // Keras keeps one bias vector per gate; a GRU with reset_after (the default since tf.keras 2) two. A
        // document that does not say (TensorFlow.js, Keras 1) has reset_after off.
        std::int64_t vectors = kind == "gru" && (c.boolean("reset_after", false) || cls == "CuDNNGRU") ? 2 : 1;
        if (cls == "CuDNNLSTM") vectors = 2;
        b_.set_shape(x);
        add(kind, name, {{"hidden", units}, {"bidirectional", bidirectional}, {"bias", c.boolean("use_bias", true)},
                         {"bias_vectors", vectors}});
        std::int64_t width = bidirectional && merge == "concat" ? 2 * units : units;
        Shape out = {x[0], x[1], width};
        b_.set_shape(out);
        if (!c.boolean("return_sequences", false)) {
            add("select_token", name + ".last_step", json::object());
            out = {x[0], width};
        }
        return out;
    }

    // One call of a Keras layer, as a lowering reads it.
    struct LayerCall {
        const std::string& cls;
        const LayerConfig& config;
        const std::string& name;
        const std::vector<Shape>& inputs;  // at least one
        const Shape& x;                    // the first input
    };
    // Lowers one Keras class (or a family of them) to PreNeT kinds: the Keras layout's output shape, or
    // nullopt when this class is not modelled after all (a Bidirectional around a layer without a kind).
    using Lowering = std::optional<Shape> (Importer::*)(const LayerCall&);

    // One Keras layer lowered to PreNeT kinds; nullopt when it is not modelled.
    std::optional<Shape> lower(const std::string& cls, const LayerConfig& c, const std::string& name,
                               const std::vector<Shape>& inputs) {
        b_.set_shape(inputs[0]);
        Lowering lowering = lowering_for(cls);
        if (!lowering) return std::nullopt;
        return (this->*lowering)(LayerCall{cls, c, name, inputs, inputs[0]});
    }

    // The Keras classes PreNeT models, by name; the pooling classes by the pattern of their names, which carries
    // the rank.
    static Lowering lowering_for(const std::string& cls) {
        static const std::map<std::string, Lowering> by_class = {
            {"Dense", &Importer::lower_dense},
            {"Conv1D", &Importer::lower_conv},
            {"Conv2D", &Importer::lower_conv},
            {"Conv3D", &Importer::lower_conv},
            {"Convolution1D", &Importer::lower_conv},
            {"Convolution2D", &Importer::lower_conv},
            {"Convolution3D", &Importer::lower_conv},
            {"Conv2DTranspose", &Importer::lower_conv_transpose},
            {"DepthwiseConv1D", &Importer::lower_depthwise_conv},
            {"DepthwiseConv2D", &Importer::lower_depthwise_conv},
            {"SeparableConv1D", &Importer::lower_separable_conv},
            {"SeparableConv2D", &Importer::lower_separable_conv},
            {"SeparableConvolution2D", &Importer::lower_separable_conv},
            {"BatchNormalization", &Importer::lower_batchnorm},
            {"SyncBatchNormalization", &Importer::lower_batchnorm},
            {"LayerNormalization", &Importer::lower_layernorm},
            {"GroupNormalization", &Importer::lower_groupnorm},
            {"Embedding", &Importer::lower_embedding},
            {"SimpleRNN", &Importer::lower_recurrent},
            {"LSTM", &Importer::lower_recurrent},
            {"GRU", &Importer::lower_recurrent},
            {"CuDNNLSTM", &Importer::lower_recurrent},
            {"CuDNNGRU", &Importer::lower_recurrent},
            {"Bidirectional", &Importer::lower_bidirectional},
            {"MultiHeadAttention", &Importer::lower_attention},
            {"Dropout", &Importer::lower_dropout},
            {"SpatialDropout1D", &Importer::lower_dropout},
            {"SpatialDropout2D", &Importer::lower_dropout},
            {"SpatialDropout3D", &Importer::lower_dropout},
            {"GaussianDropout", &Importer::lower_dropout},
            {"AlphaDropout", &Importer::lower_dropout},
            {"Flatten", &Importer::lower_flatten},
            {"Reshape", &Importer::lower_reshape},
            {"Permute", &Importer::lower_permute},
            {"Add", &Importer::lower_merge},
            {"Subtract", &Importer::lower_merge},
            {"Multiply", &Importer::lower_merge},
            {"Average", &Importer::lower_merge},
            {"Maximum", &Importer::lower_merge},
            {"Minimum", &Importer::lower_merge},
            {"Concatenate", &Importer::lower_concatenate},
            {"Activation", &Importer::lower_activation},
            {"ReLU", &Importer::lower_activation},
            {"LeakyReLU", &Importer::lower_activation},
            {"ELU", &Importer::lower_activation},
            {"Softmax", &Importer::lower_activation},
            {"ZeroPadding1D", &Importer::lower_border},
            {"ZeroPadding2D", &Importer::lower_border},
            {"ZeroPadding3D", &Importer::lower_border},
            {"Cropping1D", &Importer::lower_border},
            {"Cropping2D", &Importer::lower_border},
            {"Cropping3D", &Importer::lower_border},
            {"TimeDistributed", &Importer::lower_time_distributed},
        };
        auto it = by_class.find(cls);
        if (it != by_class.end()) return it->second;
        if (pooling_class(cls)) return &Importer::lower_pool;
        if (is_global_pooling_class(cls)) return &Importer::lower_global_pool;
        return nullptr;
    }

    // ---- dense and convolutions ----

    std::optional<Shape> lower_dense(const LayerCall& call) {
        const LayerConfig& c = call.config;
        std::int64_t units = c.required("units");
        add("linear", call.name, {{"out_features", units}, {"bias", c.boolean("use_bias", true)}});
        activation_after(c, call.name);
        return b_.shape();
    }

    // Conv1D / Conv2D / Conv3D (and Keras 1's Convolution*D): the rank is the name's digit.
    std::optional<Shape> lower_conv(const LayerCall& call) {
        const LayerConfig& c = call.config;
        size_t rank = size_t(call.cls[call.cls.size() - 2] - '0');
        std::int64_t groups = c.integer("groups", 1, 1);
        Shape out = conv(c, call.name, call.x, rank, "conv" + std::to_string(rank) + "d", c.required("filters"), groups,
                         c.boolean("use_bias", true), c.ints("kernel_size", rank, 1));
        activation_after(c, call.name);
        return out;
    }

    std::optional<Shape> lower_conv_transpose(const LayerCall& call) {
        const LayerConfig& c = call.config;
        Shape out = conv(c, call.name, call.x, 2, "conv_transpose2d", c.required("filters"), 1, c.boolean("use_bias", true),
                         c.ints("kernel_size", 2, 1), true);
        activation_after(c, call.name);
        return out;
    }

    // One group per input channel, depth_multiplier outputs each.
    std::optional<Shape> lower_depthwise_conv(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        size_t rank = call.cls == "DepthwiseConv1D" ? 1 : 2;
        if (x.size() != rank + 2) fail(c.where(), "expects a rank-" + std::to_string(rank + 2) + " input");
        std::int64_t channels = data_format(c) == "channels_last" ? x.back() : x[1];
        std::int64_t multiplier = c.integer("depth_multiplier", 1, 1);
        Shape out = conv(c, call.name, x, rank, "conv" + std::to_string(rank) + "d",
                         checked_mul(channels, multiplier, "channels"), channels, c.boolean("use_bias", true),
                         c.ints("kernel_size", rank, 1));
        activation_after(c, call.name);
        return out;
    }

    // Depthwise (no bias) then a 1x1 pointwise convolution with the bias.
    std::optional<Shape> lower_separable_conv(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        const std::string& name = call.name;
        size_t rank = call.cls == "SeparableConv1D" ? 1 : 2;
        if (x.size() != rank + 2) fail(c.where(), "expects a rank-" + std::to_string(rank + 2) + " input");
        bool last = data_format(c) == "channels_last";
        std::int64_t channels = last ? x.back() : x[1];
        std::int64_t multiplier = c.integer("depth_multiplier", 1, 1);
        std::string kind = "conv" + std::to_string(rank) + "d";
        Shape mid = conv(c, name + ".depthwise", x, rank, kind, checked_mul(channels, multiplier, "channels"),
                         channels, false, c.ints("kernel_size", rank, 1));
        Shape cf = last ? channels_first(mid) : mid;
        b_.set_shape(cf);
        add(kind, name + ".pointwise", {{"out_channels", c.required("filters")}, {"kernel_size", 1},
                                        {"bias", c.boolean("use_bias", true)}});
        activation_after(c, name);
        return last ? channels_last(b_.shape()) : b_.shape();
    }

    // ---- pooling ----

    struct PoolingClass {
        size_t rank;
        bool max;
    };
    // MaxPooling2D, AveragePooling1D, Keras 3's MaxPool3D / AvgPool2D: the kind and the rank from the name.
    static std::optional<PoolingClass> pooling_class(const std::string& cls) {
        for (const char* prefix : {"MaxPooling", "AveragePooling", "MaxPool", "AvgPool"}) {
            std::string p = prefix;
            if (cls.rfind(p, 0) == 0 && cls.size() == p.size() + 2 && cls.back() == 'D')
                return PoolingClass{size_t(cls[p.size()] - '0'), p[0] == 'M'};
        }
        return std::nullopt;
    }
    // GlobalAveragePooling2D, GlobalMaxPool1D, ...
    static bool is_global_pooling_class(const std::string& cls) {
        return cls.rfind("Global", 0) == 0 &&
               (cls.find("Pooling") != std::string::npos || cls.find("Pool") != std::string::npos);
    }

    std::optional<Shape> lower_pool(const LayerCall& call) {
        PoolingClass p = *pooling_class(call.cls);
        return pool(call.config, call.name, call.x, p.rank, p.max);
    }

    // Global pooling, max or average, costed as an average pool to one element per channel.
    std::optional<Shape> lower_global_pool(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        if (x.size() < 3 || x.size() > 5) fail(c.where(), "expects a rank-3 to rank-5 input, got " + to_string(x));
        bool last = data_format(c) == "channels_last";
        Shape cf = last ? channels_first(x) : x;
        b_.set_shape(cf);
        add("adaptive_avgpool2d", call.name, {{"output_size", 1}});
        Shape out = {x[0], cf[1]};
        if (c.boolean("keepdims", false)) {
            out = {x[0]};
            for (size_t i = 1; i < x.size(); ++i) out.push_back(1);
            if (last) out.back() = cf[1];
            else out[1] = cf[1];
        }
        b_.set_shape(out);
        return out;
    }

    // ---- normalisation ----

    std::optional<Shape> lower_batchnorm(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        std::int64_t axis = c.axis("axis", -1);
        bool channel_last = axis == -1 || axis == std::int64_t(x.size()) - 1;
        if (!channel_last && axis != 1) fail(c.where(), "normalising over axis " + std::to_string(axis) + " is not supported");
        if (!c.boolean("center", true) || !c.boolean("scale", true))
            notes_.push_back("layer '" + call.name + "' (BatchNormalization) without center or scale: counted with both "
                             "its beta and gamma");
        Shape cf = channel_last ? channels_first(x) : x;
        b_.set_shape(cf);
        add("batchnorm", call.name, json::object());
        b_.set_shape(x);
        return x;
    }

    std::optional<Shape> lower_layernorm(const LayerCall& call) {
        const LayerConfig& c = call.config;
        if (!c.boolean("scale", true))
            notes_.push_back("layer '" + call.name + "' (LayerNormalization) without scale: counted with its gamma");
        add("layernorm", call.name, {{"bias", c.boolean("center", true)}});
        return call.x;
    }

    std::optional<Shape> lower_groupnorm(const LayerCall& call) {
        Shape cf = channels_first(call.x);
        b_.set_shape(cf);
        add("groupnorm", call.name, {{"groups", call.config.integer("groups", 32, 1)}});
        b_.set_shape(call.x);
        return call.x;
    }

    // ---- embeddings, recurrent layers, attention ----

    std::optional<Shape> lower_embedding(const LayerCall& call) {
        const LayerConfig& c = call.config;
        if (call.x.size() != 2) fail(c.where(), "an Embedding expects [batch, tokens], got " + to_string(call.x));
        add("embedding", call.name, {{"num_embeddings", c.required("input_dim")}, {"embedding_dim", c.required("output_dim")}});
        return b_.shape();
    }

    std::optional<Shape> lower_recurrent(const LayerCall& call) {
        return rnn(call.cls, call.config, call.name, call.x, false, "concat");
    }

    // A recurrent layer run both ways; a wrapped layer without a kind of its own is not modelled.
    std::optional<Shape> lower_bidirectional(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const json* inner = c.find("layer");
        if (!inner || !inner->is_object() || !inner->contains("class_name") || !(*inner)["class_name"].is_string() ||
            !inner->contains("config") || !(*inner)["config"].is_object())
            fail(c.where(), "a Bidirectional layer needs the recurrent 'layer' it wraps");
        std::string inner_cls = (*inner)["class_name"];
        if (inner_cls != "SimpleRNN" && inner_cls != "LSTM" && inner_cls != "GRU")
            return std::nullopt;
        std::string merge = c.text("merge_mode", "concat");
        if (!c.find("merge_mode") && c.raw().contains("merge_mode")) merge = "none";  // null: both outputs
        LayerConfig ic((*inner)["config"], c.where() + ".layer");
        return rnn(inner_cls, ic, call.name, call.x, true, merge == "concat" ? "concat" : merge);
    }

    std::optional<Shape> lower_attention(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        const std::vector<Shape>& inputs = call.inputs;
        const std::string& name = call.name;
        if (x.size() != 3) fail(c.where(), "MultiHeadAttention here takes [batch, tokens, features], got " + to_string(x));
        const Shape& value = inputs.size() > 1 ? inputs[1] : x;
        if (value.size() != 3) fail(c.where(), "the value must be [batch, tokens, features], got " + to_string(value));
        std::int64_t heads = c.required("num_heads"), key_dim = c.required("key_dim");
        std::int64_t value_dim = c.integer("value_dim", key_dim, 1);
        if (value_dim != key_dim || value[2] != x[2])
            notes_.push_back("layer '" + name + "' (MultiHeadAttention): value_dim or the value's width differs "
                             "from the query's; counted with the query's sizes");
        if (c.find("attention_axes") && !(c.find("attention_axes")->is_array() && c.find("attention_axes")->size() == 1))
            notes_.push_back("layer '" + name + "' (MultiHeadAttention): attention_axes other than the tokens are "
                             "costed as attention over the tokens");
        json attrs = {{"heads", heads}, {"kv_heads", heads}, {"head_dim", key_dim}, {"bias", c.boolean("use_bias", true)},
                      {"projections", "separate"}};
        if (value[1] != x[1] || inputs.size() > 1) attrs["kv_tokens"] = value[1];
        if (inputs.size() > 1 && value[1] != x[1]) attrs["cross"] = true;
        add("attention", name, attrs);
        return x;
    }

    // ---- elementwise: dropout and activations ----

    std::optional<Shape> lower_dropout(const LayerCall& call) {
        double rate = call.config.number("rate", 0.5);
        if (!(rate >= 0 && rate < 1)) fail(call.config.where(), "rate must be in [0, 1)");
        add("dropout", call.name, {{"p", rate}});
        return call.x;
    }

    // An activation as a layer of its own: Activation names it; ReLU (6 with max_value 6), LeakyReLU, ELU and
    // Softmax are it.
    std::optional<Shape> lower_activation(const LayerCall& call) {
        const std::string& cls = call.cls;
        const LayerConfig& c = call.config;
        if (cls == "Activation") add_activation(c.activation("activation"), call.name, c);
        else if (cls == "ReLU") add("activation", call.name, {{"function", c.number("max_value", 0) == 6 ? "relu6" : "relu"}});
        else if (cls == "Softmax") add("softmax", call.name, json::object());
        else add("activation", call.name, {{"function", cls == "ELU" ? "tanh" : "leaky_relu"}});
        return call.x;
    }

    // ---- shape changes ----

    std::optional<Shape> lower_flatten(const LayerCall& call) {
        add("flatten", call.name, json::object());
        return b_.shape();
    }

    std::optional<Shape> lower_reshape(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const json* target = c.find("target_shape");
        if (!target || !target->is_array()) fail(c.where(), "a Reshape needs 'target_shape'");
        json shape = json::array();
        for (const auto& d : *target) {
            if (d.is_null()) shape.push_back(-1);
            else shape.push_back(d);
        }
        add("reshape", call.name, {{"shape", shape}});
        return b_.shape();
    }

    // A transpose: no parameters; its copy is not costed.
    std::optional<Shape> lower_permute(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        const json* dims = c.find("dims");
        if (!dims || !dims->is_array() || dims->size() + 1 != x.size()) fail(c.where(), "a Permute needs 'dims' for each per-sample dim");
        Shape out = {x[0]};
        std::set<std::int64_t> seen;
        for (const auto& d : *dims) {
            if (!d.is_number_integer() || d.get<std::int64_t>() < 1 || d.get<std::int64_t>() >= std::int64_t(x.size()) ||
                !seen.insert(d.get<std::int64_t>()).second)
                fail(c.where(), "'dims' must be a permutation of 1.." + std::to_string(x.size() - 1));
            out.push_back(x[size_t(d.get<std::int64_t>())]);
        }
        return out;
    }

    // ZeroPadding*D and Cropping*D: a copy with a border; no parameters, and the copy is not costed.
    std::optional<Shape> lower_border(const LayerCall& call) {
        const std::string& cls = call.cls;
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        size_t rank = size_t(cls[cls.size() - 2] - '0');
        if (x.size() != rank + 2) fail(c.where(), "expects a rank-" + std::to_string(rank + 2) + " input");
        bool last = data_format(c) == "channels_last";
        bool crop = cls[0] == 'C';
        const json* spec = c.find(crop ? "cropping" : "padding");
        Shape out = x;
        for (size_t i = 0; i < rank; ++i) {
            std::int64_t total = 2;  // Keras' default: 1 on each side (padding); cropping defaults to 0
            if (crop) total = 0;
            if (spec) {
                // Each side an integer in 0..limits::dimension (to_int), so the sum cannot overflow.
                const char* key = crop ? "cropping" : "padding";
                const json& s = spec->is_array() && spec->size() == rank ? (*spec)[i] : *spec;
                if (s.is_array() && s.size() == 2) total = c.to_int(key, s[0], 0) + c.to_int(key, s[1], 0);
                else if (!s.is_array()) total = 2 * c.to_int(key, s, 0);
                else fail(c.where(), std::string("field '") + key + "' must give each side as an integer, got " + spec->dump());
            }
            if (total > limits::dimension)
                fail(c.where(), std::string("field '") + (crop ? "cropping" : "padding") + "' totals " +
                                    std::to_string(total) + " on one dim, over the limit of " +
                                    std::to_string(limits::dimension));
            size_t d = last ? 1 + i : 2 + i;
            out[d] = crop ? out[d] - total : checked_add(out[d], total, "tensor size");
            if (out[d] <= 0) fail(c.where(), "crops away the whole input " + to_string(x));
        }
        // No layer is added for the border, so its output meets the builder's shape limits here.
        b_.set_shape(out, "layer '" + call.name + "' output");
        return out;
    }

    // ---- several inputs ----

    // Add, Subtract, Multiply, Average, Maximum, Minimum: one residual_add per input after the first.
    std::optional<Shape> lower_merge(const LayerCall& call) {
        const Shape& x = call.x;
        const std::vector<Shape>& inputs = call.inputs;
        for (size_t i = 1; i < inputs.size(); ++i) {
            if (inputs[i] != x)
                fail(call.config.where(), "merges " + to_string(x) + " with " + to_string(inputs[i]) + "; broadcasting is not supported");
            b_.set_shape(x);
            add("residual_add", call.name + (inputs.size() > 2 ? "." + std::to_string(i) : ""), json::object());
        }
        return x;
    }

    std::optional<Shape> lower_concatenate(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        const std::vector<Shape>& inputs = call.inputs;
        std::int64_t axis = c.integer("axis", -1, -std::int64_t(x.size()));
        if (axis < 0) axis += std::int64_t(x.size());
        if (axis < 1 || axis >= std::int64_t(x.size())) fail(c.where(), "axis " + std::to_string(axis) + " is out of range");
        std::int64_t extra = 0;
        for (size_t i = 1; i < inputs.size(); ++i) {
            if (inputs[i].size() != x.size()) fail(c.where(), "concatenates tensors of different ranks");
            for (size_t d = 0; d < x.size(); ++d)
                if (std::int64_t(d) != axis && inputs[i][d] != x[d])
                    fail(c.where(), "concatenates " + to_string(x) + " with " + to_string(inputs[i]) + " on axis " +
                                        std::to_string(axis));
            extra = checked_add(extra, inputs[i][size_t(axis)], "tensor size");
        }
        // The concatenated axis moved to dim 1, where PreNeT's concat appends.
        Shape moved = {x[0], x[size_t(axis)]};
        for (size_t d = 1; d < x.size(); ++d)
            if (std::int64_t(d) != axis) moved.push_back(x[d]);
        b_.set_shape(moved);
        add("concat", call.name, {{"extra", extra}});
        Shape out = x;
        out[size_t(axis)] = checked_add(x[size_t(axis)], extra, "tensor size");
        b_.set_shape(out);
        return out;
    }

    // ---- wrappers ----

    // The wrapped layer runs on every step: steps folded into the batch.
    std::optional<Shape> lower_time_distributed(const LayerCall& call) {
        const LayerConfig& c = call.config;
        const Shape& x = call.x;
        const json* inner = c.find("layer");
        if (!inner || !inner->is_object()) fail(c.where(), "a TimeDistributed layer needs the 'layer' it wraps");
        if (x.size() < 3) fail(c.where(), "expects [batch, steps, ...], got " + to_string(x));
        Shape folded = {checked_mul(x[0], x[1], "tensor size")};
        folded.insert(folded.end(), x.begin() + 2, x.end());
        std::vector<Shape> out = apply(*inner, {folded}, c.where() + ".layer", std::nullopt);
        Shape unfolded = {x[0], x[1]};
        unfolded.insert(unfolded.end(), out[0].begin() + 1, out[0].end());
        b_.set_shape(unfolded);
        return unfolded;
    }

    ModelBuilder& b_;
    const ModelInputs& in_;
    std::vector<std::string>& notes_;

    int depth_ = 0;

public:
    std::map<std::string, std::int64_t> unknown_;  // Keras class -> how many of its layers have no PreNeT kind
};

// The model's input shape: the first InputLayer's batch shape, a first layer's batch_input_shape (tf.keras
// Sequential), or the Sequential's build_input_shape / build_config (Keras 3).
json first_input_shape(const json& model) {
    const json& config = model["config"];
    {
        for (const auto& layer : layer_list(config)) {
            if (!layer.is_object() || !layer.contains("config") || !layer["config"].is_object()) continue;
            const json& cfg = layer["config"];
            for (const char* key : {"batch_shape", "batch_input_shape"})
                if (cfg.contains(key) && cfg[key].is_array()) return cfg[key];
            if (layer.value("class_name", json()) != "InputLayer") break;
        }
    }
    if (config.is_object() && config.contains("build_input_shape") && config["build_input_shape"].is_array())
        return config["build_input_shape"];
    if (model.contains("build_config") && model["build_config"].is_object() &&
        model["build_config"].contains("input_shape"))
        return model["build_config"]["input_shape"];
    return nullptr;
}

}  // namespace

bool looks_like_keras_json(const json& document) { return unwrap(document) != nullptr; }

namespace {
Model import_keras(const json& document, const ModelInputs& in) {
    const json* found = unwrap(document);
    if (!found) throw Error("Keras JSON: expected a model.to_json() document (class_name Sequential or Functional)");
    const json& model = *found;
    if (in.batch <= 0) throw Error("batch size must be positive");
    const json& config = model["config"];
    if (layer_list(config).empty()) throw Error("Keras JSON: the model's config needs a non-empty 'layers' list");
    std::string name = config.is_object() && config.contains("name") && config["name"].is_string()
                           ? config["name"].get<std::string>()
                           : "keras";
    std::vector<std::string> notes;
    // The builder's first shape is a placeholder until the input is known; each layer sets the shape it reads.
    ModelBuilder b(name, {in.batch, 1}, infer_shape);
    Importer importer(b, in, notes);
    std::vector<Shape> inputs;
    bool sequential = model["class_name"] == "Sequential";
    json shape = first_input_shape(model);
    if (sequential) {
        if (shape.is_null())
            throw Error("Keras JSON: the Sequential model records no input shape (an InputLayer's batch_shape, a first "
                        "layer's batch_input_shape or build_input_shape); build the model before saving it");
        inputs = {importer.input_shape_of(shape, "input")};
    } else {
        inputs = {Shape{in.batch, 1}};  // the Functional model's InputLayers give theirs
    }
    importer.run_model(model, inputs, name);
    // The same rule as an ONNX graph's: a model without a single costed layer (only InputLayers, or only layers
    // that change shapes: Permute, ZeroPadding) would report 0 parameters and 0 FLOPs as if that were a result.
    if (b.layer_count() == 0)
        throw Error("Keras JSON: the model computes nothing from its inputs (it has only InputLayers, or layers that "
                    "only change shapes)");
    // Tokens per sample: a sequence input of token ids ([batch, tokens]) feeding an Embedding.
    std::int64_t tokens = 0;
    Model m = [&] {
        try {
            for (const auto& [cls, count] : importer.unknown_) b.count_unknown(cls, count);
            return b.finish("custom", 0);
        } catch (const Error& e) {
            throw Error(std::string("Keras JSON: ") + e.what());
        }
    }();
    for (auto& block : m.blocks)
        for (auto& layer : block.layers) {
            if (layer.kind == "embedding" && !tokens && layer.input.size() == 2) tokens = layer.input[1];
            if ((layer.kind == "conv2d" || layer.kind == "conv3d") && m.domain == "custom") m.domain = "vision";
            // A Keras attention layer runs the requested kernel (--attention, flash by default).
            if (layer.kind == "attention") layer.attrs["flash"] = in.flash_attention;
        }
    if (tokens) m.domain = "language", m.tokens_per_sample = tokens;
    m.notes = notes;
    return m;
}
}  // namespace

Model model_from_keras_json(const json& document, const ModelInputs& in) {
    // The importer reads every field through LayerConfig and the checks above; this is the last defence for a
    // path they miss, so that the user reads what is wrong and never nlohmann's "[json.exception...]" or the
    // standard library's "vector::_M_range_check".
    try {
        return import_keras(document, in);
    } catch (const nlohmann::json::exception&) {
        throw Error("Keras JSON: a field holds a value of an unexpected type or is missing (the document is not a "
                    "model.to_json() this importer can read)");
    } catch (const std::out_of_range&) {
        throw Error("Keras JSON: a layer refers to an input or output the model does not have");
    }
}

}  // namespace prenet
