// Linear / dense layers: y = x W^T + b over the last dimension.
#include <algorithm>

#include "core/checked.hpp"
#include "ops/finetune.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

void infer_linear(Layer& layer) {
    ops::require_rank(layer, 2, 6);
    std::int64_t out = ops::int_attr(layer, "out_features");
    if (layer.attrs.contains("in_features") && ops::int_attr(layer, "in_features") != layer.input.back())
        ops::fail(layer, "in_features " + layer.attrs["in_features"].dump() + " does not match input " +
                             to_string(layer.input));
    ops::bool_attr(layer, "bias", true);
    ops::bool_attr(layer, "tied", false);
    std::string target = ops::string_attr(layer, "lora_target", "");
    if (!target.empty() && std::find(lora_target_names().begin(), lora_target_names().end(), target) ==
                               lora_target_names().end())
        ops::fail(layer, "field 'lora_target' must be one of " + lora_target_list_text());
    layer.output = layer.input;
    layer.output.back() = out;
}

// A linear that is one of an attention's or MLP's projections written out on its own (a diffusion
// transformer's to_q, add_k_proj, ...) names its PEFT target: LoRA adapts it as it would that projection.
std::vector<LinearModule> linear_module(const Layer& layer) {
    std::string target = ops::string_attr(layer, "lora_target", "");
    if (target.empty()) return {};
    return {{target, layer.input.back(), layer.output.back(), ops::leading_elements(layer.input), 1, true}};
}

void cost_linear(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t in = layer.input.back(), out = layer.output.back();
    std::int64_t rows = ops::leading_elements(layer.input);
    bool bias = ops::bool_attr(layer, "bias", true);
    bool tied = ops::bool_attr(layer, "tied", false);
    // A tied layer reuses another layer's weight (an LM head tied to the token embedding): counted once there.
    // Its bias, if any, is its own (BERT's masked-LM decoder).
    cost.params = checked_add(tied ? 0 : checked_mul(in, out, "parameter count"), bias ? out : 0, "parameter count");
    cost.macs += double(rows) * double(in) * double(out);
    ops::add_gemm(cost, layer, p, "linear", 1, rows, out, in, true, layer.needs_input_grad);
    if (bias) {
        cost.forward_flops += double(rows) * double(out);  // fused into the GEMM epilogue
        ops::add_bias_grad(cost, p, "linear", double(rows), double(out));
    }
    cost.saved_activation_bytes += double(rows) * double(in) * matmul_input_bytes(p);
}

// The product of two activations (attention scores and context written out as MatMul in an imported graph):
// input [..., m, k] times [..., k, n]; the leading dims are the batch of independent products.
void infer_matmul(Layer& layer) {
    ops::require_rank(layer, 2, 8);
    layer.output = layer.input;
    layer.output.back() = ops::int_attr(layer, "n");
}

void cost_matmul(const Layer& layer, Precision p, LayerCost& cost) {
    const Shape& in = layer.input;
    std::int64_t m = in[in.size() - 2], k = in.back(), n = layer.output.back();
    std::int64_t batch = elements(in) / (m * k);
    cost.macs += double(batch) * double(m) * double(n) * double(k);
    ops::add_gemm(cost, layer, p, "matmul", batch, m, n, k, false, layer.needs_input_grad);
    cost.saved_activation_bytes += double(batch) * (double(m) * k + double(k) * n) * matmul_input_bytes(p);
}

}  // namespace

void register_linear_ops(OpCatalogue& c) {
    c.add({"linear",
           "dense layer over the last dimension: out_features, bias (true), tied (false), lora_target (none: the "
           "attention or MLP projection it is, q, k, v, o, gate, up or down, which --finetune lora adapts)",
           infer_linear, cost_linear, OpTraits::of(AutocastClass::half).saving_input().with_linear_modules(linear_module)});
    c.add({"matmul", "product of two activations, [..., m, k] x [..., k, n] (leading dims batched): n", infer_matmul,
           cost_matmul, OpTraits::of(AutocastClass::half).saving_input()});
}

}  // namespace prenet
