// Regressors read from a models document (predict/regressor.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "predict/kernel_features.hpp"
#include "predict/learned.hpp"
#include "predict/op_rows.hpp"

using namespace prenet;

TEST(Regressors, MalformedJsonIsAnError) {
    EXPECT_THROW(regressor_from_json({{"type", "forest"}}), Error);
    EXPECT_THROW(regressor_from_json({{"type", "ridge"}, {"mean", {1}}}), Error);
    nlohmann::json bad_tree = {{"type", "gbt"}, {"base", 0}, {"learning_rate", 0.1},
                               {"trees", {{{"feature", {0}}, {"threshold", {0}}, {"left", {0}}, {"right", {0}},
                                           {"value", {0}}}}}};
    EXPECT_THROW(regressor_from_json(bad_tree), Error);  // a split node pointing at itself would loop forever
}
