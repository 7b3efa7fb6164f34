#include "run/checkpointing.hpp"

#include <algorithm>

#include "ops/catalogue.hpp"

namespace prenet {

const char* to_string(CheckpointKind kind) {
    switch (kind) {
        case CheckpointKind::none: return "none";
        case CheckpointKind::attention_core: return "attention_core";
        case CheckpointKind::op_level: return "op_level";
        case CheckpointKind::full: return "full";
        case CheckpointKind::offload: return "offload";
    }
    return "none";
}

// A layer that runs no backward (fine-tuning: nothing before it trains) is never recomputed.
bool is_checkpointed(const LayerFeatures& layer) { return !layer.block.empty() && layer.runs_backward; }

namespace {

// What an attention layer keeps when its core is recomputed: what its fused (flash) form keeps.
double attention_core_saved_bytes(const LayerFeatures& lf, Precision precision) {
    if (!is_attention(lf.layer.kind) || lf.layer.attrs.value("flash", false)) return lf.cost.saved_activation_bytes;
    Layer fused = lf.layer;
    fused.attrs["flash"] = true;
    return std::min(lf.cost.saved_activation_bytes, layer_cost(fused, precision).saved_activation_bytes);
}

// Per-op selective checkpointing keeps a forward kernel's output: a matmul's (torch.mm, the projections; not
// the attention core's batched products) or a fused attention kernel's.
bool keeps_output(const Kernel& k) {
    if (k.phase != Phase::forward) return false;
    if (k.attention) return true;
    return k.family == Family::gemm && !is_attention_core(k);
}

double output_bytes(const Kernel& k, Precision precision) {
    double elements = k.attention ? double(k.attention->batch) * double(k.attention->heads) *
                                        double(k.attention->q_len) * double(k.attention->v_dim)
                                  : double(k.batch) * double(k.m) * double(k.n);
    return elements * activation_bytes(precision);
}

// Calls f(first, last) for each run of consecutive layers that form one checkpointed block copy.
template <class F>
void for_each_block(const ModelFeatures& features, F f) {
    const auto& ls = features.layers;
    for (size_t i = 0; i < ls.size();) {
        size_t j = i + 1;
        if (is_checkpointed(ls[i]))
            while (j < ls.size() && ls[j].block_index == ls[i].block_index) ++j;
        if (is_checkpointed(ls[i])) f(i, j);
        i = j;
    }
}

}  // namespace

bool is_recomputed(const LayerFeatures& layer, const Kernel& kernel, CheckpointKind kind) {
    if (kernel.phase != Phase::forward) return false;
    switch (kind) {
        case CheckpointKind::none:
        case CheckpointKind::offload: return false;
        case CheckpointKind::attention_core: return is_attention(layer.layer.kind) && is_attention_core(kernel);
        case CheckpointKind::op_level: return is_checkpointed(layer) && !keeps_output(kernel);
        case CheckpointKind::full: return is_checkpointed(layer);
    }
    return false;
}

std::int64_t checkpoint_units(const ModelFeatures& features) {
    std::int64_t units = 0;
    for_each_block(features, [&](size_t first, size_t) { units += features.layers[first].repeat; });
    return units;
}

namespace {

// The unblocked layers' activations before the first named block and after the last.
void add_ends(ActivationMemory& m, const ModelFeatures& features) {
    const auto& ls = features.layers;
    size_t first = ls.size(), last = 0;
    for (size_t i = 0; i < ls.size(); ++i)
        if (!ls[i].block.empty()) first = std::min(first, i), last = i;
    for (size_t i = 0; i < ls.size(); ++i) {
        double bytes = double(ls[i].repeat) * ls[i].cost.saved_activation_bytes;
        if (i < first) m.leading += bytes;
        else if (i > last) m.trailing += bytes;
    }
}

}  // namespace

namespace {

// What a layer outside checkpoint units keeps (every layer under none and attention_core).
double layer_kept_bytes(const LayerFeatures& lf, Precision precision, CheckpointKind kind) {
    return kind == CheckpointKind::attention_core ? attention_core_saved_bytes(lf, precision)
                                                  : lf.cost.saved_activation_bytes;
}

bool keeps_block_inputs(CheckpointKind kind) {
    return kind == CheckpointKind::full || kind == CheckpointKind::op_level || kind == CheckpointKind::offload;
}

struct BlockKept {
    double inside = 0;  // the block copy's activations without checkpointing
    double kept = 0;    // what it keeps under the kind
};

// One checkpointed block copy, layers [first, last), under full, op_level or offload.
BlockKept block_kept(const ModelFeatures& features, size_t first, size_t last, Precision precision, CheckpointKind kind) {
    BlockKept b;
    const LayerFeatures& head = features.layers[first];
    if (kind != CheckpointKind::offload)
        b.kept = double(elements(head.layer.input)) * (head.input_fp32 ? 4.0 : activation_bytes(precision));
    for (size_t i = first; i < last; ++i) {
        b.inside += features.layers[i].cost.saved_activation_bytes;
        if (kind == CheckpointKind::op_level)
            for (const Kernel& k : features.layers[i].cost.kernels)
                if (keeps_output(k)) b.kept += output_bytes(k, precision);
    }
    // Keeping a block's matmul outputs never keeps more than the block without checkpointing.
    b.kept = std::min(b.kept, b.inside);
    return b;
}

}  // namespace

ActivationMemory activation_memory(const ModelFeatures& features, Precision precision, CheckpointKind kind) {
    ActivationMemory m;
    add_ends(m, features);
    if (kind == CheckpointKind::none) {
        m.saved = features.saved_activation_bytes;
        return m;
    }
    if (kind == CheckpointKind::attention_core) {
        for (const auto& lf : features.layers) m.saved += double(lf.repeat) * layer_kept_bytes(lf, precision, kind);
        return m;
    }
    for (const auto& lf : features.layers)
        if (!is_checkpointed(lf)) m.saved += double(lf.repeat) * layer_kept_bytes(lf, precision, kind);
    for_each_block(features, [&](size_t first, size_t last) {
        const LayerFeatures& head = features.layers[first];
        BlockKept b = block_kept(features, first, last, precision, kind);
        m.block_inputs += double(head.repeat) * b.kept;
        m.recompute_block = std::max(m.recompute_block, b.inside);
        m.checkpointed_blocks += head.repeat;
    });
    m.saved += m.block_inputs + m.recompute_block;
    return m;
}

std::vector<KeptStretch> kept_activations(const ModelFeatures& features, Precision precision, CheckpointKind kind) {
    std::vector<KeptStretch> out;
    const auto& ls = features.layers;
    for (size_t i = 0; i < ls.size();) {
        if (ls[i].block.empty()) {
            if (out.empty() || !out.back().name.empty()) out.push_back({});
            out.back().kept_per_copy += double(ls[i].repeat) * layer_kept_bytes(ls[i], precision, kind);
            ++i;
            continue;
        }
        // One block copy's layers share its index (and its repeat count).
        size_t j = i + 1;
        while (j < ls.size() && ls[j].block_index == ls[i].block_index) ++j;
        KeptStretch block{ls[i].block, 0, ls[i].repeat};
        if (keeps_block_inputs(kind) && is_checkpointed(ls[i])) block.kept_per_copy = block_kept(features, i, j, precision, kind).kept;
        else
            for (size_t k = i; k < j; ++k) block.kept_per_copy += layer_kept_bytes(ls[k], precision, kind);
        out.push_back(block);
        i = j;
    }
    return out;
}

}  // namespace prenet
