#include "ops/features.hpp"

#include <algorithm>
#include <cmath>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

// PyTorch's ReLU, sigmoid and tanh keep their output for the backward pass.
bool saves_its_output(const Layer& layer) {
    if (layer.kind != "activation") return false;
    std::string fn = layer.attrs.value("function", std::string("relu"));
    return fn == "relu" || fn == "relu6" || fn == "sigmoid" || fn == "tanh";
}

// Layers that keep their input for the backward pass (for their weight or input gradient).
bool saves_its_input(const Layer& layer) {
    static const char* kinds[] = {"linear", "conv1d", "conv2d", "conv3d", "conv_transpose2d", "maxpool2d",
                                  "batchnorm", "layernorm", "rmsnorm", "groupnorm", "squeeze_excitation", "mlp",
                                  "attention", "mla_attention", "moe", "rnn", "lstm", "gru"};
    for (const char* k : kinds)
        if (layer.kind == k) return true;
    return false;
}

}  // namespace

ModelFeatures compute_features(const Model& model, Precision precision) {
    ModelFeatures f;
    const Layer* previous = nullptr;
    for (const auto& block : model.blocks) {
        double r = double(block.repeat);
        for (const auto& layer : block.layers) {
            LayerFeatures lf{layer, block.name, block.repeat, layer_cost(layer, precision)};
            // A ReLU's saved output and the next layer's saved input are one tensor (conv -> bn -> relu -> conv):
            // count it once. Only for a direct successor (same shape, next in order).
            if (previous && saves_its_output(*previous) && saves_its_input(layer) && previous->output == layer.input)
                lf.cost.saved_activation_bytes = std::max(
                    0.0, lf.cost.saved_activation_bytes - double(elements(layer.input)) * matmul_input_bytes(precision));
            previous = &layer;
            f.params = checked_add(f.params, checked_mul(lf.cost.params, block.repeat, "parameter count"),
                                   "parameter count");
            f.macs += r * lf.cost.macs;
            f.forward_flops += r * lf.cost.forward_flops;
            f.backward_input_flops += r * lf.cost.backward_input_flops;
            f.backward_weight_flops += r * lf.cost.backward_weight_flops;
            f.forward_bytes += r * (lf.cost.forward_bytes_read + lf.cost.forward_bytes_written);
            f.saved_activation_bytes += r * lf.cost.saved_activation_bytes;
            f.layers.push_back(std::move(lf));
        }
    }
    // Doubles hold up to ~1e308 but above ~1e30 FLOPs the input is surely a mistake (and 64-bit consumers break).
    if (!std::isfinite(f.forward_flops) || f.forward_flops > 1e30)
        throw Error("model '" + model.name + "' is absurdly large (forward FLOPs " + std::to_string(f.forward_flops) +
                    "); check the sizes");
    return f;
}

json to_json(const ModelFeatures& f) {
    json layers = json::array();
    for (const auto& lf : f.layers) {
        const LayerCost& c = lf.cost;
        layers.push_back({{"name", lf.layer.name},
                          {"kind", lf.layer.kind},
                          {"block", lf.block},
                          {"repeat", lf.repeat},
                          {"input_shape", lf.layer.input},
                          {"output_shape", lf.layer.output},
                          {"params", c.params},
                          {"macs", c.macs},
                          {"forward_flops", c.forward_flops},
                          {"backward_input_flops", c.backward_input_flops},
                          {"backward_weight_flops", c.backward_weight_flops},
                          {"bytes_read", c.forward_bytes_read},
                          {"bytes_written", c.forward_bytes_written},
                          {"saved_activation_bytes", c.saved_activation_bytes},
                          {"kernels", c.kernels.size()}});
    }
    return {{"params", f.params},
            {"macs", f.macs},
            {"forward_flops", f.forward_flops},
            {"backward_flops", f.backward_flops()},
            {"backward_input_flops", f.backward_input_flops},
            {"backward_weight_flops", f.backward_weight_flops},
            {"forward_bytes", f.forward_bytes},
            {"saved_activation_bytes", f.saved_activation_bytes},
            {"layers", layers}};
}

}  // namespace prenet
