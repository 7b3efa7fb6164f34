#include "run/compile.hpp"

#include <algorithm>

namespace prenet {

bool is_fusable(const Kernel& k) {
    return (k.family == Family::elementwise || k.family == Family::norm) && !is_attention_core(k);
}

namespace {

struct KernelAt {
    size_t layer, kernel;
};

// One kernel for a chain: FLOPs summed, bytes less the intermediates each next kernel reads from registers.
Kernel fused(const std::vector<const Kernel*>& chain) {
    const Kernel* norm = nullptr;
    for (const Kernel* k : chain)
        if (k->family == Family::norm && !norm) norm = k;
    Kernel f = norm ? *norm : *chain.front();
    f.phase = chain.front()->phase;
    if (!norm) f.op = "fused_elementwise";
    f.flops = f.bytes = 0;
    double largest = 0;
    for (size_t i = 0; i < chain.size(); ++i) {
        const Kernel& k = *chain[i];
        f.flops += k.flops;
        f.bytes += k.bytes;
        largest = std::max(largest, k.bytes);
        if (i > 0) {
            const Kernel& producer = *chain[i - 1];
            f.bytes -= double(producer.elements) * activation_bytes(producer.precision);
        }
    }
    f.bytes = std::max(f.bytes, largest);
    return f;
}

// Fuses the chains of one pass through the layers in `order` (their indices in the pass's execution order).
void fuse_pass(std::vector<LayerFeatures>& layers, const std::vector<size_t>& order, bool backward,
               std::vector<std::vector<bool>>& removed) {
    std::vector<KernelAt> chain;
    auto flush = [&] {
        if (chain.size() >= 2) {
            std::vector<const Kernel*> kernels;
            for (const auto& at : chain) kernels.push_back(&layers[at.layer].cost.kernels[at.kernel]);
            Kernel f = fused(kernels);
            layers[chain.front().layer].cost.kernels[chain.front().kernel] = f;
            for (size_t i = 1; i < chain.size(); ++i) removed[chain[i].layer][chain[i].kernel] = true;
        }
        chain.clear();
    };
    for (size_t layer : order) {
        const auto& kernels = layers[layer].cost.kernels;
        for (size_t i = 0; i < kernels.size(); ++i) {
            const Kernel& k = kernels[i];
            bool in_pass = backward ? (k.phase == Phase::backward_input || k.phase == Phase::backward_weight)
                                    : k.phase == Phase::forward;
            if (!in_pass) continue;
            if (!is_fusable(k)) {
                flush();
                continue;
            }
            // Inductor fuses nodes over the same iteration space: a kernel over another tensor size (a weight's
            // autocast copy, rotary over the query and key heads) starts a chain of its own.
            if (!chain.empty() && layers[chain.back().layer].cost.kernels[chain.back().kernel].elements != k.elements)
                flush();
            chain.push_back({layer, i});
        }
    }
    flush();
}

}  // namespace

ModelFeatures fuse_memory_bound_kernels(const ModelFeatures& features) {
    ModelFeatures out = features;
    auto& ls = out.layers;
    std::vector<std::vector<bool>> removed(ls.size());
    for (size_t i = 0; i < ls.size(); ++i) removed[i].assign(ls[i].cost.kernels.size(), false);
    for (size_t i = 0; i < ls.size();) {
        // One compiled region: consecutive layers of one block copy that run the same passes.
        size_t j = i + 1;
        while (j < ls.size() && ls[j].block == ls[i].block && ls[j].repeat == ls[i].repeat &&
               ls[j].runs_backward == ls[i].runs_backward)
            ++j;
        std::vector<size_t> order;
        for (size_t k = i; k < j; ++k) order.push_back(k);
        fuse_pass(ls, order, false, removed);
        std::reverse(order.begin(), order.end());
        fuse_pass(ls, order, true, removed);
        i = j;
    }
    for (size_t i = 0; i < ls.size(); ++i) {
        auto& kernels = ls[i].cost.kernels;
        std::vector<Kernel> kept;
        for (size_t k = 0; k < kernels.size(); ++k)
            if (!removed[i][k]) kept.push_back(std::move(kernels[k]));
        kernels = std::move(kept);
    }
    return out;
}

}  // namespace prenet
