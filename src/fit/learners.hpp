#pragma once
// Fitting the regressors of predict/regressor.hpp (native only: the page never fits).
#include <vector>

#include "predict/regressor.hpp"

namespace prenet {

using Matrix = std::vector<std::vector<double>>;  // rows of features

RidgeModel fit_ridge(const Matrix& x, const std::vector<double>& y, double lambda = 1.0);

struct GbtParams {
    int trees = 150;
    int depth = 6;
    double learning_rate = 0.1;
    int min_leaf = 20;
    int bins = 64;
    double l2 = 1.0;
};
TreeEnsemble fit_gbt(const Matrix& x, const std::vector<double>& y, const GbtParams& params = {});

}  // namespace prenet
