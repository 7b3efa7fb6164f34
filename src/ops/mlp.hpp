#pragma once
// Feed-forward block geometry, shared by the dense MLP and the experts of a mixture-of-experts layer.
#include <cstdint>
#include <string>

#include <vector>

#include "graph/model.hpp"
#include "ops/catalogue.hpp"
#include "ops/kernel.hpp"

namespace prenet {

struct MlpShape {
    std::int64_t hidden = 0, intermediate = 0;
    std::string activation = "gelu";
    bool gated = false, bias = true;
};

MlpShape read_mlp(const Layer& layer);
std::int64_t mlp_params(const MlpShape& s);
// Its gate (when gated), up and down projections, `count` copies of `rows` tokens each (experts).
std::vector<LinearModule> mlp_modules(const MlpShape& s, std::int64_t rows, std::int64_t count, bool reads_input);
// `batch` independent feed-forwards (experts) of `rows` tokens each.
void add_mlp_kernels(LayerCost& cost, const Layer& layer, Precision p, const MlpShape& s, std::int64_t batch,
                     std::int64_t rows, bool needs_input_grad, const std::string& prefix);

}  // namespace prenet
