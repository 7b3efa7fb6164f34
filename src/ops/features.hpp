#pragma once
// Whole-model computational features: per layer (cost of one execution, times its block's repeat count)
// and in total. These are what `prenet features` prints and what the predictor consumes.
#include <vector>

#include "graph/model.hpp"
#include "ops/kernel.hpp"

namespace prenet {

struct LayerFeatures {
    Layer layer;  // a copy: features outlive the model they were computed from
    std::string block;
    std::int64_t repeat = 1;
    LayerCost cost;  // of one execution
};

struct ModelFeatures {
    std::int64_t params = 0;
    double macs = 0, forward_flops = 0, backward_input_flops = 0, backward_weight_flops = 0;
    double forward_bytes = 0, saved_activation_bytes = 0;
    std::vector<LayerFeatures> layers;
    double backward_flops() const { return backward_input_flops + backward_weight_flops; }
};

ModelFeatures compute_features(const Model& model, Precision precision);
json to_json(const ModelFeatures& features);

}  // namespace prenet
