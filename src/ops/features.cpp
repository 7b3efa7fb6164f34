#include "ops/features.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "ops/catalogue.hpp"
#include "ops/moe.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

// Reads fp32 and writes half precision (or the reverse).
Kernel cast_kernel(const std::string& op, Phase phase, double elements, Precision half) {
    return streaming_kernel(Family::elementwise, phase, op, half, elements, 0.0,
                            elements * (4.0 + activation_bytes(half)));
}

// The dtype of the tensor flowing between layers under autocast: the embeddings start an fp32 residual stream
// (a half-precision branch added to it is promoted back to fp32), matmuls emit half precision, element-wise
// layers keep what they receive.
struct AutocastStream {
    bool residual_fp32 = false;  // the model has an fp32 embedding feeding its residual adds
    bool current_fp32 = false;

    // The precision a layer with `traits` runs at, and what it makes of the stream.
    Precision run(const OpTraits& traits, Precision half) {
        bool fp32 = traits.autocast == AutocastClass::fp32_list || traits.autocast == AutocastClass::fp32_output ||
                    (traits.adds_to_residual_stream && residual_fp32) ||
                    (traits.autocast != AutocastClass::half && current_fp32);
        current_fp32 = fp32;
        return fp32 ? Precision::fp32 : half;
    }
};

// A cast of the layer's input in the forward and, when the input needs a gradient, the gradient's cast back.
void add_input_cast(LayerFeatures& lf, const std::string& op, Precision half) {
    double n = double(elements(lf.layer.input));
    lf.cost.kernels.push_back(cast_kernel(op, Phase::forward, n, half));
    if (lf.layer.needs_input_grad) lf.cost.kernels.push_back(cast_kernel(op + "_backward", Phase::backward_input, n, half));
}

// What autocast adds to a half-precision layer: casting an fp32 input for each operation that reads it (and
// each of their half-precision input gradients back to fp32; each cast copy is saved for the weight gradient),
// casting the weights each forward (and their half-precision gradients back to fp32), and the half weight
// copies the backward keeps.
void add_autocast_casts(LayerFeatures& lf, Precision half, bool input_fp32) {
    LayerCost& c = lf.cost;
    if (input_fp32 && !lf.layer.input.empty()) {
        for (int use = 0; use < c.input_uses; ++use) add_input_cast(lf, "autocast_input_cast", half);
        c.saved_activation_bytes += double(c.input_uses - 1) * double(elements(lf.layer.input)) * activation_bytes(half);
    }
    if (c.params > 0) {
        c.kernels.push_back(cast_kernel("autocast_weight_cast", Phase::forward, double(c.params), half));
        c.kernels.push_back(cast_kernel("autocast_weight_grad_cast", Phase::backward_weight, double(c.params), half));
    }
}

// Autograd sums the input gradients of a layer whose input several operations read: one pass (read 2,
// write 1) per extra use, in the input's type.
void add_input_gradient_sums(LayerFeatures& lf, Precision input_type) {
    if (!lf.layer.needs_input_grad || lf.layer.input.empty()) return;
    double n = double(elements(lf.layer.input));
    for (int use = 1; use < lf.cost.input_uses; ++use) {
        Kernel sum = ops::gradient_sum_kernel("input_gradient_sum", input_type, n);
        lf.cost.backward_input_flops += sum.flops;
        lf.cost.kernels.push_back(sum);
    }
}

}  // namespace

namespace {

// The last dense layer outside the blocks (an LM head, a classifier): bitsandbytes leaves the output layer
// unquantised (transformers' get_keys_to_not_convert).
const Layer* output_layer(const Model& model) {
    const Layer* out = nullptr;
    for (const auto& block : model.blocks)
        for (const auto& layer : block.layers)
            if (block.name.empty() && layer.kind == "linear") out = &layer;
    return out;
}

bool has_frozen_component(const Model& model) {
    for (const auto& block : model.blocks)
        for (const auto& layer : block.layers)
            if (layer.frozen_component) return true;
    return false;
}

}  // namespace

ModelFeatures compute_features(const Model& original, Precision precision, MixedRecipe mixed, const FineTune& ft) {
    ModelFeatures f;
    const Layer* previous = nullptr;
    const OpTraits* previous_traits = nullptr;
    bool autocast = runs_autocast(precision, mixed);
    AutocastStream stream;
    const FineTuneLayout layout = layout_for_finetune(original, ft);
    const Model& model = layout.model();
    const Layer* output = output_layer(model);
    // Something before the current layer trains: from the start unless layers are frozen (a model that begins
    // with a frozen component, a diffusion pipeline's encoders, runs them forward only).
    bool gradient_flows = !ft.freezes() && !has_frozen_component(original);
    for (const auto& block : model.blocks)
        for (const auto& layer : block.layers)
            if (op_traits(layer).starts_fp32_stream) stream.residual_fp32 = true;
    for (size_t b = 0; b < model.blocks.size(); ++b) {
        const Block& block = model.blocks[b];
        double r = double(block.repeat);
        for (size_t i = 0; i < block.layers.size(); ++i) {
            // (Each layer is copied once, into its features; layers are most of what a model holds.)
            LayerFeatures lf{block.layers[i], block.name, block.repeat, {}, false};
            const Layer& layer = lf.layer;
            if (!gradient_flows) lf.layer.needs_input_grad = false;
            const OpTraits& traits = op_traits(layer);
            bool input_fp32 = stream.current_fp32;
            Precision p = autocast ? stream.run(traits, precision) : precision;
            if (autocast && traits.fp32_softmax_under_autocast) {
                Layer costed = layer;
                costed.attrs["softmax_fp32"] = true;
                lf.cost = layer_cost(costed, p);
            } else {
                lf.cost = layer_cost(layer, p);
            }
            lf.input_fp32 = autocast && input_fp32;
            lf.block_index = b;
            // An fp32-list op handed a half-precision tensor casts it to fp32 first, and its gradient back.
            if (autocast && !input_fp32 && traits.autocast == AutocastClass::fp32_list && !layer.input.empty())
                add_input_cast(lf, "autocast_fp32_input_cast", precision);
            if (autocast && traits.autocast == AutocastClass::half) {
                add_autocast_casts(lf, precision, input_fp32);
                f.half_weight_copy_bytes += r * double(lf.cost.params) * activation_bytes(precision);
            }
            add_input_gradient_sums(lf, autocast && input_fp32 ? Precision::fp32 : p);
            // A ReLU's saved output and the next layer's saved input are one tensor (conv -> bn -> relu -> conv):
            // count it once. Only for a direct successor (same shape, next in order).
            if (previous && previous_traits->keeps_output(*previous) && traits.saves_input &&
                previous->output == layer.input)
                lf.cost.saved_activation_bytes = std::max(
                    0.0, lf.cost.saved_activation_bytes - double(elements(layer.input)) * matmul_input_bytes(precision));
            previous = &block.layers[i];
            previous_traits = &traits;
            // Fine-tuning: a frozen layer's weights are quantised (adapters' base only, never the output layer),
            // lose their gradients, and may carry adapters.
            lf.frozen = layout.frozen[b][i];
            std::int64_t adapters = 0;
            // A layer running another's weights (Zamba2's shared blocks) dequantises and adapts them at every
            // invocation, but stores no copy of its own: PEFT wraps the shared module, and its adapter, once.
            const bool shares_weights = ops::bool_attr(layer, "shares_weights", false);
            if (lf.frozen) {
                // A frozen component (a pipeline's text encoder) keeps its own weights: no quantisation, no adapters.
                if (ft.adapters() && &block.layers[i] != output && !layer.frozen_component) {
                    QuantizedBase q = quantize_weights(lf.cost, ft.quantization, p);
                    if (!shares_weights) {
                        f.quantized_params += r * q.params;
                        f.quantized_weight_bytes += r * q.bytes;
                    }
                    f.largest_dequantized_bytes = std::max(f.largest_dequantized_bytes, q.largest_buffer);
                }
                drop_weight_gradients(lf.cost);
                if (!layer.frozen_component) adapters = add_lora(lf.cost, layer, p, ft);
                if (shares_weights) adapters = 0;
            }
            lf.trainable_params = checked_add(lf.frozen ? 0 : lf.cost.params, adapters, "parameter count");
            if (!gradient_flows && lf.trainable_params == 0) {
                drop_backward(lf.cost);
                lf.runs_backward = false;
            }
            if (lf.trainable_params > 0) gradient_flows = true;
            std::int64_t params = checked_add(lf.cost.params, adapters, "parameter count");
            f.params = checked_add(f.params, checked_mul(params, block.repeat, "parameter count"), "parameter count");
            f.trainable_params = checked_add(f.trainable_params, checked_mul(lf.trainable_params, block.repeat,
                                                                             "parameter count"), "parameter count");
            f.adapter_params = checked_add(f.adapter_params, checked_mul(adapters, block.repeat, "parameter count"),
                                           "parameter count");
            if (lf.frozen) f.frozen_params += r * double(lf.cost.params);
            f.macs += r * lf.cost.macs;
            f.forward_flops += r * lf.cost.forward_flops;
            f.backward_input_flops += r * lf.cost.backward_input_flops;
            f.backward_weight_flops += r * lf.cost.backward_weight_flops;
            f.forward_bytes += r * (lf.cost.forward_bytes_read + lf.cost.forward_bytes_written);
            f.saved_activation_bytes += r * lf.cost.saved_activation_bytes;
            f.layers.push_back(std::move(lf));
        }
    }
    f.frozen_params -= f.quantized_params;  // the frozen parameters stored unquantised
    std::map<std::string, double> block_copy;
    for (const auto& lf : f.layers) {
        for (const auto& k : lf.cost.kernels) f.has_conv = f.has_conv || k.family == Family::conv;
        f.routed_expert_params += double(lf.repeat) * double(routed_expert_params(lf.layer));
        if (lf.layer.attrs.value("tied_copy", false)) f.tied_copy_params += double(lf.repeat) * double(lf.cost.params);
        if (lf.block.empty()) f.largest_unit_params = std::max(f.largest_unit_params, double(lf.cost.params));
        else block_copy[lf.block] += double(lf.cost.params);
    }
    for (const auto& [name, params] : block_copy) f.largest_unit_params = std::max(f.largest_unit_params, params);
    // The parameters are tensors the step touches element by element (the optimizer's update reads every one), so
    // they meet the limit on one tensor's elements, 2^53, here where both `features` and `predict` pass; predict
    // refused a Keras Dense of 2^31 x 2^31 only at its optimizer kernel while features reported 4.6e18 parameters.
    if (f.params > limits::tensor_elements)
        throw Error("model '" + model.name + "' has " + std::to_string(f.params) + " parameters, over the limit of " +
                    std::to_string(limits::tensor_elements) + " (2^53, the limit on one tensor's elements; the "
                    "optimizer step updates every parameter); check the sizes");
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
                          {"trainable_params", lf.trainable_params},
                          {"frozen", lf.frozen},
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
            {"trainable_params", f.trainable_params},
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
