#pragma once
// Small fixtures several test files share.
#include <cstdint>

#include "graph/builder.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"

namespace prenet::testing {

// A model that is nothing but its parameter count: for the per-parameter memory and optimizer formulas.
inline ModelFeatures params_only(std::int64_t params) {
    ModelFeatures f;
    f.params = params;
    return f;
}

// A small model: an input linear, a block of (linear, relu) repeated 3 times, a head and a loss.
inline Model small_model() {
    ModelBuilder b("small", {16, 128}, infer_shape);
    b.add("linear", "in", {{"out_features", 256}});
    b.begin_block("blocks", 3);
    b.add("linear", "fc", {{"out_features", 256}});
    b.add("activation", "act", {{"function", "relu"}});
    b.end_block();
    b.add("linear", "head", {{"out_features", 10}});
    b.add("cross_entropy", "loss");
    return b.finish("custom", 0);
}

}  // namespace prenet::testing
