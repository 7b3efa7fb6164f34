// Memory-bound layers: activations, dropout, softmax, residual add, concatenation, squeeze-excitation's
// gating, and shape-only layers (reshape, flatten, select token) that launch no kernel.
#include <algorithm>

#include "core/checked.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

const std::vector<std::string> kActivations = {"relu", "relu6", "gelu", "gelu_tanh", "silu", "tanh",
                                               "sigmoid", "hardswish", "hardsigmoid", "leaky_relu", "identity"};

double activation_flops(const std::string& fn) {
    if (fn == "gelu" || fn == "gelu_tanh") return 14;
    if (fn == "silu" || fn == "tanh" || fn == "sigmoid") return 8;
    if (fn == "hardswish" || fn == "hardsigmoid") return 5;
    return 1;
}

void infer_same(Layer& layer) { layer.output = layer.input; }

void infer_activation(Layer& layer) {
    std::string fn = ops::string_attr(layer, "function", "relu");
    if (std::find(kActivations.begin(), kActivations.end(), fn) == kActivations.end())
        ops::fail(layer, "unknown activation '" + fn + "'");
    layer.output = layer.input;
}

void cost_activation(const Layer& layer, Precision p, LayerCost& cost) {
    std::string fn = ops::string_attr(layer, "function", "relu");
    if (fn == "identity") return;
    double n = double(elements(layer.input));
    ops::add_vector(cost, layer, p, Family::elementwise, fn, n, 1.0, 1.0, activation_flops(fn));
    cost.saved_activation_bytes += n * activation_bytes(p);
}

void infer_dropout(Layer& layer) {
    double rate = ops::number_attr(layer, "p", 0.1);
    if (rate < 0 || rate >= 1) ops::fail(layer, "field 'p' must be in [0, 1)");
    layer.output = layer.input;
}

void cost_dropout(const Layer& layer, Precision p, LayerCost& cost) {
    if (ops::number_attr(layer, "p", 0.1) == 0) return;
    double n = double(elements(layer.input));
    ops::add_dropout(cost, layer, p, "dropout", n);
}

void cost_softmax(const Layer& layer, Precision p, LayerCost& cost) {
    double n = double(elements(layer.input));
    ops::add_vector(cost, layer, p, Family::softmax, "softmax", n, 1.0, 1.0, 5.0, true, layer.input.back());
    cost.saved_activation_bytes += n * activation_bytes(p);
}

void cost_add(const Layer& layer, Precision p, LayerCost& cost) {
    double n = double(elements(layer.input));
    ops::add_vector(cost, layer, p, Family::elementwise, "add", n, 2.0, 1.0, 1.0, false);
    // The add passes its gradient through unchanged, but the block input it adds back was used twice (by the
    // branch and by the skip), so autograd sums the two gradients that reach it: one more pass, read 2 write 1.
    Kernel sum = ops::gradient_sum_kernel("residual_gradient_sum", cost.kernels.back().precision, n);
    cost.backward_input_flops += sum.flops;
    cost.kernels.push_back(sum);
}

void infer_concat(Layer& layer) {
    // Concatenates `extra` channels (dim 1) produced elsewhere onto the input: DenseNet's growth.
    ops::require_rank(layer, 2, 5);
    layer.output = layer.input;
    layer.output[1] = checked_add(layer.input[1], ops::int_attr(layer, "extra"), "tensor size");
}

void cost_concat(const Layer& layer, Precision p, LayerCost& cost) {
    ops::add_vector(cost, layer, p, Family::elementwise, "cat", double(elements(layer.output)), 1.0, 1.0, 0.0);
}

void infer_reshape(Layer& layer) {
    // `shape` is the per-sample shape; one entry may be -1.
    if (!layer.attrs.contains("shape") || !layer.attrs["shape"].is_array())
        ops::fail(layer, "missing field 'shape' (a list of per-sample dims, one may be -1)");
    std::int64_t per_sample = elements(layer.input) / layer.input[0], known = 1;
    int unknown = -1;
    Shape out = {layer.input[0]};
    for (size_t i = 0; i < layer.attrs["shape"].size(); ++i) {
        const auto& v = layer.attrs["shape"][i];
        if (!v.is_number_integer()) ops::fail(layer, "field 'shape' must hold integers");
        std::int64_t d = v.get<std::int64_t>();
        if (d == -1 && unknown < 0) {
            unknown = static_cast<int>(out.size());
            out.push_back(1);
            continue;
        }
        if (d <= 0) ops::fail(layer, "field 'shape' must hold positive dims (and at most one -1)");
        known = checked_mul(known, d, "tensor size");
        out.push_back(d);
    }
    if (unknown >= 0) {
        if (per_sample % known) ops::fail(layer, "cannot reshape " + to_string(layer.input));
        out[unknown] = per_sample / known;
    }
    if (elements(out) != elements(layer.input))
        ops::fail(layer, "cannot reshape " + to_string(layer.input) + " to " + to_string(out));
    layer.output = out;
}

void infer_flatten(Layer& layer) {
    layer.output = {layer.input[0], elements(layer.input) / layer.input[0]};
}

void infer_select_token(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    layer.output = {layer.input[0], layer.input[2]};
}

void infer_mean_tokens(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    layer.output = {layer.input[0], layer.input[2]};
}

void cost_mean_tokens(const Layer& layer, Precision p, LayerCost& cost) {
    double n = double(elements(layer.input));
    ops::add_vector(cost, layer, p, Family::pool, "mean", double(elements(layer.output)), n /
                    double(elements(layer.output)), 1.0, n / double(elements(layer.output)));
}

void no_cost(const Layer&, Precision, LayerCost&) {}

// An op costed as memory-bound over its tensors (an imported graph's op without a kind of its own): it writes
// `output_shape` once, reads `reads` times that many elements (all its inputs), and computes
// `flops_per_element` per output element. Its backward, when its input needs a gradient, reads one more tensor
// and writes a gradient per input; `saves` (true) keeps its input for that backward.
void infer_memory_bound(Layer& layer) {
    if (!layer.attrs.contains("op") || !layer.attrs["op"].is_string()) ops::fail(layer, "missing string field 'op'");
    if (!layer.attrs.contains("output_shape") || !layer.attrs["output_shape"].is_array() ||
        layer.attrs["output_shape"].empty())
        ops::fail(layer, "missing field 'output_shape' (the output's dims, batch first)");
    Shape out;
    for (const auto& d : layer.attrs["output_shape"]) {
        if (!d.is_number_integer() || d.get<std::int64_t>() <= 0)
            ops::fail(layer, "field 'output_shape' must hold positive integers");
        out.push_back(d.get<std::int64_t>());
    }
    elements(out);
    double reads = ops::number_attr(layer, "reads", 1.0), flops = ops::number_attr(layer, "flops_per_element", 1.0);
    if (!(reads >= 0) || !(flops >= 0)) ops::fail(layer, "fields 'reads' and 'flops_per_element' must not be negative");
    ops::bool_attr(layer, "saves", true);
    layer.output = out;
}

void cost_memory_bound(const Layer& layer, Precision p, LayerCost& cost) {
    double n = double(elements(layer.output)), reads = ops::number_attr(layer, "reads", 1.0);
    ops::add_vector(cost, layer, p, Family::elementwise, ops::string_attr(layer, "op", "op"), n, reads, 1.0,
                    ops::number_attr(layer, "flops_per_element", 1.0), layer.needs_input_grad);
    if (ops::bool_attr(layer, "saves", true)) cost.saved_activation_bytes += double(elements(layer.input)) * activation_bytes(p);
}

// Trainable parameters that no layer of their own owns (an imported graph's biases added by an element-wise
// op, learned position tables, scales): counted, with their gradients and optimizer state; the ops that read
// them are costed where they are.
void infer_parameters(Layer& layer) {
    ops::int_attr(layer, "count");
    layer.output = layer.input;
}

void cost_parameters(const Layer& layer, Precision, LayerCost& cost) { cost.params = ops::int_attr(layer, "count"); }

// PyTorch's ReLU, ReLU6, sigmoid and tanh compute their gradient from their output, so they keep it.
bool activation_saves_output(const Layer& layer) {
    std::string fn = layer.attrs.value("function", std::string("relu"));
    return fn == "relu" || fn == "relu6" || fn == "sigmoid" || fn == "tanh";
}

void infer_squeeze_excitation(Layer& layer) {
    ops::require_rank(layer, 4, 4);
    ops::int_attr(layer, "squeeze_channels");
    layer.output = layer.input;
}

void cost_squeeze_excitation(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t c = layer.input[1], s = ops::int_attr(layer, "squeeze_channels"), b = layer.input[0];
    cost.params = checked_add(checked_mul(2 * c, s, "parameter count"), c + s, "parameter count");
    double n = double(elements(layer.input));
    ops::add_vector(cost, layer, p, Family::pool, "se_pool", double(b * c), n / double(b * c), 1.0,
                    n / double(b * c));
    cost.macs += 2.0 * double(b) * double(c) * double(s);
    ops::add_gemm(cost, layer, p, "se_reduce", 1, b, s, c, true, true);
    ops::add_gemm(cost, layer, p, "se_expand", 1, b, c, s, true, true);
    ops::add_vector(cost, layer, p, Family::elementwise, "se_scale", n, 2.0, 1.0, 1.0);
    cost.saved_activation_bytes += n * activation_bytes(p);
}

}  // namespace

void register_elementwise_ops(OpCatalogue& c) {
    const OpTraits follows = OpTraits::of(AutocastClass::follows_input);
    c.add({"activation", "elementwise activation: function (relu, relu6, gelu, gelu_tanh, silu, tanh, sigmoid, "
                         "hardswish, hardsigmoid, leaky_relu, identity)",
           infer_activation, cost_activation,
           OpTraits::of(AutocastClass::follows_input).saving_output(activation_saves_output)});
    c.add({"dropout", "dropout with rate p (0.1); p = 0 launches nothing", infer_dropout, cost_dropout, follows});
    c.add({"softmax", "softmax over the last dim", infer_same, cost_softmax,
           OpTraits::of(AutocastClass::fp32_list)});
    c.add({"residual_add", "adds the block's input back (a residual connection)", infer_same, cost_add,
           OpTraits::of(AutocastClass::follows_input).adding_to_residual_stream()});
    c.add({"concat", "concatenates `extra` channels produced by a side branch onto dim 1", infer_concat,
           cost_concat, follows});
    c.add({"reshape", "changes the per-sample shape (no data moves): shape", infer_reshape, no_cost,
           follows});
    c.add({"flatten", "flattens all but the batch dim (no data moves)", infer_flatten, no_cost, follows});
    c.add({"select_token", "takes the first token of [batch, tokens, hidden] (CLS pooling)", infer_select_token,
           no_cost, follows});
    c.add({"mean_tokens", "mean over the token dim of [batch, tokens, hidden]", infer_mean_tokens,
           cost_mean_tokens, follows});
    c.add({"memory_bound",
           "an op costed as memory-bound over its tensors (imported ops without a kind of their own): op, "
           "output_shape, reads (1: input elements per output element), flops_per_element (1), saves (true)",
           infer_memory_bound, cost_memory_bound, follows});
    c.add({"parameters", "trainable parameters no layer owns (an imported graph's loose weights): count; no kernel",
           infer_parameters, cost_parameters, follows});
    c.add({"squeeze_excitation", "squeeze-and-excitation gate on [N, C, H, W]: squeeze_channels",
           infer_squeeze_excitation, cost_squeeze_excitation, OpTraits::of(AutocastClass::half).saving_input()});
}

}  // namespace prenet
