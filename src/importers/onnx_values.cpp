#include "importers/onnx_values.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "ops/window.hpp"

namespace prenet::onnx {
namespace {

using Shapes = std::vector<std::optional<Shape>>;

[[noreturn]] void fail(const Node& n, const std::string& message) {
    throw Error("ONNX file: node '" + (n.name.empty() ? n.outputs.empty() ? std::string("?") : n.outputs[0] : n.name) +
                    "' (" + n.op_type + "): " + message,
                ErrorCode::invalid_model);
}

std::int64_t clamp_int(double v) {
    if (!(v == v)) return 0;
    if (v >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
    if (v <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(v);
}

const std::set<std::string> kSameShape = {
    "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Floor", "Ceil", "Round",
    "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus",
    "Softsign", "Elu", "Selu", "Celu", "LeakyRelu", "HardSigmoid", "HardSwish", "Gelu", "Mish", "ThresholdedRelu",
    "Clip", "Identity", "Cast", "CastLike", "Not", "IsNaN", "IsInf", "Softmax", "LogSoftmax", "Hardmax",
    "LpNormalization", "LRN", "InstanceNormalization", "MeanVarianceNormalization", "Shrink", "BitwiseNot", "Dropout",
    "BatchNormalization", "LayerNormalization", "GroupNormalization", "RMSNormalization",
    "SimplifiedLayerNormalization", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "Trilu", "CumSum",
    "ReverseSequence", "FastGelu", "QuickGelu", "BiasGelu", "ScatterND", "ScatterElements", "Scatter", "EyeLike"};

const std::set<std::string> kBroadcast = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Mean", "Sum",
                                          "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or",
                                          "Xor", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "PRelu", "Where"};

const std::set<std::string> kReduce = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                                       "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
                                       "ArgMax", "ArgMin"};

std::vector<std::int64_t> to_ints(const std::vector<double>& v) {
    std::vector<std::int64_t> out;
    out.reserve(v.size());
    for (double d : v) out.push_back(clamp_int(d));
    return out;
}

Shape checked(const Node& n, Shape s) {
    std::int64_t total = 1;
    for (auto d : s) {
        if (d < 0) fail(n, "an output would have a negative dimension " + to_string(s));
        if (d > limits::dimension)
            fail(n, "an output " + to_string(s) + " has a dimension over the limit of " + std::to_string(limits::dimension));
        if (d > 0 && total > limits::tensor_elements / d)
            fail(n, "an output " + to_string(s) + " has more than " + std::to_string(limits::tensor_elements) +
                        " elements (the limit on one tensor)");
        total *= d;
    }
    return s;
}

// Output size along one spatial dim of a convolution or pooling: ONNX's auto_pad words on the op catalogue's rule.
std::int64_t window_out(const Node& n, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dil,
                        std::int64_t pad_total, const std::string& auto_pad, bool ceil_mode) {
    if (k <= 0 || stride <= 0 || dil <= 0) fail(n, "kernel, stride and dilation must be positive");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return ops::same_padding_output(in, stride);
    std::int64_t eff = checked_add(checked_mul(dil, k - 1, "kernel size"), 1, "kernel size");
    std::optional<std::int64_t> o = ops::window_output(in, eff, stride, auto_pad == "VALID" ? 0 : pad_total, ceil_mode);
    if (!o) fail(n, "the kernel (" + std::to_string(eff) + ") is larger than the padded input (" + std::to_string(in) + ")");
    return *o;
}

std::vector<std::int64_t> spatial_attr(const Node& n, const char* key, std::size_t rank, std::int64_t fallback) {
    auto v = n.ints_attr(key);
    if (v.empty()) return std::vector<std::int64_t>(rank, fallback);
    if (v.size() != rank) fail(n, std::string("attribute '") + key + "' has " + std::to_string(v.size()) +
                                      " entries for " + std::to_string(rank) + " spatial dims");
    return v;
}

Shape window_shape(const NodeInputs& ni, const Shape& x, std::int64_t out_channels, const std::vector<std::int64_t>& kernel,
                   bool transposed) {
    const Node& n = ni.node;
    std::size_t rank = x.size() - 2;
    if (kernel.size() != rank) fail(n, "the kernel has " + std::to_string(kernel.size()) + " dims for input " + to_string(x));
    auto strides = spatial_attr(n, "strides", rank, 1), dil = spatial_attr(n, "dilations", rank, 1);
    std::vector<std::int64_t> windows = strides;
    windows.insert(windows.end(), dil.begin(), dil.end());
    windows.insert(windows.end(), kernel.begin(), kernel.end());
    for (auto v : windows)
        if (v <= 0 || v > limits::dimension)
            fail(n, "kernel, strides and dilations must be between 1 and " + std::to_string(limits::dimension));
    auto pads = n.ints_attr("pads");
    if (pads.empty()) pads.assign(2 * rank, 0);
    if (pads.size() != 2 * rank) fail(n, "attribute 'pads' must have 2 entries per spatial dim");
    for (auto p : pads)
        if (p < 0 || p > limits::dimension) fail(n, "attribute 'pads' must be between 0 and " + std::to_string(limits::dimension));
    std::string auto_pad = n.string_attr("auto_pad", "NOTSET");
    bool ceil_mode = n.int_attr("ceil_mode", 0) != 0;
    Shape out = {x[0], out_channels};
    for (std::size_t i = 0; i < rank; ++i) {
        if (transposed) {
            auto out_pad = spatial_attr(n, "output_padding", rank, 0);
            auto output_shape = n.ints_attr("output_shape");
            if (output_shape.size() == rank) { out.push_back(output_shape[i]); continue; }
            if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") { out.push_back(checked_mul(x[2 + i], strides[i], "output size")); continue; }
            std::int64_t o = checked_add(checked_mul(x[2 + i] - 1, strides[i], "output size"),
                                         checked_add(checked_mul(dil[i], kernel[i] - 1, "output size"), 1 + out_pad[i], "output size"),
                                         "output size") - pads[i] - pads[i + rank];
            if (o <= 0) fail(n, "the output size is not positive for input " + to_string(x));
            out.push_back(o);
        } else {
            out.push_back(window_out(n, x[2 + i], kernel[i], strides[i], dil[i], pads[i] + pads[i + rank], auto_pad, ceil_mode));
        }
    }
    return out;
}

Shape matmul_shape(const Node& n, Shape a, Shape b) {
    if (a.empty() || b.empty()) fail(n, "MatMul needs inputs of rank 1 or more");
    bool a1 = a.size() == 1, b1 = b.size() == 1;
    if (a1) a.insert(a.begin(), 1);
    if (b1) b.push_back(1);
    if (a.back() != b[b.size() - 2])
        fail(n, "the inner dims of " + to_string(a) + " and " + to_string(b) + " differ");
    Shape batch = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), "MatMul");
    Shape out = batch;
    if (!a1) out.push_back(a[a.size() - 2]);
    if (!b1) out.push_back(b.back());
    return out;
}

Shapes rnn_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    const Shape* w = ni.shape(1);
    if (!x || x->size() != 3) fail(n, "the input must be [sequence, batch, features]");
    if (!w || w->size() != 3) fail(n, "the weight W must be [directions, gates x hidden, features]");
    std::int64_t dirs = n.string_attr("direction", "forward") == "bidirectional" ? 2 : 1;
    std::int64_t gates = n.op_type == "LSTM" ? 4 : n.op_type == "GRU" ? 3 : 1;
    std::int64_t hidden = n.int_attr("hidden_size", (*w)[1] / gates);
    if (hidden <= 0 || hidden > limits::dimension) fail(n, "hidden_size must be between 1 and " + std::to_string(limits::dimension));
    bool batch_first = n.int_attr("layout", 0) == 1;
    std::int64_t steps = batch_first ? (*x)[1] : (*x)[0], batch = batch_first ? (*x)[0] : (*x)[1];
    Shape y = batch_first ? Shape{batch, steps, dirs, hidden} : Shape{steps, dirs, batch, hidden};
    Shape state = batch_first ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
    return {y, state, state};
}

Shapes attention_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* q = ni.shape(0);
    if (!q || q->size() < 3 || q->size() > 4) fail(n, "the query must be [batch, tokens, hidden] or [batch, heads, tokens, head_dim]");
    Shape out = *q;
    if (n.op_type == "Attention" && n.domain == "com.microsoft") {
        const Shape* w = ni.shape(1);
        if (!w || w->size() != 2) fail(n, "the weights must be [hidden, 3 x hidden]");
        auto sizes = n.ints_attr("qkv_hidden_sizes");
        out.back() = sizes.size() == 3 ? sizes[2] : (*w)[1] / 3;
        return {out};
    }
    const Shape* v = ni.shape(2);
    if (v && v->size() == q->size()) {
        if (q->size() == 4) out.back() = v->back();
        else if (n.op_type == "Attention") {
            std::int64_t qh = n.int_attr("q_num_heads", 0), kvh = n.int_attr("kv_num_heads", 0);
            if (qh > 0 && kvh > 0) out.back() = checked_mul(qh, v->back() / kvh, "attention width");
            else out.back() = v->back();
        } else {
            out.back() = v->back();
        }
    }
    return {out};
}

// Einsum's output from its equation (explicit "->" form or the implicit one).
std::optional<Shape> einsum_shape(const NodeInputs& ni) {
    const Node& n = ni.node;
    std::string eq;
    for (char c : n.string_attr("equation", "")) if (c != ' ') eq += c;
    auto arrow = eq.find("->");
    std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (std::size_t start = 0;;) {
        auto comma = lhs.find(',', start);
        terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (terms.size() != ni.in.size()) fail(n, "the equation has " + std::to_string(terms.size()) + " operands for " +
                                                  std::to_string(ni.in.size()) + " inputs");
    std::map<char, std::int64_t> dims;
    std::map<char, int> count;
    for (std::size_t t = 0; t < terms.size(); ++t) {
        const Shape* s = ni.shape(t);
        if (!s || terms[t].find('.') != std::string::npos || s->size() != terms[t].size()) return std::nullopt;
        for (std::size_t i = 0; i < terms[t].size(); ++i) {
            dims[terms[t][i]] = std::max(dims[terms[t][i]], (*s)[i]);
            ++count[terms[t][i]];
        }
    }
    std::string out_letters;
    if (arrow != std::string::npos) out_letters = eq.substr(arrow + 2);
    else for (auto [c, k] : count) if (k == 1) out_letters += c;
    Shape out;
    for (char c : out_letters) {
        if (!dims.count(c)) fail(n, std::string("the output letter '") + c + "' is in no operand");
        out.push_back(dims[c]);
    }
    return out;
}

std::optional<Shape> reduce_shape(const NodeInputs& ni, const Shape& x) {
    const Node& n = ni.node;
    bool keep = n.int_attr("keepdims", 1) != 0;
    std::vector<std::int64_t> axes;
    if (n.op_type == "ArgMax" || n.op_type == "ArgMin") {
        axes = {n.int_attr("axis", 0)};
    } else if (n.attribute("axes")) {
        axes = n.ints_attr("axes");
    } else if (ni.at(1)) {
        auto v = ni.ints(1);
        if (!v) return std::nullopt;
        axes = *v;
    }
    if (axes.empty() && n.int_attr("noop_with_empty_axes", 0)) return x;
    std::vector<bool> reduced(x.size(), axes.empty());
    for (auto a : axes) reduced[normalize_axis(a, x.size(), n.op_type)] = true;
    Shape out;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!reduced[i]) out.push_back(x[i]);
        else if (keep) out.push_back(1);
    }
    return out;
}

std::optional<Shape> reshape_shape(const NodeInputs& ni, const Shape& x) {
    const Node& n = ni.node;
    auto target = ni.ints(1, "shape");
    if (!target) return std::nullopt;
    bool allow_zero = n.int_attr("allowzero", 0) != 0;
    std::int64_t total = elements(x), known = 1;
    int unknown = -1;
    Shape out;
    for (std::size_t i = 0; i < target->size(); ++i) {
        std::int64_t d = (*target)[i];
        if (d == 0 && !allow_zero) {
            if (i >= x.size()) fail(n, "a 0 in the target shape copies a dim the input " + to_string(x) + " lacks");
            d = x[i];
        }
        if (d == -1) {
            if (unknown >= 0) fail(n, "the target shape has two -1 entries");
            unknown = static_cast<int>(i);
            out.push_back(1);
            continue;
        }
        if (d < 0 || d > limits::dimension) fail(n, "the target shape holds " + std::to_string(d));
        known = checked_mul(known, d, "tensor size");
        out.push_back(d);
    }
    if (unknown >= 0) {
        if (known == 0 || total % known) fail(n, "cannot reshape " + to_string(x) + " to the target shape " + to_string(Shape(target->begin(), target->end())));
        out[unknown] = total / known;
    }
    if (elements(out) != total) fail(n, "cannot reshape " + to_string(x) + " (" + std::to_string(total) + " elements) to " + to_string(out));
    return out;
}

std::optional<Shape> slice_shape(const NodeInputs& ni, const Shape& x) {
    const Node& n = ni.node;
    std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
    if (n.attribute("starts")) {  // opset < 10
        starts = n.ints_attr("starts"), ends = n.ints_attr("ends");
        if (n.attribute("axes")) axes = n.ints_attr("axes");
    } else {
        starts = ni.ints(1), ends = ni.ints(2);
        if (!starts || !ends) return std::nullopt;
        if (ni.at(3)) { axes = ni.ints(3); if (!axes) return std::nullopt; }
        if (ni.at(4)) { steps = ni.ints(4); if (!steps) return std::nullopt; }
    }
    if (!axes) { axes = std::vector<std::int64_t>(); for (std::size_t i = 0; i < starts->size(); ++i) axes->push_back(std::int64_t(i)); }
    if (ends->size() != starts->size() || axes->size() != starts->size() || (steps && steps->size() != starts->size()))
        fail(n, "starts, ends, axes and steps must have the same length");
    Shape out = x;
    for (std::size_t i = 0; i < starts->size(); ++i) {
        std::int64_t axis = normalize_axis((*axes)[i], x.size(), "Slice"), dim = x[axis];
        std::int64_t step = steps ? (*steps)[i] : 1;
        if (step == 0) fail(n, "a slice step is 0");
        auto clampi = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
            if (v < 0) v = v < -dim ? -1 : v + dim;  // INT64_MIN stays clear of overflow
            return std::max(lo, std::min(hi, v));
        };
        std::int64_t s = (*starts)[i], e = (*ends)[i];
        if (step == std::numeric_limits<std::int64_t>::min()) step = -limits::tensor_elements;  // its negation overflows
        if (step > 0) {
            s = clampi(s, 0, dim), e = clampi(e, 0, dim);
            out[axis] = e > s ? (e - s - 1) / step + 1 : 0;
        } else {
            s = clampi(s, -1, dim - 1), e = clampi(e, -1, dim - 1);
            if ((*ends)[i] < -dim) e = -1;
            out[axis] = s > e ? (s - e - 1) / (-step) + 1 : 0;
        }
    }
    return out;
}

std::optional<Shape> resize_shape(const NodeInputs& ni, const Shape& x) {
    const Node& n = ni.node;
    std::size_t scales_at = n.op_type == "Upsample" ? 1 : 2;
    if (ni.at(3)) {  // sizes
        auto sizes = ni.ints(3);
        if (!sizes) return std::nullopt;
        if (sizes->size() != x.size()) return std::nullopt;  // with `axes`: not handled
        return Shape(sizes->begin(), sizes->end());
    }
    const Value* s = ni.at(scales_at);
    std::vector<double> scales;
    if (const auto* a = n.attribute("scales")) scales = a->floats;
    else if (s && s->has_values) scales = s->values;
    else return std::nullopt;
    if (scales.size() != x.size()) return std::nullopt;
    Shape out;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double d = std::floor(double(x[i]) * scales[i]);
        if (!(d >= 0) || d > double(limits::dimension)) fail(n, "a resize scale gives a dimension out of range");
        out.push_back(std::int64_t(d));
    }
    return out;
}

Shapes split_shapes(const NodeInputs& ni, const Shape& x) {
    const Node& n = ni.node;
    std::int64_t axis = normalize_axis(n.int_attr("axis", 0), x.size(), "Split");
    std::vector<std::int64_t> sizes;
    if (n.attribute("split")) sizes = n.ints_attr("split");
    else if (ni.at(1)) {
        auto v = ni.ints(1);
        if (!v) return Shapes(n.outputs.size());
        sizes = *v;
    } else {
        std::int64_t parts = n.int_attr("num_outputs", std::int64_t(n.outputs.size()));
        if (parts <= 0 || parts != std::int64_t(n.outputs.size())) fail(n, "num_outputs does not match the node's outputs");
        std::int64_t each = (x[axis] + parts - 1) / parts;
        for (std::int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<std::int64_t>(0, std::min(each, x[axis] - i * each)));
    }
    if (sizes.size() != n.outputs.size()) fail(n, "the split sizes do not match the " + std::to_string(n.outputs.size()) + " outputs");
    std::int64_t sum = 0;
    Shapes out;
    for (auto s : sizes) {
        if (s < 0) fail(n, "a split size is negative");
        sum = checked_add(sum, s, "split size");
        Shape part = x;
        part[axis] = s;
        out.push_back(part);
    }
    if (sum != x[axis]) fail(n, "the split sizes add up to " + std::to_string(sum) + ", not " + std::to_string(x[axis]));
    return out;
}

// ---- Shape inference per op: one function per op or family of ops, found in the table below ----
// Each returns the shapes of the node's outputs, an unknown one where its inputs do not tell.

Shapes unknown(const NodeInputs& ni) { return Shapes(ni.node.outputs.size()); }

// Elementwise ops, normalisations and others whose outputs are shaped as their first input; a normalisation's
// extra outputs (saved statistics) are per channel (BatchNormalization) or per normalised row (LayerNormalization).
Shapes same_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const std::string& op = n.op_type;
    std::size_t outs = n.outputs.size();
    const Shape* x = ni.shape(0);
    if (!x) return unknown(ni);
    Shapes out(outs, *x);
    if (op == "BatchNormalization" && x->size() >= 2)
        for (std::size_t i = 1; i < outs; ++i) out[i] = Shape{(*x)[1]};
    if (op == "LayerNormalization" || op == "SkipLayerNormalization") {
        std::int64_t axis = normalize_axis(n.int_attr("axis", -1), x->size(), op);
        Shape stat = *x;
        for (std::size_t i = std::size_t(axis); i < stat.size(); ++i) stat[i] = 1;
        for (std::size_t i = 1; i < outs; ++i) out[i] = stat;
    }
    return out;
}

Shapes broadcast_shapes(const NodeInputs& ni) {
    std::optional<Shape> s;
    for (std::size_t i = 0; i < ni.in.size(); ++i) {
        const Shape* si = ni.shape(i);
        if (!si) return unknown(ni);
        s = s ? broadcast(*s, *si, ni.node.op_type) : *si;
    }
    return {s};
}

// The shape functions above that read the first input's shape: unknown while it is.
template <std::optional<Shape> (*of_input)(const NodeInputs&, const Shape&)>
Shapes from_input(const NodeInputs& ni) {
    const Shape* x = ni.shape(0);
    if (!x) return unknown(ni);
    return {of_input(ni, *x)};
}

Shapes shape_of_shape(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    if (!x) return {Shape{}};
    std::int64_t r = std::int64_t(x->size());
    std::int64_t start = n.int_attr("start", 0), end = n.int_attr("end", r);
    start = std::clamp<std::int64_t>(start < 0 ? start + r : start, 0, r);
    end = std::clamp<std::int64_t>(end < 0 ? end + r : end, 0, r);
    return {Shape{std::max<std::int64_t>(0, end - start)}};
}

Shapes scalar(const NodeInputs&) { return {Shape{}}; }

Shapes matmul_shapes(const NodeInputs& ni) {
    const Shape *x = ni.shape(0), *b = ni.shape(1);
    if (!x || !b) return unknown(ni);
    return {matmul_shape(ni.node, *x, *b)};
}

Shapes gemm_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape *x = ni.shape(0), *b = ni.shape(1);
    if (!x || !b || x->size() != 2 || b->size() != 2) fail(n, "Gemm needs two 2-d inputs");
    std::int64_t m = n.int_attr("transA", 0) ? (*x)[1] : (*x)[0], k = n.int_attr("transA", 0) ? (*x)[0] : (*x)[1];
    std::int64_t kb = n.int_attr("transB", 0) ? (*b)[1] : (*b)[0], nn = n.int_attr("transB", 0) ? (*b)[0] : (*b)[1];
    if (k != kb) fail(n, "the inner dims of " + to_string(*x) + " and " + to_string(*b) + " differ");
    return {Shape{m, nn}};
}

// Conv and ConvTranspose.
Shapes conv_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape *x = ni.shape(0), *w = ni.shape(1);
    if (!x || !w || x->size() < 3 || w->size() != x->size())
        fail(n, "the input and the weight must be [N, C, spatial...] and [out, in / groups, kernel...] of one rank");
    std::int64_t group = n.int_attr("group", 1);
    if (group <= 0) fail(n, "group must be positive");
    std::vector<std::int64_t> kernel(w->begin() + 2, w->end());
    if (n.op_type == "Conv") {
        if ((*x)[1] != checked_mul((*w)[1], group, "channels"))
            fail(n, "the input has " + std::to_string((*x)[1]) + " channels, the weight " + to_string(*w) +
                        " with group " + std::to_string(group) + " expects " + std::to_string((*w)[1] * group));
        return {window_shape(ni, *x, (*w)[0], kernel, false)};
    }
    if ((*x)[1] != (*w)[0]) fail(n, "the input has " + std::to_string((*x)[1]) + " channels, the weight " + to_string(*w));
    return {window_shape(ni, *x, checked_mul((*w)[1], group, "channels"), kernel, true)};
}

// MaxPool, AveragePool, LpPool (MaxPool's optional second output, the indices, is shaped as the first).
Shapes pool_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    if (!x || x->size() < 3) fail(n, "pooling needs an input [N, C, spatial...]");
    Shape out = window_shape(ni, *x, (*x)[1], n.ints_attr("kernel_shape"), false);
    return Shapes(n.outputs.size(), out);
}

Shapes global_pool_shapes(const NodeInputs& ni) {
    const Shape* x = ni.shape(0);
    if (!x || x->size() < 2) fail(ni.node, "global pooling needs an input [N, C, ...]");
    Shape out = *x;
    for (std::size_t i = 2; i < out.size(); ++i) out[i] = 1;
    return {out};
}

Shapes flatten_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    if (!x) return unknown(ni);
    std::int64_t axis = n.int_attr("axis", 1);
    axis = axis < 0 ? axis + std::int64_t(x->size()) : axis;
    if (axis < 0 || axis > std::int64_t(x->size())) fail(n, "axis out of range");
    std::int64_t a = 1, b = 1;
    for (std::int64_t i = 0; i < std::int64_t(x->size()); ++i) (i < axis ? a : b) *= (*x)[i];
    return {Shape{a, b}};
}

Shapes squeeze_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const std::string& op = n.op_type;
    const Shape* x = ni.shape(0);
    if (!x) return unknown(ni);
    auto axes = ni.ints(1, "axes");
    if (!axes) {
        Shape out;
        for (auto d : *x) if (d != 1) out.push_back(d);
        return {out};
    }
    std::vector<bool> drop(x->size(), false);
    for (auto a : *axes) drop[normalize_axis(a, x->size(), op)] = true;
    Shape out;
    for (std::size_t i = 0; i < x->size(); ++i) if (!drop[i]) out.push_back((*x)[i]);
    return {out};
}

Shapes unsqueeze_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    if (!x) return unknown(ni);
    auto axes = ni.ints(1, "axes");
    if (!axes) return unknown(ni);
    std::size_t rank = x->size() + axes->size();
    std::vector<bool> added(rank, false);
    for (auto a : *axes) {
        std::int64_t axis = normalize_axis(a, rank, n.op_type);
        if (added[axis]) fail(n, "an axis is given twice");
        added[axis] = true;
    }
    Shape out;
    std::size_t j = 0;
    for (std::size_t i = 0; i < rank; ++i) out.push_back(added[i] ? 1 : (*x)[j++]);
    return {out};
}

Shapes transpose_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    if (!x) return unknown(ni);
    auto perm = n.ints_attr("perm");
    Shape out(x->rbegin(), x->rend());
    if (!perm.empty()) {
        if (perm.size() != x->size()) fail(n, "perm has " + std::to_string(perm.size()) + " entries for input " + to_string(*x));
        std::vector<bool> seen(x->size(), false);
        for (std::size_t i = 0; i < perm.size(); ++i) {
            std::int64_t p = normalize_axis(perm[i], x->size(), n.op_type);
            if (seen[p]) fail(n, "perm repeats an axis");
            seen[p] = true;
            out[i] = (*x)[p];
        }
    }
    return {out};
}

Shapes concat_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    std::optional<Shape> out;
    for (std::size_t i = 0; i < ni.in.size(); ++i) {
        const Shape* s = ni.shape(i);
        if (!s) return unknown(ni);
        if (!out) { out = *s; continue; }
        if (s->size() != out->size()) fail(n, "inputs of different ranks");
        std::int64_t axis = normalize_axis(n.int_attr("axis", 0), s->size(), n.op_type);
        for (std::size_t d = 0; d < s->size(); ++d)
            if (std::int64_t(d) != axis && (*s)[d] != (*out)[d]) fail(n, "inputs " + to_string(*out) + " and " + to_string(*s) + " differ off the axis");
        (*out)[axis] = checked_add((*out)[axis], (*s)[axis], "tensor size");
    }
    return {out};
}

Shapes split_outputs(const NodeInputs& ni) {
    const Shape* x = ni.shape(0);
    if (!x) return unknown(ni);
    return split_shapes(ni, *x);
}

Shapes gather_shapes(const NodeInputs& ni) {
    const Shape *x = ni.shape(0), *idx = ni.shape(1);
    if (!x || !idx) return unknown(ni);
    std::int64_t axis = normalize_axis(ni.node.int_attr("axis", 0), x->size(), ni.node.op_type);
    Shape out(x->begin(), x->begin() + axis);
    out.insert(out.end(), idx->begin(), idx->end());
    out.insert(out.end(), x->begin() + axis + 1, x->end());
    return {out};
}

Shapes gather_elements_shapes(const NodeInputs& ni) {
    const Shape* idx = ni.shape(1);
    return {idx ? std::optional<Shape>(*idx) : std::nullopt};
}

Shapes expand_shapes(const NodeInputs& ni) {
    const Shape* x = ni.shape(0);
    auto target = ni.ints(1);
    if (!x || !target) return unknown(ni);
    return {broadcast(*x, Shape(target->begin(), target->end()), ni.node.op_type)};
}

Shapes tile_shapes(const NodeInputs& ni) {
    const Shape* x = ni.shape(0);
    auto reps = ni.ints(1);
    if (!x || !reps || reps->size() != x->size()) return unknown(ni);
    Shape out = *x;
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = checked_mul(out[i], (*reps)[i], "tensor size");
    return {out};
}

Shapes pad_shapes(const NodeInputs& ni) {
    const Shape* x = ni.shape(0);
    auto pads = ni.ints(1, "pads");
    if (!x || !pads) return unknown(ni);
    if (pads->size() != 2 * x->size()) return unknown(ni);  // with `axes`: not handled
    Shape out = *x;
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = checked_add(out[i], checked_add((*pads)[i], (*pads)[i + out.size()], "padding"), "padding");
    return {out};
}

Shapes constant_of_shape_shapes(const NodeInputs& ni) {
    auto s = ni.ints(0);
    if (!s) return unknown(ni);
    return {Shape(s->begin(), s->end())};
}

Shapes range_shapes(const NodeInputs& ni) {
    const Value *a = ni.at(0), *b = ni.at(1), *c = ni.at(2);
    if (!a || !b || !c || !a->has_values || !b->has_values || !c->has_values || a->values.empty() ||
        b->values.empty() || c->values.empty() || c->values[0] == 0)
        return unknown(ni);
    double count = std::ceil((b->values[0] - a->values[0]) / c->values[0]);
    if (!(count <= double(limits::dimension))) fail(ni.node, "the range is too long");
    return {Shape{std::max<std::int64_t>(0, std::int64_t(count))}};
}

Shapes top_k_shapes(const NodeInputs& ni) {
    const Shape* x = ni.shape(0);
    auto k = ni.ints(1, "k");
    if (!x || !k || k->empty()) return unknown(ni);
    Shape out = *x;
    out[normalize_axis(ni.node.int_attr("axis", -1), x->size(), ni.node.op_type)] = (*k)[0];
    return {out, out};
}

// DepthToSpace and SpaceToDepth.
Shapes depth_space_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    if (!x || x->size() != 4) return unknown(ni);
    std::int64_t b = n.int_attr("blocksize", 1);
    if (b <= 0 || b > limits::dimension) fail(n, "blocksize must be between 1 and " + std::to_string(limits::dimension));
    Shape out = *x;
    if (n.op_type == "DepthToSpace") out[1] /= b * b, out[2] *= b, out[3] *= b;
    else out[1] *= b * b, out[2] /= b, out[3] /= b;
    return {out};
}

Shapes one_hot_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    auto depth = ni.ints(1);
    if (!x || !depth || depth->empty()) return unknown(ni);
    Shape out = *x;
    std::int64_t axis = n.int_attr("axis", -1);
    axis = axis < 0 ? axis + std::int64_t(out.size()) + 1 : axis;
    if (axis < 0 || axis > std::int64_t(out.size())) fail(n, "axis out of range");
    out.insert(out.begin() + axis, (*depth)[0]);
    return {out};
}

Shapes einsum_shapes(const NodeInputs& ni) { return {einsum_shape(ni)}; }

// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss: a scalar, or per sample with reduction "none"; the
// optional second output (the log-probabilities) is shaped as the scores.
Shapes loss_shapes(const NodeInputs& ni) {
    const Node& n = ni.node;
    const Shape* x = ni.shape(0);
    if (!x || x->size() < 2) return unknown(ni);
    Shape out;
    if (n.string_attr("reduction", "mean") == "none") { out = {(*x)[0]}; out.insert(out.end(), x->begin() + 2, x->end()); }
    return n.outputs.size() > 1 ? Shapes{out, *x} : Shapes{out};
}

using Inference = Shapes (*)(const NodeInputs&);

// Which function infers each op's output shapes; an op not here has unknown outputs.
const std::map<std::string, Inference>& inference_table() {
    static const std::map<std::string, Inference> table = [] {
        std::map<std::string, Inference> t = {
            {"Constant", unknown},  // set by the importer from its attribute
            {"Shape", shape_of_shape},
            {"Size", scalar},
            {"MatMul", matmul_shapes},
            {"Gemm", gemm_shapes},
            {"Conv", conv_shapes},
            {"ConvTranspose", conv_shapes},
            {"MaxPool", pool_shapes},
            {"AveragePool", pool_shapes},
            {"LpPool", pool_shapes},
            {"GlobalAveragePool", global_pool_shapes},
            {"GlobalMaxPool", global_pool_shapes},
            {"GlobalLpPool", global_pool_shapes},
            {"Flatten", flatten_shapes},
            {"Reshape", from_input<reshape_shape>},
            {"Squeeze", squeeze_shapes},
            {"Unsqueeze", unsqueeze_shapes},
            {"Transpose", transpose_shapes},
            {"Concat", concat_shapes},
            {"Split", split_outputs},
            {"Slice", from_input<slice_shape>},
            {"Gather", gather_shapes},
            {"GatherElements", gather_elements_shapes},
            {"Expand", expand_shapes},
            {"Tile", tile_shapes},
            {"Pad", pad_shapes},
            {"ConstantOfShape", constant_of_shape_shapes},
            {"Range", range_shapes},
            {"TopK", top_k_shapes},
            {"Resize", from_input<resize_shape>},
            {"Upsample", from_input<resize_shape>},
            {"DepthToSpace", depth_space_shapes},
            {"SpaceToDepth", depth_space_shapes},
            {"OneHot", one_hot_shapes},
            {"LSTM", rnn_shapes},
            {"GRU", rnn_shapes},
            {"RNN", rnn_shapes},
            {"Attention", attention_shapes},
            {"MultiHeadAttention", attention_shapes},
            {"Einsum", einsum_shapes},
            {"SoftmaxCrossEntropyLoss", loss_shapes},
            {"NegativeLogLikelihoodLoss", loss_shapes},
        };
        for (const auto& op : kSameShape) t.emplace(op, same_shapes);
        for (const auto& op : kBroadcast) t.emplace(op, broadcast_shapes);
        for (const auto& op : kReduce) t.emplace(op, from_input<reduce_shape>);
        return t;
    }();
    return table;
}

Shapes infer_known(const NodeInputs& ni) {
    const auto& table = inference_table();
    auto it = table.find(ni.node.op_type);
    return it == table.end() ? unknown(ni) : it->second(ni);
}

// Elementwise arithmetic on folded values (equal sizes or one side a single value).
std::optional<std::vector<double>> binary(const std::string& op, const std::vector<double>& a, const std::vector<double>& b,
                                          bool integer) {
    if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
    std::size_t n = std::max(a.size(), b.size());
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        double x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i], r;
        if (op == "Add") r = x + y;
        else if (op == "Sub") r = x - y;
        else if (op == "Mul") r = x * y;
        else if (op == "Div") { if (y == 0) return std::nullopt; r = integer ? std::trunc(x / y) : x / y; }
        else if (op == "Mod") { if (y == 0) return std::nullopt; r = std::fmod(x, y); }
        else if (op == "Max") r = std::max(x, y);
        else if (op == "Min") r = std::min(x, y);
        else if (op == "Pow") r = std::pow(x, y);
        else if (op == "Equal") r = x == y;
        else if (op == "Less") r = x < y;
        else if (op == "Greater") r = x > y;
        else if (op == "LessOrEqual") r = x <= y;
        else if (op == "GreaterOrEqual") r = x >= y;
        else if (op == "And") r = (x != 0) && (y != 0);
        else if (op == "Or") r = (x != 0) || (y != 0);
        else return std::nullopt;
        out[i] = r;
    }
    return out;
}

}  // namespace

const Shape* NodeInputs::shape(std::size_t i) const {
    const Value* v = at(i);
    return v && v->shape_known ? &v->shape : nullptr;
}

std::optional<std::vector<std::int64_t>> NodeInputs::ints(std::size_t i, const char* attr) const {
    if (attr && node.attribute(attr)) return node.ints_attr(attr);
    const Value* v = at(i);
    if (!v || !v->has_values) return std::nullopt;
    return to_ints(v->values);
}

Shape broadcast(const Shape& a, const Shape& b, const std::string& where) {
    Shape out(std::max(a.size(), b.size()), 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
        std::int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
        if (x != y && x != 1 && y != 1)
            throw Error("ONNX file: " + where + ": shapes " + to_string(a) + " and " + to_string(b) + " do not broadcast",
                        ErrorCode::invalid_model);
        out[i] = x == 1 ? y : x;
    }
    return out;
}

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank, const std::string& where) {
    std::int64_t r = std::int64_t(rank);
    if (axis < -r || axis >= r)
        throw Error("ONNX file: " + where + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r),
                    ErrorCode::invalid_model);
    return axis < 0 ? axis + r : axis;
}

std::vector<std::optional<Shape>> infer_shapes(const NodeInputs& ni) {
    Shapes out = infer_known(ni);
    out.resize(ni.node.outputs.size());
    for (auto& s : out)
        if (s) s = checked(ni.node, *s);
    return out;
}

int output_type(const NodeInputs& ni, std::size_t index) {
    const Node& n = ni.node;
    const std::string& op = n.op_type;
    if (op == "Cast") return int(n.int_attr("to", kFloat));
    if (op == "CastLike" && ni.at(1)) return ni.at(1)->type;
    if (op == "Shape" || op == "Size" || op == "NonZero" || op == "ArgMax" || op == "ArgMin") return kInt64;
    if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" ||
        op == "And" || op == "Or" || op == "Xor" || op == "Not" || op == "IsNaN" || op == "IsInf")
        return kBool;
    if ((op == "Dropout" && index == 1)) return kBool;
    if (op == "TopK" && index == 1) return kInt64;
    if (op == "MaxPool" && index == 1) return kInt64;
    if (op == "ConstantOfShape") {
        const Attribute* a = n.attribute("value");
        return a && !a->tensors.empty() ? a->tensors[0].data_type : kFloat;
    }
    if (op == "Where" && ni.at(1)) return ni.at(1)->type;
    if (op == "Gather" && ni.at(0)) return ni.at(0)->type;
    if (op == "Range" && ni.at(0)) return ni.at(0)->type;
    for (const Value* v : ni.in)
        if (v) return v->type;
    return kFloat;
}

void fold_values(const NodeInputs& ni, std::vector<Value>& outs) {
    const Node& n = ni.node;
    const std::string& op = n.op_type;
    if (outs.empty() || !outs[0].shape_known) return;
    std::int64_t count = elements(outs[0].shape);
    if (count > kMaxValueElements) return;
    auto set = [&](std::vector<double> v) {
        if (std::int64_t(v.size()) != count) return;
        if (is_integer_type(outs[0].type) || outs[0].type == kBool)
            for (auto& d : v) d = std::trunc(d);
        outs[0].values = std::move(v);
        outs[0].has_values = true;
    };
    const Value* a = ni.at(0);
    bool a_known = a && a->has_values;
    if (op == "Shape") {
        if (!a || !a->shape_known) return;
        std::int64_t r = std::int64_t(a->shape.size());
        std::int64_t start = n.int_attr("start", 0), end = n.int_attr("end", r);
        start = std::clamp<std::int64_t>(start < 0 ? start + r : start, 0, r);
        end = std::clamp<std::int64_t>(end < 0 ? end + r : end, 0, r);
        std::vector<double> v;
        for (std::int64_t i = start; i < end; ++i) v.push_back(double(a->shape[i]));
        return set(v);
    }
    if (op == "Size") {
        if (a && a->shape_known) set({double(elements(a->shape))});
        return;
    }
    if (op == "ConstantOfShape") {
        const Attribute* attr = n.attribute("value");
        double fill = 0;
        if (attr && !attr->tensors.empty()) {
            const Tensor& t = attr->tensors[0];
            if (!t.ints.empty()) fill = double(t.ints[0]);
            else if (!t.floats.empty()) fill = t.floats[0];
        }
        return set(std::vector<double>(std::size_t(count), fill));
    }
    if (op == "Range") {
        const Value *b = ni.at(1), *c = ni.at(2);
        if (!a_known || !b || !b->has_values || !c || !c->has_values || a->values.empty() || c->values.empty()) return;
        std::vector<double> v;
        for (std::int64_t i = 0; i < count; ++i) v.push_back(a->values[0] + double(i) * c->values[0]);
        return set(v);
    }
    if (op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" ||
        op == "Cast" || op == "CastLike" || op == "Expand") {
        if (!a_known) return;
        if (op == "Expand" && a->values.size() == 1) return set(std::vector<double>(std::size_t(count), a->values[0]));
        return set(a->values);
    }
    if (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Floor" || op == "Ceil" || op == "Not" || op == "Reciprocal") {
        if (!a_known) return;
        std::vector<double> v = a->values;
        for (auto& d : v)
            d = op == "Neg" ? -d : op == "Abs" ? std::fabs(d) : op == "Sqrt" ? std::sqrt(d) : op == "Floor" ? std::floor(d)
              : op == "Ceil" ? std::ceil(d) : op == "Not" ? double(d == 0) : (d == 0 ? 0 : 1 / d);
        return set(v);
    }
    if (op == "Concat") {
        std::vector<double> v;
        const Value* first = ni.at(0);
        if (!first || !first->shape_known || first->shape.size() > 1) return;  // 1-d (shape vectors) only
        for (const Value* in : ni.in) {
            if (!in || !in->has_values) return;
            v.insert(v.end(), in->values.begin(), in->values.end());
        }
        return set(v);
    }
    if (op == "Gather") {
        const Value* idx = ni.at(1);
        if (!a_known || !idx || !idx->has_values || !a->shape_known || a->shape.size() != 1) return;
        std::vector<double> v;
        std::int64_t len = a->shape[0];
        for (double d : idx->values) {
            std::int64_t i = clamp_int(d);
            if (i < -len || i >= len) fail(n, "an index is out of range");
            v.push_back(a->values[std::size_t(i < 0 ? i + len : i)]);
        }
        return set(v);
    }
    if (op == "Slice") {
        if (!a_known || !a->shape_known || a->shape.size() != 1) return;
        auto starts = ni.ints(1, "starts"), ends = ni.ints(2, "ends");
        if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return;
        std::int64_t step = 1;
        if (ni.at(4)) { auto s = ni.ints(4); if (!s || s->size() != 1 || (*s)[0] == 0) return; step = (*s)[0]; }
        std::int64_t len = a->shape[0], s = (*starts)[0], e = (*ends)[0];
        step = std::clamp<std::int64_t>(step, -(len + 1), len + 1);  // past the length one step is as good
        if (step == 0) return;
        if (s < 0) s = std::max<std::int64_t>(s < -len ? -1 : s + len, step > 0 ? 0 : -1);
        if (e < 0) e = e < -len ? -1 : e + len;
        s = std::min(s, step > 0 ? len : len - 1);
        e = std::min(e, step > 0 ? len : len - 1);
        std::vector<double> v;
        for (std::int64_t i = s; step > 0 ? i < e : i > e; i += step)
            if (i >= 0 && i < len) v.push_back(a->values[std::size_t(i)]);
        return set(v);
    }
    if (op == "Where") {
        const Value *b = ni.at(1), *c = ni.at(2);
        if (!a_known || !b || !b->has_values || !c || !c->has_values) return;
        std::vector<double> v(static_cast<std::size_t>(count));
        auto pick = [](const std::vector<double>& src, std::size_t i) { return src[src.size() == 1 ? 0 : i]; };
        for (std::size_t i = 0; i < v.size(); ++i) {
            if ((a->values.size() != 1 && a->values.size() != v.size()) || (b->values.size() != 1 && b->values.size() != v.size()) ||
                (c->values.size() != 1 && c->values.size() != v.size()))
                return;
            v[i] = pick(a->values, i) != 0 ? pick(b->values, i) : pick(c->values, i);
        }
        return set(v);
    }
    if (ni.in.size() == 2 && a_known && ni.at(1) && ni.at(1)->has_values) {
        auto v = binary(op, a->values, ni.at(1)->values, is_integer_type(a->type));
        if (v) set(*v);
    }
}

}  // namespace prenet::onnx
