// Convolutions (1-3 spatial dims, groups, depthwise, stride, padding, dilation) and 2-d transposed convolution.
#include "core/checked.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"
#include "ops/window.hpp"

namespace prenet {
namespace {

struct ConvGeometry {
    std::vector<std::int64_t> kernel, stride, padding, dilation;
    std::int64_t groups = 1;
};

ConvGeometry read_geometry(const Layer& layer, size_t rank) {
    ConvGeometry g;
    g.kernel = ops::ints_attr(layer, "kernel_size", rank, 0);
    for (auto k : g.kernel)
        if (k <= 0) ops::fail(layer, "field 'kernel_size' must be positive");
    g.stride = ops::ints_attr(layer, "stride", rank, 1);
    for (auto s : g.stride)
        if (s <= 0) ops::fail(layer, "field 'stride' must be positive");
    g.dilation = ops::ints_attr(layer, "dilation", rank, 1);
    for (auto d : g.dilation)
        if (d <= 0) ops::fail(layer, "field 'dilation' must be positive");
    if (layer.attrs.contains("padding") && layer.attrs["padding"] == "same") {
        for (size_t i = 0; i < rank; ++i) g.padding.push_back(g.dilation[i] * (g.kernel[i] - 1) / 2);
    } else {
        g.padding = ops::ints_attr(layer, "padding", rank, 0);
    }
    g.groups = ops::int_attr(layer, "groups", 1);
    if (g.groups <= 0) ops::fail(layer, "field 'groups' must be positive");
    return g;
}

size_t spatial_rank(const Layer& layer) {
    const std::string& k = layer.kind;
    return k == "conv1d" ? 1 : k == "conv3d" ? 3 : 2;
}

void check_groups(const Layer& layer, std::int64_t in_ch, std::int64_t out_ch, std::int64_t groups) {
    if (in_ch % groups || out_ch % groups)
        ops::fail(layer, "groups " + std::to_string(groups) + " must divide in channels " + std::to_string(in_ch) +
                             " and out channels " + std::to_string(out_ch));
}

void infer_conv(Layer& layer) {
    size_t rank = spatial_rank(layer);
    ops::require_rank(layer, rank + 2, rank + 2);
    std::int64_t out_ch = ops::int_attr(layer, "out_channels");
    ConvGeometry g = read_geometry(layer, rank);
    bool transposed = layer.kind == "conv_transpose2d";
    check_groups(layer, layer.input[1], out_ch, g.groups);
    Shape out = {layer.input[0], out_ch};
    auto output_padding = ops::ints_attr(layer, "output_padding", rank, 0);
    for (size_t i = 0; i < rank; ++i) {
        // Each factor is at most limits::dimension, but a product plus a product is past 2^63: checked.
        std::int64_t in = layer.input[2 + i], o;
        std::int64_t k = checked_add(checked_mul(g.dilation[i], g.kernel[i] - 1, "dilated kernel size"), 1,
                                     "dilated kernel size");
        if (transposed) {
            o = checked_add(checked_add(checked_mul(in - 1, g.stride[i], "output size"), -2 * g.padding[i], "output size"),
                            checked_add(k, output_padding[i], "output size"), "output size");
        } else {
            std::optional<std::int64_t> windows = ops::window_output(in, k, g.stride[i], 2 * g.padding[i], false);
            if (!windows)
                ops::fail(layer, "kernel " + std::to_string(k) + " is larger than the padded input " +
                                     to_string(layer.input));
            o = *windows;
        }
        if (o <= 0) ops::fail(layer, "output size is not positive for input " + to_string(layer.input));
        out.push_back(o);
    }
    ops::bool_attr(layer, "bias", true);
    layer.output = out;
}

void cost_conv(const Layer& layer, Precision p, LayerCost& cost) {
    size_t rank = spatial_rank(layer);
    ConvGeometry g = read_geometry(layer, rank);
    bool transposed = layer.kind == "conv_transpose2d";
    bool bias = ops::bool_attr(layer, "bias", true);
    std::int64_t in_ch = layer.input[1], out_ch = layer.output[1];
    std::int64_t kernel_volume = 1;
    for (auto k : g.kernel) kernel_volume = checked_mul(kernel_volume, k, "parameter count");
    // A transposed conv is the input-gradient of a conv: its MACs are counted per input position.
    const Shape& dense_side = transposed ? layer.input : layer.output;
    std::int64_t per_out = transposed ? out_ch / g.groups : in_ch / g.groups;
    std::int64_t channels = transposed ? in_ch : out_ch;
    double positions = double(elements(dense_side)) / double(dense_side[1]);  // batch x spatial
    double macs = positions * double(channels) * double(per_out) * double(kernel_volume);
    std::int64_t weights = checked_mul(checked_mul(in_ch, out_ch / g.groups, "parameter count"), kernel_volume,
                                       "parameter count");
    cost.params = checked_add(weights, bias ? out_ch : 0, "parameter count");
    cost.macs += macs;

    double eb_in = matmul_input_bytes(p), eb_out = activation_bytes(p);
    double in_elems = double(elements(layer.input)), out_elems = double(elements(layer.output));
    Kernel k;
    k.family = Family::conv;
    k.op = layer.kind;
    k.precision = p;
    k.flops = 2.0 * macs;
    ConvShape shape;
    shape.n = layer.input[0];
    shape.c = in_ch;
    shape.h = layer.input.size() > 2 ? layer.input[2] : 1;
    shape.w = layer.input.size() > 3 ? layer.input[3] : 1;
    shape.k = out_ch;
    shape.r = g.kernel[0];
    shape.s = rank > 1 ? g.kernel[1] : 1;
    shape.stride_h = g.stride[0];
    shape.pad_h = g.padding[0];
    shape.groups = g.groups;
    shape.stride_w = rank > 1 ? g.stride[1] : 1;
    shape.pad_w = rank > 1 ? g.padding[1] : 0;
    k.conv = shape;
    k.bytes = (in_elems + double(weights)) * eb_in + out_elems * eb_out;
    cost.forward_flops += k.flops;
    cost.forward_bytes_read += (in_elems + double(weights)) * eb_in;
    cost.forward_bytes_written += out_elems * eb_out;
    k.phase = Phase::forward;
    cost.kernels.push_back(k);
    // PyTorch adds a convolution's bias as a pass of its own over the output (cuDNN's convolution has none).
    if (bias) ops::add_vector(cost, layer, p, Family::elementwise, layer.kind + "_bias_add", out_elems, 1.0, 1.0, 1.0,
                              false);
    if (layer.needs_input_grad) {
        Kernel dx = k;
        dx.phase = Phase::backward_input;
        dx.op = layer.kind + "_grad_input";
        dx.bytes = (out_elems + double(weights)) * eb_in + in_elems * eb_out;
        cost.backward_input_flops += dx.flops;
        cost.kernels.push_back(dx);
    }
    Kernel dw = k;
    dw.phase = Phase::backward_weight;
    dw.op = layer.kind + "_grad_weight";
    dw.bytes = (out_elems + in_elems) * eb_in + double(weights) * 4.0;
    cost.backward_weight_flops += dw.flops;
    cost.kernels.push_back(dw);
    if (bias) ops::add_bias_grad(cost, p, layer.kind, out_elems / double(out_ch), double(out_ch));
    cost.saved_activation_bytes += in_elems * eb_in;
}

}  // namespace

void register_conv_ops(OpCatalogue& c) {
    const char* summary =
        "convolution: out_channels, kernel_size, stride (1), padding (0 | n | list | \"same\"), dilation (1), "
        "groups (1), bias (true)";
    const OpTraits traits = OpTraits::of(AutocastClass::half).saving_input();  // the weight gradient reads the input
    for (const char* kind : {"conv1d", "conv2d", "conv3d"}) c.add({kind, summary, infer_conv, cost_conv, traits});
    c.add({"conv_transpose2d",
           "transposed 2-d convolution: out_channels, kernel_size, stride, padding, output_padding, groups, bias",
           infer_conv, cost_conv, traits});
}

}  // namespace prenet
