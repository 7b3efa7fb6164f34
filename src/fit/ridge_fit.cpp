#include <Eigen/Dense>
#include <cmath>

#include "core/error.hpp"
#include "fit/learners.hpp"

namespace prenet {

RidgeModel fit_ridge(const Matrix& x, const std::vector<double>& y, double lambda) {
    if (x.empty() || x.size() != y.size()) throw Error("ridge: need as many targets as rows, and at least one");
    const size_t n = x.size(), f = x[0].size();
    RidgeModel m;
    m.mean.assign(f, 0);
    m.scale.assign(f, 0);
    for (const auto& row : x)
        for (size_t j = 0; j < f; ++j) m.mean[j] += row[j] / double(n);
    for (const auto& row : x)
        for (size_t j = 0; j < f; ++j) m.scale[j] += (row[j] - m.mean[j]) * (row[j] - m.mean[j]) / double(n);
    for (auto& s : m.scale) s = s > 1e-12 ? std::sqrt(s) : 1.0;  // constant features get weight ~0
    Eigen::MatrixXd z(n, f);
    Eigen::VectorXd t(n);
    double y_mean = 0;
    for (double v : y) y_mean += v / double(n);
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < f; ++j) z(i, j) = (x[i][j] - m.mean[j]) / m.scale[j];
        t(i) = y[i] - y_mean;
    }
    Eigen::MatrixXd a = z.transpose() * z + lambda * Eigen::MatrixXd::Identity(f, f);
    Eigen::VectorXd w = a.ldlt().solve(z.transpose() * t);
    m.weights.assign(w.data(), w.data() + f);
    m.bias = y_mean;
    return m;
}

}  // namespace prenet
