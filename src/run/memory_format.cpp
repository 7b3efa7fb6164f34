#include "run/memory_format.hpp"

namespace prenet {

bool runs_nhwc_tensor_core_convs(const HardwareSpec& hw, Precision precision) {
    if (precision == Precision::fp32 || precision == Precision::tf32 || hw.vendor != "NVIDIA") return false;
    // TF32 exists only on tensor cores (Ampere onwards); before it, tensor cores are what lift the fp16 peak
    // from packed half arithmetic's 2x the fp32 rate (P100) to 8x (V100, T4, Quadro RTX).
    return hw.has_peak("tf32") || hw.matmul_flops(precision) >= 4.0 * hw.vector_flops();
}

std::vector<Kernel> layout_transposes(const Layer& layer, const Kernel& conv) {
    bool layer_2d = layer.kind == "conv2d" || layer.kind == "conv_transpose2d";
    if (!layer_2d || conv.family != Family::conv || !conv.conv || layer.input.size() != 4) return {};
    const ConvShape& shape = *conv.conv;
    if (shape.groups > 1 && shape.groups == shape.c) return {};  // depthwise
    double input = double(elements(layer.input)), output = double(elements(layer.output));
    double weight = double(shape.k) * double(shape.c / shape.groups) * double(shape.r) * double(shape.s);
    // What the call reads, and what it writes, as activation-sized tensors (the weight or its gradient is the third).
    double read = 0, written = 0;
    switch (conv.phase) {
        case Phase::forward: read = input; written = output; break;
        case Phase::backward_input: read = output; written = input; break;
        case Phase::backward_weight: read = input + output; break;
        default: return {};
    }
    double eb = activation_bytes(conv.precision);
    auto transpose = [&](const std::string& op, double n) {
        return streaming_kernel(Family::elementwise, conv.phase, op, conv.precision, n, 0.0, 2.0 * n * eb);
    };
    std::vector<Kernel> out;
    bool writes_weight = conv.phase == Phase::backward_weight;
    out.push_back(transpose("nchw_to_nhwc", read + (writes_weight ? 0.0 : weight)));
    out.push_back(transpose("nhwc_to_nchw", written + (writes_weight ? weight : 0.0)));
    return out;
}

bool needs_layout_transposes(const ModelFeatures& features, const HardwareSpec& hw) {
    if (!features.has_conv) return false;  // (the step asks for every micro-batch it times)
    for (const auto& lf : features.layers)
        for (const auto& k : lf.cost.kernels)
            if (k.family == Family::conv && runs_nhwc_tensor_core_convs(hw, k.precision) &&
                !layout_transposes(lf.layer, k).empty())
                return true;
    return false;
}

ModelFeatures with_layout_transposes(const ModelFeatures& features, const HardwareSpec& hw) {
    ModelFeatures out = features;
    for (auto& lf : out.layers) {
        std::vector<Kernel> kernels;
        for (const auto& k : lf.cost.kernels) {
            if (k.family == Family::conv && runs_nhwc_tensor_core_convs(hw, k.precision))
                for (auto& t : layout_transposes(lf.layer, k)) kernels.push_back(std::move(t));
            kernels.push_back(k);
        }
        lf.cost.kernels = std::move(kernels);
    }
    return out;
}

}  // namespace prenet
