#include "run/optimizer.hpp"

#include "core/error.hpp"

namespace prenet {

const OptimizerDef& find_optimizer(const std::string& name) {
    // Traffic per parameter: SGD with momentum reads weight, gradient and momentum and writes weight and
    // momentum (5 x 4 bytes); Adam/AdamW read weight, gradient, m, v and write weight, m, v (7 x 4 bytes).
    static const std::vector<OptimizerDef> defs = {
        {"sgd", 4.0, 20.0, 3.0},
        {"adam", 8.0, 28.0, 12.0},
        {"adamw", 8.0, 28.0, 13.0},
    };
    for (const auto& d : defs)
        if (d.name == name) return d;
    throw Error("unknown optimizer '" + name + "' (expected sgd, adam or adamw)");
}

std::vector<Kernel> optimizer_kernels(const OptimizerDef& opt, std::int64_t params, Precision precision) {
    Kernel k;
    k.family = Family::optimizer;
    k.phase = Phase::optimizer;
    k.op = opt.name + "_step";
    k.precision = Precision::fp32;  // master weights and states stay fp32 in every mode
    k.elements = params;
    k.flops = opt.flops_per_param * double(params);
    // Mixed precision reads half-precision gradients and writes a half-precision weight copy: the same
    // total as fp32 gradients read, so the traffic per parameter does not change with precision.
    (void)precision;
    k.bytes = opt.bytes_per_param * double(params);
    return {k};
}

}  // namespace prenet
