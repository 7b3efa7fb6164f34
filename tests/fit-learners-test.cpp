// The learners the fit uses (fit/learners.hpp): ridge and boosted trees on small synthetic data, and their
// round trip through the models document.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <random>

#include "core/error.hpp"
#include "fit/dataset.hpp"
#include "fit/fit_models.hpp"
#include "fit/learners.hpp"
#include "hardware/spec.hpp"
#include "predict/kernel_features.hpp"
#include "predict/learned.hpp"
#include "predict/op_rows.hpp"

using namespace prenet;

namespace {

Matrix random_rows(size_t n, size_t f, std::mt19937& rng) {
    std::uniform_real_distribution<double> u(-1, 1);
    Matrix x(n, std::vector<double>(f));
    for (auto& row : x)
        for (auto& v : row) v = u(rng);
    return x;
}

}  // namespace

TEST(Ridge, RecoversALinearFunction) {
    std::mt19937 rng(1);
    Matrix x = random_rows(500, 3, rng);
    std::vector<double> y;
    for (const auto& r : x) y.push_back(2 * r[0] - 3 * r[1] + 0.5);
    RidgeModel m = fit_ridge(x, y, 1e-6);
    EXPECT_NEAR(m.predict({0.3, -0.2, 0.9}), 2 * 0.3 + 3 * 0.2 + 0.5, 1e-3);
}

TEST(Gbt, LearnsAStepAndBeatsTheMean) {
    std::mt19937 rng(2);
    Matrix x = random_rows(2000, 2, rng);
    std::vector<double> y;
    for (const auto& r : x) y.push_back(r[0] > 0.2 ? 1.0 : -1.0);
    GbtParams p;
    p.trees = 30;
    TreeEnsemble m = fit_gbt(x, y, p);
    EXPECT_NEAR(m.predict({0.8, 0}), 1.0, 0.1);
    EXPECT_NEAR(m.predict({-0.5, 0}), -1.0, 0.1);
}

TEST(Regressors, RoundTripThroughJson) {
    std::mt19937 rng(3);
    Matrix x = random_rows(300, 4, rng);
    std::vector<double> y;
    for (const auto& r : x) y.push_back(std::sin(3 * r[0]) + r[2]);
    GbtParams p;
    p.trees = 10;
    TreeEnsemble g = fit_gbt(x, y, p);
    RidgeModel r = fit_ridge(x, y);
    auto g2 = regressor_from_json(g.to_json());
    auto r2 = regressor_from_json(r.to_json());
    // Leaf values are stored to six significant digits; thresholds and ridge weights exactly.
    for (const auto& row : random_rows(20, 4, rng)) {
        EXPECT_NEAR(g2->predict(row), g.predict(row), 1e-5 * (1 + std::abs(g.predict(row))));
        EXPECT_DOUBLE_EQ(r2->predict(row), r.predict(row));
    }
    EXPECT_EQ(regressor_from_json(g2->to_json())->to_json(), g2->to_json());
    // Packing the trees into one node array changes nothing but speed.
    TreeEnsemble packed = g;
    packed.pack();
    for (const auto& row : random_rows(20, 4, rng)) EXPECT_DOUBLE_EQ(packed.predict(row), g.predict(row));
}
