#pragma once
// Small fixtures several test files share.
#include <cstdint>

#include "ops/features.hpp"

namespace prenet::testing {

// A model that is nothing but its parameter count: for the per-parameter memory and optimizer formulas.
inline ModelFeatures params_only(std::int64_t params) {
    ModelFeatures f;
    f.params = params;
    return f;
}

}  // namespace prenet::testing
