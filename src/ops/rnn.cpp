// Recurrent layers (vanilla RNN, LSTM, GRU), batch first [batch, time, features], stacked and optionally
// bidirectional, with PyTorch's two bias vectors per gate set.
#include "core/checked.hpp"
#include "core/limits.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

std::int64_t gates(const Layer& layer) { return layer.kind == "lstm" ? 4 : layer.kind == "gru" ? 3 : 1; }

void infer_rnn(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    std::int64_t hidden = ops::int_attr(layer, "hidden");
    std::int64_t stacked = ops::int_attr(layer, "layers", 1);
    // Each stacked layer is costed on its own: the stack counts against the model's layer limit.
    if (stacked < 1 || stacked > limits::layers)
        throw Error("layer '" + layer.name + "': 'layers' must be between 1 and " + std::to_string(limits::layers) +
                    " (the limit on layers), got " + std::to_string(stacked))
            .at_attr("layers");
    bool bidirectional = ops::bool_attr(layer, "bidirectional", false);
    std::int64_t bias_vectors = ops::int_attr(layer, "bias_vectors", 2);
    if (bias_vectors != 1 && bias_vectors != 2) ops::fail(layer, "field 'bias_vectors' must be 1 or 2");
    layer.output = {layer.input[0], layer.input[1], hidden * (bidirectional ? 2 : 1)};
}

void cost_rnn(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t hidden = ops::int_attr(layer, "hidden"), layers = std::max<std::int64_t>(1, ops::int_attr(layer, "layers", 1));
    std::int64_t dirs = ops::bool_attr(layer, "bidirectional", false) ? 2 : 1, g = gates(layer);
    bool bias = ops::bool_attr(layer, "bias", true);
    // PyTorch keeps two bias vectors per gate (b_ih, b_hh); Keras one (two for a GRU with reset_after).
    std::int64_t bias_vectors = ops::int_attr(layer, "bias_vectors", 2);
    std::int64_t batch = layer.input[0], steps = layer.input[1], in = layer.input[2];
    for (std::int64_t l = 0; l < layers; ++l) {
        std::int64_t layer_in = l == 0 ? in : hidden * dirs;
        for (std::int64_t d = 0; d < dirs; ++d) {
            std::int64_t w = checked_mul(g * hidden, layer_in + hidden, "parameter count");
            cost.params = checked_add(cost.params, checked_add(w, bias ? bias_vectors * g * hidden : 0, "parameter count"),
                                      "parameter count");
            // Input projections for every step in one GEMM, then the sequential recurrence.
            ops::add_gemm(cost, layer, p, "rnn_input_proj", 1, batch * steps, g * hidden, layer_in, true,
                          l > 0 || layer.needs_input_grad);
            Kernel rec;
            rec.family = Family::rnn;
            rec.op = layer.kind + "_recurrence";
            rec.precision = p;
            rec.batch = steps;
            rec.m = batch;
            rec.n = g * hidden;
            rec.k = hidden;
            rec.flops = 2.0 * steps * batch * double(g * hidden) * hidden + 10.0 * steps * batch * g * hidden;
            rec.bytes = steps * (double(g * hidden) * hidden * matmul_input_bytes(p) +
                                 3.0 * batch * g * hidden * activation_bytes(p));
            cost.forward_flops += rec.flops;
            cost.macs += double(batch) * steps * g * hidden * double(layer_in + hidden);
            cost.kernels.push_back(rec);
            Kernel back = rec;
            back.phase = Phase::backward_input;
            back.op = layer.kind + "_recurrence_backward";
            back.flops = 2.0 * rec.flops;
            cost.backward_input_flops += rec.flops;
            cost.backward_weight_flops += rec.flops;
            cost.kernels.push_back(back);
            cost.saved_activation_bytes += double(batch) * steps * (g + 2) * hidden * activation_bytes(p);
        }
    }
}

}  // namespace

void register_rnn_ops(OpCatalogue& c) {
    const char* summary = "recurrent layer on [batch, time, features]: hidden, layers (1), bidirectional (false), "
                          "bias (true), bias_vectors (2: PyTorch's b_ih and b_hh per gate; 1: Keras, 2 for its GRU with "
                          "reset_after)";
    for (const char* kind : {"rnn", "lstm", "gru"}) c.add({kind, summary, infer_rnn, cost_rnn, OpTraits::of(AutocastClass::half).saving_input()});
}

}  // namespace prenet
