#include "ops/kernel.hpp"

#include <functional>
#include <utility>

namespace prenet {

const char* to_string(Family f) {
    switch (f) {
        case Family::gemm: return "gemm";
        case Family::conv: return "conv";
        case Family::elementwise: return "elementwise";
        case Family::norm: return "norm";
        case Family::softmax: return "softmax";
        case Family::gather: return "gather";
        case Family::attention: return "attention";
        case Family::rnn: return "rnn";
        case Family::pool: return "pool";
        case Family::optimizer: return "optimizer";
        case Family::loss: return "loss";
    }
    return "elementwise";
}

std::optional<Family> family_from_string(const std::string& name) {
    for (Family f : {Family::gemm, Family::conv, Family::elementwise, Family::norm, Family::softmax, Family::gather,
                     Family::attention, Family::rnn, Family::pool, Family::optimizer, Family::loss})
        if (name == to_string(f)) return f;
    return std::nullopt;
}

Kernel streaming_kernel(Family family, Phase phase, std::string op, Precision precision, double elements,
                        double flops, double bytes) {
    Kernel k;
    k.family = family;
    k.phase = phase;
    k.op = std::move(op);
    k.precision = precision;
    k.elements = static_cast<std::int64_t>(elements);
    k.flops = flops;
    k.bytes = bytes;
    return k;
}

const char* to_string(Phase p) {
    switch (p) {
        case Phase::forward: return "forward";
        case Phase::backward_input: return "backward_input";
        case Phase::backward_weight: return "backward_weight";
        case Phase::optimizer: return "optimizer";
    }
    return "forward";
}

bool same_timing(const Kernel& a, const Kernel& b) {
    return a.family == b.family && a.phase == b.phase && a.precision == b.precision && a.flops == b.flops &&
           a.bytes == b.bytes && a.batch == b.batch && a.m == b.m && a.n == b.n && a.k == b.k &&
           a.elements == b.elements && a.conv == b.conv && a.attention == b.attention && a.op == b.op;
}

size_t timing_hash(const Kernel& k) {
    size_t h = std::hash<double>()(k.flops) ^ (std::hash<double>()(k.bytes) << 1);
    h ^= std::hash<std::int64_t>()(k.batch * 131 + k.m * 31 + k.n * 17 + k.k + k.elements) << 2;
    // A fused attention's shape: its FLOPs and bytes already tell most apart; causal and GQA settle the rest.
    if (k.attention) h ^= std::hash<std::int64_t>()(k.attention->kv_heads * 2 + (k.attention->causal ? 1 : 0)) << 4;
    return h ^ (size_t(k.phase) << 3) ^ (size_t(k.family) << 7);
}

}  // namespace prenet
