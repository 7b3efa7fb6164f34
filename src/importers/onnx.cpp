#include "importers/onnx.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/utf8.hpp"
#include "graph/builder.hpp"
#include "importers/onnx_proto.hpp"
#include "importers/onnx_values.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

using onnx::Node;
using onnx::NodeInputs;
using onnx::Value;

[[noreturn]] void fail(const std::string& message) { throw Error("ONNX file: " + message, ErrorCode::invalid_model); }

std::string lower(std::string s) {
    for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string label(const Node& n) {
    std::string name = !n.name.empty() ? n.name : !n.outputs.empty() ? n.outputs[0] : std::string("?");
    return "node '" + name + "' (" + n.op_type + ")";
}

// Sizes the user did not give, for dims the file leaves symbolic.
constexpr std::int64_t kDefaultSeq = 128, kDefaultImage = 224;

enum class Role { batch, seq, image, other };

Role role_of_name(const std::string& param) {
    std::string p = lower(param);
    if (p.find("batch") != std::string::npos || p == "n" || p == "b" || p == "bs") return Role::batch;
    for (const char* w : {"seq", "token", "len", "time", "step", "position", "sentence", "word"})
        if (p.find(w) != std::string::npos) return Role::seq;
    for (const char* w : {"height", "width", "image", "pixel"})
        if (p.find(w) != std::string::npos) return Role::image;
    if (p == "h" || p == "w") return Role::image;
    return Role::other;
}

// Ops that only relabel their input's elements (no kernel in PyTorch): no layer.
const std::set<std::string> kViews = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
// Ops that copy or rearrange their inputs: memory-bound, keeping nothing for the backward.
const std::set<std::string> kCopies = {"Transpose", "Concat", "Split", "Slice", "Expand", "Tile", "Pad", "Gather",
                                       "GatherElements", "GatherND", "ScatterND", "ScatterElements", "Scatter",
                                       "Where", "Cast", "CastLike", "Resize", "Upsample", "DepthToSpace",
                                       "SpaceToDepth", "Trilu", "OneHot", "Range", "ConstantOfShape",
                                       "ReverseSequence", "EyeLike", "Not", "Equal", "Less", "Greater",
                                       "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "IsNaN", "IsInf"};
// Element-wise arithmetic and reductions costed memory-bound, with their FLOPs per output element.
const std::map<std::string, double> kArithmetic = {
    {"Add", 1}, {"Sub", 1}, {"Mul", 1}, {"Div", 1}, {"Pow", 8}, {"Mod", 1}, {"Max", 1}, {"Min", 1}, {"Mean", 1},
    {"Sum", 1}, {"PRelu", 2}, {"Erf", 8}, {"Exp", 8}, {"Log", 8}, {"Sqrt", 4}, {"Reciprocal", 1}, {"Neg", 1},
    {"Abs", 1}, {"Floor", 1}, {"Ceil", 1}, {"Round", 1}, {"Sign", 1}, {"Sin", 8}, {"Cos", 8}, {"Tan", 8},
    {"Asin", 8}, {"Acos", 8}, {"Atan", 8}, {"Sinh", 8}, {"Cosh", 8}, {"Asinh", 8}, {"Acosh", 8}, {"Atanh", 8},
    {"Softplus", 8}, {"Softsign", 3}, {"Elu", 8}, {"Selu", 8}, {"Celu", 8}, {"Mish", 14}, {"ThresholdedRelu", 1},
    {"Clip", 1}, {"Hardmax", 2}, {"LpNormalization", 4}, {"LRN", 8}, {"MeanVarianceNormalization", 7},
    {"Shrink", 2}, {"CumSum", 1}, {"FastGelu", 14}, {"QuickGelu", 8}, {"BiasGelu", 15}, {"ReduceMean", 1},
    {"ReduceSum", 1}, {"ReduceMax", 1}, {"ReduceMin", 1}, {"ReduceProd", 1}, {"ReduceL1", 2}, {"ReduceL2", 2},
    {"ReduceLogSum", 2}, {"ReduceLogSumExp", 10}, {"ReduceSumSquare", 2}, {"ArgMax", 1}, {"ArgMin", 1},
    {"TopK", 8}, {"GlobalMaxPool", 1}, {"GlobalLpPool", 2}, {"LpPool", 2}, {"SoftmaxCrossEntropyLoss", 5},
    {"NegativeLogLikelihoodLoss", 1}, {"Einsum", 1}, {"BitShift", 1}, {"BitwiseAnd", 1}, {"BitwiseOr", 1},
    {"BitwiseXor", 1}, {"BitwiseNot", 1}};
// Ops mapped to a layer kind of their own (or to a view, or computed at import time).
const std::set<std::string> kMapped = {
    "Constant", "Shape", "Size", "Conv", "ConvTranspose", "Gemm", "MatMul", "Relu", "Sigmoid", "Tanh", "LeakyRelu",
    "HardSigmoid", "HardSwish", "Gelu", "Softmax", "LogSoftmax", "Dropout", "BatchNormalization",
    "LayerNormalization", "RMSNormalization", "SimplifiedLayerNormalization", "InstanceNormalization",
    "GroupNormalization", "MaxPool", "AveragePool", "GlobalAveragePool", "LSTM", "GRU", "RNN", "Attention",
    "MultiHeadAttention"};

bool known_op(const Node& n) {
    bool onnx_domain = n.domain.empty() || n.domain == "ai.onnx";
    if (n.domain == "com.microsoft")
        return n.op_type == "Attention" || n.op_type == "MultiHeadAttention" || n.op_type == "FastGelu" ||
               n.op_type == "QuickGelu" || n.op_type == "BiasGelu" || n.op_type == "SimplifiedLayerNormalization";
    if (!onnx_domain) return false;
    if (n.op_type == "Attention" || n.op_type == "MultiHeadAttention") return n.op_type == "Attention";
    return kViews.count(n.op_type) || kCopies.count(n.op_type) || kArithmetic.count(n.op_type) ||
           kMapped.count(n.op_type);
}

class Importer {
public:
    Importer(const onnx::ModelProto& model, std::string name, const ModelInputs& inputs)
        : m_(model), g_(model.graph), name_(std::move(name)), in_(inputs) {}

    Model run() {
        add_initializers();
        add_inputs();
        std::vector<std::size_t> order = topological_order();
        b_.emplace(name_, Shape{in_.batch}, infer_shape);
        for (std::size_t i : order) evaluate(i);
        // The rule every importer applies: a model computes something from its input. Counted before the loose
        // parameters, which are a layer of their own but read no input (a graph that never reads its input but
        // holds weights passed with them).
        if (layers_ == 0) fail("the graph computes nothing from its inputs (no node computes on them)");
        add_loose_parameters();
        Model model = b_->finish(domain_, tokens_);
        model.batch = in_.batch;
        for (auto& block : model.blocks)
            for (auto& layer : block.layers)
                if (layer.kind == "attention_core" && !layer.attrs.contains("flash")) layer.attrs["flash"] = in_.flash_attention;
        return model;
    }

private:
    const onnx::ModelProto& m_;
    const onnx::Graph& g_;
    std::string name_;
    ModelInputs in_;
    std::unordered_map<std::string, Value> values_;
    std::vector<bool> claimed_, buffer_;  // per initializer
    std::unordered_map<std::string, std::vector<std::size_t>> consumers_;
    std::vector<bool> fused_;  // Adds folded into the MatMul before them (a linear's bias)
    std::map<std::string, std::int64_t> symbols_;
    std::unordered_map<std::string, const onnx::ValueInfo*> value_info_;  // value_info and graph outputs by name
    std::optional<ModelBuilder> b_;
    std::int64_t layers_ = 0, leftover_ = 0, tokens_ = 0;
    std::string domain_ = "custom";

    // ---- the graph's values
    void add_initializers() {
        claimed_.assign(g_.initializers.size(), false);
        buffer_.assign(g_.initializers.size(), false);
        for (std::size_t i = 0; i < g_.initializers.size(); ++i) {
            const onnx::Tensor& t = g_.initializers[i];
            if (t.name.empty()) fail("an initializer has no name");
            if (values_.count(t.name)) fail("two initializers are named '" + t.name + "'");
            Value v;
            v.shape = t.dims;
            v.shape_known = true;
            v.type = t.data_type;
            v.origins = {int(i)};
            v.requires_grad = onnx::is_float_type(t.data_type);
            if (t.has_values) {
                v.has_values = true;
                for (auto x : t.ints) v.values.push_back(double(x));
                for (auto x : t.floats) v.values.push_back(x);
                if (std::int64_t(v.values.size()) != t.elements) v.has_values = false, v.values.clear();
            }
            values_.emplace(t.name, std::move(v));
        }
    }

    void add_inputs() {
        // Whether some input names or places a batch dim: then fixed leading dims elsewhere are kept.
        bool symbolic_batch = false;
        for (const auto& vi : g_.inputs) {
            if (values_.count(vi.name)) continue;
            for (std::size_t i = 0; i < vi.dims.size(); ++i)
                if (vi.dims[i].value < 0 && (role_of_name(vi.dims[i].param) == Role::batch || (i == 0 && role_of_name(vi.dims[i].param) == Role::other)))
                    symbolic_batch = true;
        }
        int data_inputs = 0;
        for (const auto& vi : g_.inputs) {
            if (values_.count(vi.name)) continue;  // older exporters list initializers as inputs too
            if (vi.name.empty()) fail("a graph input has no name");
            if (!vi.has_shape)
                fail("graph input '" + vi.name + "' has no shape in the file (export it with a known rank)");
            Value v;
            v.data = true;
            v.type = vi.elem_type;
            v.shape_known = true;
            bool is_float = onnx::is_float_type(vi.elem_type);
            for (std::size_t i = 0; i < vi.dims.size(); ++i) v.shape.push_back(resolve(vi, i, is_float, symbolic_batch));
            check_shape(v.shape, "graph input '" + vi.name + "'");
            if (is_float && v.shape.size() == 4) domain_ = "vision";
            values_.emplace(vi.name, std::move(v));
            ++data_inputs;
        }
        if (data_inputs == 0) fail("the graph has no inputs besides its initializers");
    }

    std::int64_t resolve(const onnx::ValueInfo& vi, std::size_t pos, bool is_float, bool symbolic_batch) {
        const onnx::Dim& d = vi.dims[pos];
        std::size_t rank = vi.dims.size();
        if (d.value > 0) {
            // A file exported without dynamic axes fixes its batch: the batch asked for replaces it.
            if (pos == 0 && !symbolic_batch) return in_.batch;
            return d.value;
        }
        if (!d.param.empty() && symbols_.count(d.param)) return symbols_[d.param];
        Role role = role_of_name(d.param);
        if (role == Role::other) {
            if (pos == 0) role = Role::batch;
            else if (is_float && rank == 4 && pos >= 2) role = Role::image;
            else if (pos == 1 && (!is_float || rank == 3)) role = Role::seq;
        }
        std::int64_t value = 0;
        switch (role) {
            case Role::batch: value = in_.batch; break;
            case Role::seq:
                value = in_.seq ? in_.seq : kDefaultSeq;
                tokens_ = value;
                if (!is_float) domain_ = "language";
                break;
            case Role::image: value = in_.image ? in_.image : kDefaultImage; break;
            case Role::other:
                fail("dimension " + std::to_string(pos) + (d.param.empty() ? "" : " ('" + d.param + "')") + " of input '" +
                     vi.name + "' is symbolic and is not the batch, the sequence or an image side: export the model "
                     "with that dimension fixed");
        }
        if (!d.param.empty()) symbols_[d.param] = value;
        return value;
    }

    void check_shape(const Shape& s, const std::string& what) {
        std::int64_t n = 1;
        for (auto d : s) {
            if (d < 0 || d > limits::dimension)
                fail(what + " " + to_string(s) + " has a dimension outside 0 to " + std::to_string(limits::dimension));
            if (d > 0 && n > limits::tensor_elements / d)
                fail(what + " " + to_string(s) + " has more than " + std::to_string(limits::tensor_elements) + " elements");
            n *= d;
        }
    }

    std::vector<std::size_t> topological_order() {
        const auto& nodes = g_.nodes;
        std::unordered_map<std::string, std::size_t> producer;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            for (const auto& out : nodes[i].outputs) {
                if (out.empty()) continue;
                if (values_.count(out)) fail(label(nodes[i]) + " writes '" + out + "', which is a graph input or an initializer");
                if (!producer.emplace(out, i).second) fail("two nodes write '" + out + "'");
            }
        std::vector<std::size_t> pending(nodes.size(), 0);
        std::vector<std::vector<std::size_t>> next(nodes.size());
        for (std::size_t i = 0; i < nodes.size(); ++i)
            for (const auto& in : nodes[i].inputs) {
                if (in.empty()) continue;
                consumers_[in].push_back(i);
                auto p = producer.find(in);
                if (p != producer.end()) {
                    next[p->second].push_back(i);
                    ++pending[i];
                } else if (!values_.count(in)) {
                    fail(label(nodes[i]) + " reads '" + in + "', which no node, graph input or initializer produces");
                }
            }
        std::deque<std::size_t> ready;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (!pending[i]) ready.push_back(i);
        std::vector<std::size_t> order;
        while (!ready.empty()) {
            std::size_t i = ready.front();
            ready.pop_front();
            order.push_back(i);
            for (std::size_t j : next[i])
                if (--pending[j] == 0) ready.push_back(j);
        }
        if (order.size() != nodes.size()) {
            for (std::size_t i = 0; i < nodes.size(); ++i)
                if (pending[i]) fail("the graph is cyclic: " + label(nodes[i]) + " depends on its own output");
        }
        fused_.assign(nodes.size(), false);
        return order;
    }

    // ---- one node
    void evaluate(std::size_t index) {
        const Node& n = g_.nodes[index];
        NodeInputs ni{n, {}, m_.opset(n.domain == "ai.onnx" ? "" : n.domain)};
        for (const auto& name : n.inputs) ni.in.push_back(name.empty() ? nullptr : &values_.at(name));
        bool data = false, grad = false;
        std::vector<int> origins;
        for (const Value* v : ni.in) {
            if (!v) continue;
            data = data || v->data;
            grad = grad || v->requires_grad;
            for (int o : v->origins)
                if (std::find(origins.begin(), origins.end(), o) == origins.end()) origins.push_back(o);
        }
        if (origins.size() > 4096) origins.resize(4096);  // a static tensor assembled from that many is not a weight
        bool known = known_op(n);
        if (!known) b_->count_unknown(n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "." + n.op_type);
        std::vector<Value> outs(n.outputs.size());
        if (n.op_type == "Constant" && known) {
            constant(n, outs);
        } else {
            // Every known op's shapes come from its own rule, which checks its inputs' ranks and sizes, whatever
            // attributes it carries (a graph-valued one included): the layer mappers below index only shapes that
            // rule has checked.
            auto shapes = known ? onnx::infer_shapes(ni) : std::vector<std::optional<Shape>>(n.outputs.size());
            // Whether the main output's shape came from that rule (else from the file's value_info, unchecked). The
            // others (statistics, states, an attention's key-value cache the rules leave open) are only counted
            // as bytes, whatever shape the file gives them; no mapper indexes them.
            bool inferred = known;
            bool computed_from_shape = n.op_type == "Shape" || n.op_type == "Size";
            for (std::size_t k = 0; k < outs.size(); ++k) {
                Value& v = outs[k];
                v.type = onnx::output_type(ni, k);
                v.data = data && !computed_from_shape;
                v.requires_grad = grad && !computed_from_shape;
                if (!v.data && !computed_from_shape) v.origins = origins;
                bool from_rule = k < shapes.size() && shapes[k];
                if (!from_rule && k == 0) inferred = false;
                if (from_rule) v.shape = *shapes[k], v.shape_known = true;
                else if (auto s = value_info_shape(n.outputs[k])) v.shape = *s, v.shape_known = true;
                else if (v.data && !known) {
                    const Shape* first = first_data_shape(ni);
                    if (first) v.shape = *first, v.shape_known = true;
                }
                if (v.data && !v.shape_known)
                    fail("cannot infer the shape of '" + n.outputs[k] + "', output of " + label(n) +
                         ": it depends on values computed at run time");
                if (v.shape_known) check_shape(v.shape, "'" + n.outputs[k] + "'");
            }
            if ((!data || computed_from_shape) && known) onnx::fold_values(ni, outs);
            if (data && !fused_[index]) map_node(n, ni, outs, known, inferred);
        }
        for (std::size_t k = 0; k < outs.size(); ++k)
            if (!n.outputs[k].empty()) values_[n.outputs[k]] = std::move(outs[k]);
    }

    void constant(const Node& n, std::vector<Value>& outs) {
        if (outs.empty()) return;
        Value& v = outs[0];
        v.shape_known = true;
        for (const auto& a : n.attributes) {
            if (a.name == "value" && !a.tensors.empty()) {
                const onnx::Tensor& t = a.tensors[0];
                v.shape = t.dims, v.type = t.data_type;
                if (t.has_values) {
                    v.has_values = true;
                    for (auto x : t.ints) v.values.push_back(double(x));
                    for (auto x : t.floats) v.values.push_back(x);
                    if (std::int64_t(v.values.size()) != t.elements) v.has_values = false, v.values.clear();
                }
            } else if (a.name == "value_int" || a.name == "value_float") {
                v.shape = {}, v.type = a.name == "value_int" ? onnx::kInt64 : onnx::kFloat;
                v.values = {a.name == "value_int" ? double(a.i) : a.f}, v.has_values = true;
            } else if (a.name == "value_ints" || a.name == "value_floats") {
                v.type = a.name == "value_ints" ? onnx::kInt64 : onnx::kFloat;
                v.values.clear();
                if (a.name == "value_ints") for (auto x : a.ints) v.values.push_back(double(x));
                else v.values = a.floats;
                v.shape = {std::int64_t(v.values.size())}, v.has_values = true;
            } else if (a.name == "sparse_value" || a.name == "value_string" || a.name == "value_strings") {
                v.shape_known = false;
            }
        }
    }

    std::optional<Shape> value_info_shape(const std::string& name) {
        if (value_info_.empty())
            for (const auto* list : {&g_.outputs, &g_.value_info})
                for (const auto& vi : *list)
                    if (vi.has_shape) value_info_[vi.name] = &vi;
        auto it = value_info_.find(name);
        if (it == value_info_.end()) return std::nullopt;
        Shape s;
        for (const auto& d : it->second->dims) {
            if (d.value >= 0) s.push_back(d.value);
            else if (!d.param.empty() && symbols_.count(d.param)) s.push_back(symbols_[d.param]);
            else return std::nullopt;
        }
        return s;
    }

    static const Shape* first_data_shape(const NodeInputs& ni) {
        for (const Value* v : ni.in)
            if (v && v->data && v->shape_known) return &v->shape;
        for (const Value* v : ni.in)
            if (v && v->shape_known) return &v->shape;
        return nullptr;
    }

    // ---- layers
    static bool is_static(const Value* v) { return v && !v->data; }

    // Marks the trainable initializers `v` is computed from as owned by a layer; returns their elements and sets
    // `reused` when one was already owned (a tied weight).
    std::int64_t claim(const Value* v, bool* reused = nullptr) {
        std::int64_t n = 0;
        if (!v || v->data) return 0;
        for (int o : v->origins) {
            if (!onnx::is_float_type(g_.initializers[o].data_type) || buffer_[o]) continue;
            if (claimed_[o]) {
                if (reused) *reused = true;
                continue;
            }
            claimed_[o] = true;
            n = checked_add(n, g_.initializers[o].elements, "parameter count");
        }
        return n;
    }

    Layer* add(const std::string& kind, const std::string& name, Shape input, json attrs, bool needs_grad) {
        if (input.empty()) input = {1};
        for (auto d : input)
            if (d <= 0) return nullptr;  // an empty tensor: nothing to compute
        if (++layers_ > limits::layers)
            fail("the graph maps to more than " + std::to_string(limits::layers) + " layers (the limit on stored layers)");
        b_->set_shape(std::move(input));
        Layer& layer = b_->add(kind, name, std::move(attrs));
        layer.needs_input_grad = needs_grad;
        return &layer;
    }

    // A layer that owns the weights it reads: the catalogue counts its parameters from its attributes; what the
    // initializers hold beyond that is counted with the loose parameters, so the total is the initializers'.
    void owned(Layer* layer, std::int64_t claimed) {
        if (!layer) {
            leftover_ = checked_add(leftover_, claimed, "parameter count");
            return;
        }
        std::int64_t counted = layer_cost(*layer, Precision::fp32).params;
        if (claimed > counted) leftover_ = checked_add(leftover_, claimed - counted, "parameter count");
    }

    std::string layer_name(const Node& n) const { return n.name.empty() ? n.op_type + ":" + n.outputs[0] : n.name; }

    void memory_bound(const Node& n, const NodeInputs& ni, const std::vector<Value>& outs, double flops, bool saves) {
        Shape out;
        double out_elements = 0;
        for (const auto& v : outs)
            if (v.shape_known && (out.empty() || elements(v.shape) > elements(out))) out = v.shape;
        for (const auto& v : outs)
            if (v.shape_known) out_elements += double(elements(v.shape));
        if (out.empty()) out = {1};
        if (elements(out) == 0) return;
        double read = 0;
        for (const Value* v : ni.in)
            if (v && v->shape_known) read += double(elements(v->shape));
        double reads = std::min(read / double(elements(out)), double(limits::dimension));
        double per_element = std::min(flops * out_elements / double(elements(out)), double(limits::dimension));
        const Shape* main = first_data_shape(ni);
        json attrs = {{"op", n.op_type}, {"output_shape", out}, {"reads", reads}, {"flops_per_element", per_element},
                      {"saves", saves}};
        add("memory_bound", layer_name(n), main ? *main : out, attrs, any_grad(ni));
    }

    static bool any_grad(const NodeInputs& ni) {
        for (const Value* v : ni.in)
            if (v && v->data && v->requires_grad) return true;
        return false;
    }

    // Adds `kind`; where the catalogue refuses the attributes (asymmetric pooling pads, ...), the op is costed
    // memory-bound instead and listed with the unknown ops.
    void mapped(const Node& n, const NodeInputs& ni, const std::vector<Value>& outs, const std::string& kind, Shape input,
                json attrs, std::int64_t claimed = 0) {
        Layer* layer = nullptr;
        try {
            layer = add(kind, layer_name(n), std::move(input), std::move(attrs), any_grad(ni));
        } catch (const Error& e) {
            if (layers_ > limits::layers) throw;
            --layers_;
            b_->count_unknown(n.op_type + " (" + kind + " refused: " + e.what() + ")");
            memory_bound(n, ni, outs, 1, true);
        }
        owned(layer, claimed);
    }

    void map_node(const Node& n, const NodeInputs& ni, const std::vector<Value>& outs, bool known, bool inferred) {
        const std::string& op = n.op_type;
        const Shape* x = ni.shape(0);
        if (outs.empty()) return;  // a node without outputs computes nothing any other node reads
        if (!known) return memory_bound(n, ni, outs, 1, true);
        if (kViews.count(op) || op == "Shape" || op == "Size") return;
        // A known op whose output shape its rule could not tell (it depends on values computed at run time) has
        // only the file's value_info to go by, which nothing checked: costed as the unknown ops are, never mapped
        // to a layer over a shape it may not have.
        if (!inferred) {
            b_->count_unknown(op + " (output shape not inferred)");
            return memory_bound(n, ni, outs, 1, true);
        }
        if (op == "Conv" || op == "ConvTranspose") return conv(n, ni, outs);
        if (op == "Gemm" || op == "MatMul") return matmul(n, ni, outs);
        if (op == "Gather" && is_static(ni.at(0)) && ni.shape(0) && ni.shape(0)->size() == 2 && n.int_attr("axis", 0) == 0 &&
            ni.at(1) && ni.at(1)->data) {
            const Shape& table = *ni.shape(0);
            const Shape& ids = *ni.shape(1);
            Shape input = ids.size() >= 2 ? Shape{ids[0], elements(ids) / std::max<std::int64_t>(ids[0], 1)}
                                          : Shape{1, ids.empty() ? 1 : ids[0]};
            bool tied = false;
            std::int64_t claimed = claim(ni.at(0), &tied);
            return mapped(n, ni, outs, "embedding", input,
                          {{"num_embeddings", table[0]}, {"embedding_dim", table[1]}, {"tied", tied && claimed == 0}}, claimed);
        }
        // The kinds below read input 0 as their activation; a node whose input 0 is absent or static (which no
        // exporter writes for these ops) is costed over its tensors as the element-wise ops are.
        if (!x || !ni.at(0)->data) {
            auto arithmetic = kArithmetic.find(op);
            return memory_bound(n, ni, outs, arithmetic != kArithmetic.end() ? arithmetic->second : 1, true);
        }
        if (op == "Add" && ni.at(0) && ni.at(1) && ni.at(0)->data && ni.at(1)->data && ni.in.size() == 2 &&
            ni.at(0)->shape == ni.at(1)->shape)
            return mapped(n, ni, outs, "residual_add", *x, json::object());
        std::string fn = activation(n, ni);
        if (!fn.empty()) return mapped(n, ni, outs, "activation", *x, {{"function", fn}});
        if (op == "Softmax" || op == "LogSoftmax") return mapped(n, ni, outs, "softmax", *x, json::object());
        if (op == "Dropout") {
            double p = n.float_attr("ratio", 0.5);
            if (ni.at(1) && ni.at(1)->has_values && !ni.at(1)->values.empty()) p = ni.at(1)->values[0];
            if (!(p >= 0 && p < 1)) p = 0.5;
            return mapped(n, ni, outs, "dropout", *x, {{"p", p}});
        }
        if (op == "BatchNormalization") {
            for (std::size_t i : {3, 4})
                if (const Value* v = ni.at(i))
                    for (int o : v->origins) buffer_[o] = true;  // running statistics: buffers, not parameters
            std::int64_t claimed = claim(ni.at(1)) + claim(ni.at(2));
            return mapped(n, ni, outs, "batchnorm", *x, json::object(), claimed);
        }
        if (op == "LayerNormalization" || op == "RMSNormalization" || op == "SimplifiedLayerNormalization") {
            std::int64_t claimed = claim(ni.at(1)) + claim(ni.at(2));
            bool rms = op != "LayerNormalization";
            return mapped(n, ni, outs, rms ? "rmsnorm" : "layernorm", *x,
                          rms ? json::object() : json{{"bias", ni.at(2) != nullptr}}, claimed);
        }
        if (op == "InstanceNormalization" || op == "GroupNormalization") {
            if (!x || x->size() < 2) return memory_bound(n, ni, outs, 7, true);
            std::int64_t groups = op == "InstanceNormalization" ? (*x)[1] : n.int_attr("num_groups", 1);
            std::int64_t claimed = claim(ni.at(1)) + claim(ni.at(2));
            return mapped(n, ni, outs, "groupnorm", *x, {{"groups", groups}}, claimed);
        }
        if (op == "MaxPool" || op == "AveragePool") return pool(n, ni, outs);
        if (op == "GlobalAveragePool" && x && x->size() >= 3 && x->size() <= 5)
            return mapped(n, ni, outs, "adaptive_avgpool2d", *x, {{"output_size", 1}});
        if (op == "LSTM" || op == "GRU" || op == "RNN") return recurrent(n, ni, outs);
        if (op == "Attention" || op == "MultiHeadAttention") return attention(n, ni, outs);
        if (op == "Einsum") return memory_bound(n, ni, outs, einsum_flops(n, ni), true);
        auto arithmetic = kArithmetic.find(op);
        if (arithmetic != kArithmetic.end()) return memory_bound(n, ni, outs, arithmetic->second, true);
        return memory_bound(n, ni, outs, 0, false);  // copies
    }

    std::string activation(const Node& n, const NodeInputs& ni) {
        const std::string& op = n.op_type;
        if (op == "Relu") return "relu";
        if (op == "Sigmoid") return "sigmoid";
        if (op == "Tanh") return "tanh";
        if (op == "LeakyRelu") return "leaky_relu";
        if (op == "HardSigmoid") return "hardsigmoid";
        if (op == "HardSwish") return "hardswish";
        if (op == "Gelu") return n.string_attr("approximate", "none") == "tanh" ? "gelu_tanh" : "gelu";
        if (op == "FastGelu") return "gelu_tanh";
        if (op == "Clip") {
            auto bound = [&](std::size_t i, const char* attr, double fallback) -> std::optional<double> {
                if (n.attribute(attr)) return n.float_attr(attr, fallback);
                const Value* v = ni.at(i);
                if (!v) return fallback;
                if (!v->has_values || v->values.empty()) return std::nullopt;
                return v->values[0];
            };
            auto lo = bound(1, "min", -1e300), hi = bound(2, "max", 1e300);
            if (lo && hi && *lo == 0 && *hi == 6) return "relu6";
            if (lo && hi && *lo == 0 && *hi >= 1e300) return "relu";
        }
        return "";
    }

    void conv(const Node& n, const NodeInputs& ni, const std::vector<Value>& outs) {
        const Shape* x = ni.shape(0);
        const Shape* w = ni.shape(1);
        bool transposed = n.op_type == "ConvTranspose";
        std::size_t rank = w && w->size() >= 2 ? w->size() - 2 : 0;
        if (!is_static(ni.at(1)) || !x || rank < 1 || rank > 3 || (transposed && rank != 2)) {
            b_->count_unknown(n.op_type + (transposed ? " (not 2-d)" : " (weights computed at run time)"));
            double per_output = w && !w->empty() ? 2.0 * double(elements(*w)) / double(std::max<std::int64_t>((*w)[0], 1)) : 1.0;
            return memory_bound(n, ni, outs, per_output, true);
        }
        std::int64_t group = n.int_attr("group", 1);
        json attrs = {{"out_channels", transposed ? checked_mul((*w)[1], group, "channels") : (*w)[0]},
                      {"kernel_size", Shape(w->begin() + 2, w->end())},
                      {"groups", group},
                      {"bias", ni.at(2) != nullptr}};
        auto strides = n.ints_attr("strides"), dilations = n.ints_attr("dilations"), pads = n.ints_attr("pads");
        if (!strides.empty()) attrs["stride"] = strides;
        if (!dilations.empty()) attrs["dilation"] = dilations;
        std::string auto_pad = n.string_attr("auto_pad", "NOTSET");
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") attrs["padding"] = "same";
        else if (pads.size() == 2 * rank && auto_pad != "VALID") {
            Shape padding;
            for (std::size_t i = 0; i < rank; ++i) padding.push_back((pads[i] + pads[i + rank]) / 2);
            attrs["padding"] = padding;
        }
        if (transposed && n.attribute("output_padding")) attrs["output_padding"] = n.ints_attr("output_padding");
        std::int64_t claimed = claim(ni.at(1)) + claim(ni.at(2));
        const char* kind = transposed ? "conv_transpose2d" : rank == 1 ? "conv1d" : rank == 2 ? "conv2d" : "conv3d";
        mapped(n, ni, outs, kind, *x, attrs, claimed);
    }

    void matmul(const Node& n, const NodeInputs& ni, const std::vector<Value>& outs) {
        const Shape* a = ni.shape(0);
        const Shape* bshape = ni.shape(1);
        const Value* b = ni.at(1);
        bool gemm = n.op_type == "Gemm";
        const Shape& out = outs[0].shape;
        if (is_static(b) && bshape && bshape->size() == 2 && a && (!gemm || out.size() == 2)) {
            std::int64_t k = gemm && n.int_attr("transB", 0) ? (*bshape)[1] : (*bshape)[0];
            std::int64_t cols = gemm && n.int_attr("transB", 0) ? (*bshape)[0] : (*bshape)[1];
            Shape input = gemm ? Shape{out[0], k} : *a;
            if (input.size() == 1) input.insert(input.begin(), 1);
            bool tied = false;
            std::int64_t claimed = claim(b, &tied);
            bool bias = gemm && is_static(ni.at(2));
            if (bias) claimed += claim(ni.at(2));
            if (!gemm) {
                // nn.Linear on more than two dims exports as MatMul then Add of the bias: one layer.
                const Value* bias_value = fused_bias(n, cols);
                if (bias_value) bias = true, claimed += claim(bias_value);
            }
            return mapped(n, ni, outs, "linear", input,
                          {{"out_features", cols}, {"bias", bias}, {"tied", tied && claimed <= (bias ? cols : 0)}}, claimed);
        }
        // Two activations (or a weight of more than two dims): a batched product, the weight counted loose.
        if (!a || !bshape || out.empty()) return memory_bound(n, ni, outs, 2, true);
        std::int64_t k = gemm ? (n.int_attr("transA", 0) ? (*a)[0] : (*a)[1]) : a->back();
        Shape input = out.size() >= 2 ? out : Shape{1, out.empty() ? 1 : out[0]};
        std::int64_t cols = bshape->size() == 1 && !gemm ? 1 : input.back();
        if (a->size() == 1) input.insert(input.end() - 1, 1);
        input.back() = k;
        mapped(n, ni, outs, "matmul", input, {{"n", cols}});
    }

    // The Add right after MatMul `n` that adds a static vector of `cols` elements: folded into the linear.
    const Value* fused_bias(const Node& n, std::int64_t cols) {
        if (n.outputs.empty()) return nullptr;
        auto it = consumers_.find(n.outputs[0]);
        if (it == consumers_.end() || it->second.size() != 1) return nullptr;
        std::size_t j = it->second[0];
        const Node& add = g_.nodes[j];
        if (add.op_type != "Add" || add.inputs.size() != 2 || !add.domain.empty()) return nullptr;
        const std::string& other = add.inputs[0] == n.outputs[0] ? add.inputs[1] : add.inputs[0];
        auto v = values_.find(other);
        if (v == values_.end() || v->second.data || !v->second.shape_known || elements(v->second.shape) != cols ||
            v->second.shape.empty() || v->second.shape.back() != cols)
            return nullptr;
        fused_[j] = true;
        return &v->second;
    }

    void pool(const Node& n, const NodeInputs& ni, const std::vector<Value>& outs) {
        const Shape* x = ni.shape(0);
        auto kernel = n.ints_attr("kernel_shape");
        std::size_t rank = x ? x->size() - 2 : 0;
        auto dil = n.ints_attr("dilations");
        bool dilated = std::any_of(dil.begin(), dil.end(), [](std::int64_t d) { return d != 1; });
        std::string auto_pad = n.string_attr("auto_pad", "NOTSET");
        if (!x || rank < 1 || rank > 3 || kernel.size() != rank || dilated || (auto_pad != "NOTSET" && auto_pad != "VALID"))
            return memory_bound(n, ni, outs, 1, n.op_type == "MaxPool");
        json attrs = {{"kernel_size", kernel}, {"ceil_mode", n.int_attr("ceil_mode", 0) != 0}};
        if (n.attribute("strides")) attrs["stride"] = n.ints_attr("strides");
        auto pads = n.ints_attr("pads");
        if (pads.size() == 2 * rank && auto_pad == "NOTSET") attrs["padding"] = Shape(pads.begin(), pads.begin() + rank);
        mapped(n, ni, outs, n.op_type == "MaxPool" ? "maxpool2d" : "avgpool2d", *x, attrs);
    }

    void recurrent(const Node& n, const NodeInputs& ni, const std::vector<Value>& outs) {
        const Shape& x = *ni.shape(0);
        bool batch_first = n.int_attr("layout", 0) == 1;
        Shape input = batch_first ? x : Shape{x[1], x[0], x[2]};
        std::int64_t hidden = outs[0].shape.back();
        std::int64_t claimed = claim(ni.at(1)) + claim(ni.at(2)) + claim(ni.at(3));
        std::string kind = n.op_type == "LSTM" ? "lstm" : n.op_type == "GRU" ? "gru" : "rnn";
        mapped(n, ni, outs, kind, input,
               {{"hidden", hidden}, {"bidirectional", n.string_attr("direction", "forward") == "bidirectional"},
                {"bias", ni.at(3) != nullptr}},
               claimed);
    }

    void attention(const Node& n, const NodeInputs& ni, const std::vector<Value>& outs) {
        const Shape& q = *ni.shape(0);
        Shape queries = q;
        std::int64_t heads = n.int_attr(n.op_type == "Attention" && n.domain.empty() ? "q_num_heads" : "num_heads", 0);
        std::int64_t kv_heads = n.int_attr("kv_num_heads", heads);
        std::int64_t kv_tokens = q.size() == 4 ? q[2] : q[1];
        bool causal = n.int_attr(n.domain.empty() ? "is_causal" : "unidirectional", 0) != 0;
        if (n.domain == "com.microsoft" && n.op_type == "Attention") {
            // Input [batch, tokens, hidden] with one qkv weight [hidden, 3 x hidden]: the projection is a linear.
            const Shape* w = ni.shape(1);
            std::int64_t claimed = claim(ni.at(1)) + claim(ni.at(2));
            Layer* proj = add("linear", layer_name(n) + ".qkv", q, {{"out_features", (*w)[1]}, {"bias", ni.at(2) != nullptr}},
                              any_grad(ni));
            owned(proj, claimed);
            auto sizes = n.ints_attr("qkv_hidden_sizes");
            queries.back() = sizes.size() == 3 ? sizes[0] : (*w)[1] / 3;
        } else {
            if (q.size() == 4) {  // [batch, heads, tokens, head_dim]
                heads = q[1];
                queries = {q[0], q[2], q[1] * q[3]};
                if (const Shape* k = ni.shape(1); k && k->size() == 4) kv_heads = (*k)[1], kv_tokens = (*k)[2];
            } else if (const Shape* k = ni.shape(1)) {
                if (k->size() == 3) kv_tokens = (*k)[1];
            }
        }
        if (heads <= 0) heads = 1;
        if (kv_heads <= 0) kv_heads = heads;
        json attrs = {{"heads", heads}, {"kv_heads", kv_heads}, {"kv_tokens", kv_tokens}, {"causal", causal}};
        if (const Shape* v = ni.shape(2); v && n.domain.empty() && v->size() == q.size())
            attrs["v_head_dim"] = v->size() == 4 ? v->back() : v->back() / std::max<std::int64_t>(kv_heads, 1);
        mapped(n, ni, outs, "attention_core", queries, attrs);
    }

    static double einsum_flops(const Node& n, const NodeInputs& ni) {
        // 2 x the product of the contracted dims per output element (letters in the operands, not the output).
        std::string eq = n.string_attr("equation", "");
        auto arrow = eq.find("->");
        if (arrow == std::string::npos || ni.in.size() < 2) return 1;
        std::string out = eq.substr(arrow + 2);
        std::map<char, std::int64_t> dims;
        std::size_t term = 0, pos = 0;
        for (char c : eq.substr(0, arrow)) {
            if (c == ',') { ++term, pos = 0; continue; }
            if (c == ' ') continue;
            const Shape* s = ni.shape(term);
            if (s && pos < s->size()) dims[c] = std::max(dims[c], (*s)[pos]);
            ++pos;
        }
        double product = 2;
        for (auto [c, d] : dims)
            if (out.find(c) == std::string::npos) product *= double(d);
        return std::min(product, double(limits::dimension));
    }

    // Trainable initializers no layer owns (biases added element-wise, position tables, layer scales, weights
    // transformed before use): counted once, as loose parameters.
    void add_loose_parameters() {
        std::int64_t loose = leftover_;
        for (std::size_t i = 0; i < g_.initializers.size(); ++i)
            if (!claimed_[i] && !buffer_[i] && onnx::is_float_type(g_.initializers[i].data_type))
                loose = checked_add(loose, g_.initializers[i].elements, "parameter count");
        for (int part = 0; loose > 0; ++part) {
            std::int64_t count = std::min(loose, limits::dimension);
            add("parameters", part ? "loose_parameters." + std::to_string(part) : "loose_parameters", {in_.batch},
                {{"count", count}}, false);
            loose -= count;
        }
    }
};

}  // namespace

bool looks_like_onnx_document(const json& document) {
    return document.is_object() && document.contains("onnx_base64");
}

Model model_from_onnx_document(const json& document, const ModelInputs& inputs) {
    if (!document["onnx_base64"].is_string())
        throw Error("ONNX model: 'onnx_base64' must be a string (the file's bytes, base64-encoded)", ErrorCode::invalid_model);
    std::string name = "onnx-model";
    if (document.contains("name")) {
        if (!document["name"].is_string()) throw Error("ONNX model: 'name' must be a string", ErrorCode::invalid_model);
        name = document["name"].get<std::string>();
        auto slash = name.find_last_of("/\\");
        if (slash != std::string::npos) name = name.substr(slash + 1);
        if (name.size() > 5 && lower(name.substr(name.size() - 5)) == ".onnx") name.resize(name.size() - 5);
        if (name.empty()) name = "onnx-model";
    }
    const std::string& text = document["onnx_base64"].get_ref<const std::string&>();
    if (text.size() / 4 * 3 > limits::onnx_bytes + 3)
        throw Error("ONNX file: the file is more than the limit of " + std::to_string(limits::onnx_bytes >> 20) +
                        " MiB (export it with its weights as external data: only the .onnx file is needed)",
                    ErrorCode::invalid_model);
    return model_from_onnx(base64_decode(text), name, inputs);
}

Model model_from_onnx(std::string_view bytes, const std::string& name, const ModelInputs& inputs) {
    if (inputs.batch <= 0) throw Error("batch size must be positive");
    try {
        onnx::ModelProto model = onnx::parse_model(bytes);
        return Importer(model, name, inputs).run();
    } catch (const Error& e) {
        // The file's names are raw bytes inside the importer (its tensors' identifiers), and its messages quote
        // them: made valid UTF-8 here, where every one leaves (the model's own names pass graph/builder.cpp).
        Error clean(valid_utf8(e.what()), e.code(), e.field());
        throw clean.at_path(e.path()).at_attr(e.attr());
    }
}

std::string base64_encode(std::string_view bytes) {
    static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        std::uint32_t v = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16;
        if (i + 1 < bytes.size()) v |= std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8;
        if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? alphabet[(v >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? alphabet[v & 63] : '=';
    }
    return out;
}

std::string base64_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size() / 4 * 3);
    std::uint32_t acc = 0;
    int bits = 0;
    bool padding = false;
    for (char c : text) {
        int v;
        if (c >= 'A' && c <= 'Z') v = c - 'A';
        else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
        else if (c >= '0' && c <= '9') v = c - '0' + 52;
        else if (c == '+' || c == '-') v = 62;
        else if (c == '/' || c == '_') v = 63;
        else if (c == '=') { padding = true; continue; }
        else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        else throw Error("ONNX model: 'onnx_base64' is not base64 (it holds '" + std::string(1, c) + "')", ErrorCode::invalid_model);
        if (padding) throw Error("ONNX model: 'onnx_base64' has data after its '=' padding", ErrorCode::invalid_model);
        acc = (acc << 6) | std::uint32_t(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += char((acc >> bits) & 0xFF);
        }
    }
    return out;
}

}  // namespace prenet
