// Pooling over the spatial dims of an [N, C, spatial...] tensor.
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"
#include "ops/window.hpp"

namespace prenet {
namespace {

void infer_pool(Layer& layer) {
    ops::require_rank(layer, 3, 5);
    size_t rank = layer.input.size() - 2;
    auto kernel = ops::ints_attr(layer, "kernel_size", rank, 0);
    auto stride = layer.attrs.contains("stride") ? ops::ints_attr(layer, "stride", rank, 1) : kernel;
    auto padding = ops::ints_attr(layer, "padding", rank, 0);
    bool ceil_mode = ops::bool_attr(layer, "ceil_mode", false);
    Shape out = {layer.input[0], layer.input[1]};
    for (size_t i = 0; i < rank; ++i) {
        if (kernel[i] <= 0 || stride[i] <= 0) ops::fail(layer, "kernel_size and stride must be positive");
        if (padding[i] * 2 > kernel[i]) ops::fail(layer, "padding must be at most half the kernel size");
        std::optional<std::int64_t> o = ops::window_output(layer.input[2 + i], kernel[i], stride[i], 2 * padding[i], ceil_mode);
        if (!o) ops::fail(layer, "kernel is larger than the padded input " + to_string(layer.input));
        out.push_back(*o);
    }
    layer.output = out;
}

void infer_adaptive(Layer& layer) {
    ops::require_rank(layer, 3, 5);
    size_t rank = layer.input.size() - 2;
    auto size = ops::ints_attr(layer, "output_size", rank, 1);
    Shape out = {layer.input[0], layer.input[1]};
    for (size_t i = 0; i < rank; ++i) {
        if (size[i] <= 0) ops::fail(layer, "field 'output_size' must be positive");
        out.push_back(size[i]);
    }
    layer.output = out;
}

void cost_pool(const Layer& layer, Precision p, LayerCost& cost) {
    double in = double(elements(layer.input)), out = double(elements(layer.output));
    // Each output reads its window once from cache; DRAM traffic is the input and output once.
    ops::add_vector(cost, layer, p, Family::pool, layer.kind, out, in / out, 1.0, in / out);
    if (layer.kind == "maxpool2d") cost.saved_activation_bytes += in * activation_bytes(p);
}

}  // namespace

void register_pool_ops(OpCatalogue& c) {
    c.add({"maxpool2d", "max pooling: kernel_size, stride (= kernel_size), padding (0), ceil_mode (false)",
           infer_pool, cost_pool, OpTraits::of(AutocastClass::follows_input).saving_input()});  // for the argmax
    c.add({"avgpool2d", "average pooling: kernel_size, stride (= kernel_size), padding (0), ceil_mode (false)",
           infer_pool, cost_pool, OpTraits::of(AutocastClass::follows_input)});
    c.add({"adaptive_avgpool2d", "adaptive average pooling to output_size (1)", infer_adaptive, cost_pool,
           OpTraits::of(AutocastClass::follows_input)});
}

}  // namespace prenet
