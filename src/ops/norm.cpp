// Normalisation layers. Training-mode batch norm reads its input twice (statistics, then normalise).
#include "core/checked.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

void infer_same(Layer& layer) {
    if (layer.kind == "batchnorm" || layer.kind == "groupnorm") ops::require_rank(layer, 2, 5);
    if (layer.kind == "groupnorm") {
        std::int64_t groups = ops::int_attr(layer, "groups");
        if (layer.input[1] % groups) ops::fail(layer, "groups must divide the channel count " +
                                                          std::to_string(layer.input[1]));
    }
    ops::bool_attr(layer, "bias", true);
    ops::bool_attr(layer, "affine", true);
    layer.output = layer.input;
}

std::int64_t normalized_features(const Layer& layer) {
    bool channel_first = layer.kind == "batchnorm" || layer.kind == "groupnorm";
    return channel_first ? layer.input[1] : layer.input.back();
}

void cost_norm(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t features = normalized_features(layer);
    bool affine_bias = layer.kind != "rmsnorm" && ops::bool_attr(layer, "bias", true);
    // Without an affine transform (a diffusion transformer's LayerNorm, whose scale and shift come from the adaLN
    // modulation) the norm has no parameters and no weight gradient.
    bool affine = ops::bool_attr(layer, "affine", true);
    cost.params = affine ? checked_mul(features, affine_bias ? 2 : 1, "parameter count") : 0;
    double n = double(elements(layer.input));
    double reads = layer.kind == "batchnorm" ? 2.0 : 1.0;
    // Row-wise norms reduce over the features; batch norm reduces each channel over batch and space.
    std::int64_t row = layer.kind == "batchnorm" ? elements(layer.input) / features : features;
    ops::add_vector(cost, layer, p, Family::norm, layer.kind, n, reads, 1.0, layer.kind == "rmsnorm" ? 4.0 : 7.0,
                    true, row);
    // Batch norm's backward reduces x and dy once (the weight-gradient pass below, which also yields the sums
    // dx needs), then applies: read x and dy, write dx. Its statistics are not re-read as in the forward
    // (PyTorch's batch_norm_backward_reduce + batch_norm_backward_elemt; cuDNN's one call does the same).
    if (layer.kind == "batchnorm") cost.kernels.back().bytes = 3.0 * n * activation_bytes(p);
    if (!affine) {
        cost.saved_activation_bytes += n * activation_bytes(p);
        return;
    }
    // Weight gradient: a reduction over rows of x_hat * dy, one more pass.
    Kernel dw;
    dw.family = Family::norm;
    dw.phase = Phase::backward_weight;
    dw.op = layer.kind + "_grad_weight";
    dw.precision = p == Precision::fp8 ? Precision::bf16 : p;
    dw.elements = element_count(n, dw.op);
    dw.flops = 2.0 * n;
    dw.bytes = 2.0 * n * activation_bytes(p);
    dw.n = row;
    dw.m = element_count(n / double(row), dw.op);
    cost.backward_weight_flops += dw.flops;
    cost.kernels.push_back(dw);
    cost.saved_activation_bytes += n * activation_bytes(p);
}

}  // namespace

void register_norm_ops(OpCatalogue& c) {
    // Every norm keeps its input for the backward. Autocast leaves batch norm off its fp32 list (cuDNN's batch
    // norm takes half-precision input with fp32 statistics); the row-wise norms are on it.
    const OpTraits batch = OpTraits::of(AutocastClass::follows_input).saving_input();
    const OpTraits row = OpTraits::of(AutocastClass::fp32_list).saving_input();
    c.add({"batchnorm", "batch normalisation over channels (dim 1): weight and bias per channel", infer_same,
           cost_norm, batch});
    c.add({"layernorm", "layer normalisation over the last dim; bias (true), affine (true: false has no weight or bias)", infer_same, cost_norm, row});
    c.add({"rmsnorm", "RMS normalisation over the last dim, weight only", infer_same, cost_norm, row});
    c.add({"groupnorm", "group normalisation over channels: groups", infer_same, cost_norm, row});
}

}  // namespace prenet
