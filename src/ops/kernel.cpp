#include "ops/kernel.hpp"

#include <cstdint>
#include <cstring>

#include "core/error.hpp"
#include "core/limits.hpp"

#include <cstdio>
#include <functional>
#include <string>
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

namespace {
std::string format_g(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", x);
    return text;
}
}  // namespace

std::int64_t element_count(double elements, const std::string& op) {
    if (!(elements >= 0 && elements <= double(limits::tensor_elements)))
        throw Error("kernel '" + op + "' touches " + format_g(elements) + " elements, over the limit of " +
                    std::to_string(limits::tensor_elements) + " (2^53)");
    return static_cast<std::int64_t>(elements);
}

Kernel streaming_kernel(Family family, Phase phase, std::string op, Precision precision, double elements,
                        double flops, double bytes) {
    Kernel k;
    k.family = family;
    k.phase = phase;
    k.op = std::move(op);
    k.precision = precision;
    k.elements = element_count(elements, k.op);
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
    // The numbers' bits mixed (MurmurHash3's finaliser) rather than each hashed through std::hash<double>: the plan
    // search looks up every kernel of every stage it times. In unsigned arithmetic, which wraps (a batch of
    // batch x heads times 131 can pass 2^63).
    auto mix = [](std::uint64_t x) {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        return x;
    };
    auto bits = [](double v) {
        std::uint64_t b;
        std::memcpy(&b, &v, sizeof b);
        return b;
    };
    auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    std::uint64_t h = mix(bits(k.flops)) ^ (mix(bits(k.bytes)) << 1);
    h ^= mix(u(k.batch) * 131 + u(k.m) * 31 + u(k.n) * 17 + u(k.k) + u(k.elements)) << 2;
    // A fused attention's shape: its FLOPs and bytes already tell most apart; causal and GQA settle the rest.
    if (k.attention)
        h ^= mix((u(k.attention->kv_heads) * 2 + (k.attention->causal ? 1 : 0)) * 4 + u(k.attention->generation)) << 4;
    // The op's name too: kernels equal in every number but their op (an imported graph's thousands of distinct
    // unknown ops, each costed memory-bound over one shape) would otherwise share one bucket, and each lookup
    // would compare against all of them (40,000 op types took minutes).
    h ^= std::hash<std::string>()(k.op) << 5;
    return size_t(h ^ (std::uint64_t(k.phase) << 3) ^ (std::uint64_t(k.family) << 7));
}

}  // namespace prenet
