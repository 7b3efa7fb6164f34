// Feed-forward blocks: plain (up, activation, down) and gated (SwiGLU, GeGLU: gate and up, act(gate) * up, down).
#include "core/checked.hpp"
#include "ops/catalogue.hpp"
#include "ops/mlp.hpp"
#include "ops/op_support.hpp"

namespace prenet {

MlpShape read_mlp(const Layer& layer) {
    MlpShape s;
    s.hidden = layer.input.back();
    s.intermediate = ops::int_attr(layer, "intermediate");
    s.activation = ops::string_attr(layer, "activation", "gelu");
    s.gated = ops::bool_attr(layer, "gated", false);
    s.bias = ops::bool_attr(layer, "bias", !s.gated);
    return s;
}

std::int64_t mlp_params(const MlpShape& s) {
    std::int64_t up = s.gated ? 2 * s.intermediate : s.intermediate;
    std::int64_t p = checked_mul(s.hidden, up, "parameter count");
    p = checked_add(p, checked_mul(s.intermediate, s.hidden, "parameter count"), "parameter count");
    return s.bias ? checked_add(p, up + s.hidden, "parameter count") : p;
}

void add_mlp_kernels(LayerCost& cost, const Layer& layer, Precision p, const MlpShape& s, std::int64_t batch,
                     std::int64_t rows, bool needs_input_grad, const std::string& prefix) {
    std::int64_t up = s.gated ? 2 * s.intermediate : s.intermediate;
    ops::add_gemm(cost, layer, p, prefix + "up_proj", batch, rows, up, s.hidden, true, needs_input_grad);
    double act = double(batch) * double(rows) * double(s.intermediate);
    if (s.activation == "gelu_new") {
        // Hugging Face's NewGELUActivation (GPT-2's "gelu_new") is written in Python: eight eager PyTorch ops,
        // each a full pass over the tensor: pow, mul, add, mul, tanh, add, mul, mul.
        const double reads[] = {1, 1, 2, 1, 1, 1, 1, 2};
        for (int i = 0; i < 8; ++i)
            ops::add_vector(cost, layer, p, Family::elementwise, prefix + "gelu_new_" + std::to_string(i), act,
                            reads[i], 1.0, i == 4 ? 8.0 : 1.0);
        if (s.gated) ops::add_vector(cost, layer, p, Family::elementwise, prefix + "gate_mul", act, 2.0, 1.0, 1.0);
    } else {
        double act_flops = s.activation == "relu" ? 1 : (s.activation == "silu" ? 8 : 14);
        ops::add_vector(cost, layer, p, Family::elementwise, prefix + s.activation, act, s.gated ? 2.0 : 1.0, 1.0,
                        act_flops + (s.gated ? 1 : 0));
    }
    ops::add_gemm(cost, layer, p, prefix + "down_proj", batch, rows, s.hidden, s.intermediate, true, true);
    if (s.bias) {
        ops::add_bias_grad(cost, p, prefix + "up_proj", double(batch) * double(rows), double(up));
        ops::add_bias_grad(cost, p, prefix + "down_proj", double(batch) * double(rows), double(s.hidden));
    }
    cost.macs += double(batch) * double(rows) * double(s.hidden) * double(up + s.intermediate);
    // Under sequence parallelism the input is kept as its 1/tp shard (as the attention layer's).
    double input_shards = double(ops::int_attr(layer, "saved_input_shards", 1));
    cost.saved_activation_bytes += double(batch) * double(rows) *
                                   (double(s.hidden) * matmul_input_bytes(p) / input_shards +  // input of up
                                    double(up) * activation_bytes(p) +                    // pre-activation
                                    double(s.intermediate) * matmul_input_bytes(p));      // input of down
}

std::vector<LinearModule> mlp_modules(const MlpShape& s, std::int64_t rows, std::int64_t count, bool reads_input) {
    std::vector<LinearModule> m;
    if (s.gated) m.push_back({"gate", s.hidden, s.intermediate, rows, count, reads_input});
    m.push_back({"up", s.hidden, s.intermediate, rows, count, reads_input});
    m.push_back({"down", s.intermediate, s.hidden, rows, count, false});
    return m;
}

namespace {

void infer_mlp(Layer& layer) {
    ops::require_rank(layer, 2, 3);
    MlpShape s = read_mlp(layer);
    if (s.activation != "gelu" && s.activation != "gelu_tanh" && s.activation != "gelu_new" && s.activation != "relu" &&
        s.activation != "silu")
        ops::fail(layer, "field 'activation' must be gelu, gelu_tanh, gelu_new, relu or silu");
    layer.output = layer.input;
}

void cost_mlp(const Layer& layer, Precision p, LayerCost& cost) {
    MlpShape s = read_mlp(layer);
    cost.params = mlp_params(s);
    add_mlp_kernels(cost, layer, p, s, 1, ops::leading_elements(layer.input), layer.needs_input_grad, "");
}

}  // namespace

void register_mlp_ops(OpCatalogue& c) {
    c.add({"mlp",
           "feed-forward block: intermediate, activation (gelu | gelu_tanh | gelu_new (unfused, as Hugging Face's "
           "GPT-2 runs it) | relu | silu), gated (false; true with "
           "silu is SwiGLU, with gelu GeGLU), bias (true unless gated)",
           infer_mlp, cost_mlp, OpTraits::of(AutocastClass::half).saving_input().split_by(TensorSplit::hidden_units)
               .with_linear_modules([](const Layer& layer) {
                   return mlp_modules(read_mlp(layer), ops::leading_elements(layer.input), 1, true);
               })});
}

}  // namespace prenet
