#include "run/checkpointing.hpp"

#include <algorithm>

#include "ops/catalogue.hpp"

namespace prenet {

// A layer that runs no backward (fine-tuning: nothing before it trains) is never recomputed.
bool is_checkpointed(const LayerFeatures& layer) { return !layer.block.empty() && layer.runs_backward; }

namespace {

// What an attention layer keeps when its core is recomputed: what its fused (flash) form keeps.
double selective_saved_bytes(const LayerFeatures& lf, Precision precision) {
    if (!is_attention(lf.layer.kind) || lf.layer.attrs.value("flash", false)) return lf.cost.saved_activation_bytes;
    Layer fused = lf.layer;
    fused.attrs["flash"] = true;
    return std::min(lf.cost.saved_activation_bytes, layer_cost(fused, precision).saved_activation_bytes);
}

}  // namespace

bool is_recomputed(const LayerFeatures& layer, const Kernel& kernel, bool checkpointing, bool selective) {
    if (kernel.phase != Phase::forward) return false;
    if (checkpointing) return is_checkpointed(layer);
    return selective && is_attention(layer.layer.kind) && is_attention_core(kernel);
}

namespace {

// Calls f(first, last) for each run of consecutive layers that form one checkpointed block.
template <class F>
void for_each_block(const ModelFeatures& features, F f) {
    const auto& ls = features.layers;
    for (size_t i = 0; i < ls.size();) {
        size_t j = i + 1;
        if (is_checkpointed(ls[i]))
            while (j < ls.size() && ls[j].block == ls[i].block && ls[j].repeat == ls[i].repeat) ++j;
        if (is_checkpointed(ls[i])) f(i, j);
        i = j;
    }
}

}  // namespace

std::int64_t checkpoint_units(const ModelFeatures& features) {
    std::int64_t units = 0;
    for_each_block(features, [&](size_t first, size_t) { units += features.layers[first].repeat; });
    return units;
}

ActivationMemory activation_memory(const ModelFeatures& features, Precision precision, bool checkpointing,
                                   bool selective) {
    ActivationMemory m;
    if (!checkpointing && selective) {
        for (const auto& lf : features.layers) m.saved += double(lf.repeat) * selective_saved_bytes(lf, precision);
        return m;
    }
    if (!checkpointing) {
        m.saved = features.saved_activation_bytes;
        return m;
    }
    for (const auto& lf : features.layers)
        if (!is_checkpointed(lf)) m.saved += double(lf.repeat) * lf.cost.saved_activation_bytes;
    for_each_block(features, [&](size_t first, size_t last) {
        const LayerFeatures& head = features.layers[first];
        double input =
            double(elements(head.layer.input)) * (head.input_fp32 ? 4.0 : activation_bytes(precision));
        double inside = 0;
        for (size_t i = first; i < last; ++i) inside += features.layers[i].cost.saved_activation_bytes;
        m.block_inputs += double(head.repeat) * input;
        m.recompute_block = std::max(m.recompute_block, inside);
        m.checkpointed_blocks += head.repeat;
    });
    m.saved += m.block_inputs + m.recompute_block;
    return m;
}

}  // namespace prenet
