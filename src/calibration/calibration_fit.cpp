#include "calibration/calibration_fit.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "core/error.hpp"

namespace prenet {

namespace {

// Parameters: g; d_f per family; m_p per matrix precision; c; o. The document's keys are sums of them: a family's
// key is g + d_f, a precision's m_p, communication's c, overhead's o.
struct Parameters {
    std::vector<std::string> families, precisions;  // the keys of each kind, in calibration_scale_keys() order
    Parameters() {
        for (const auto& key : calibration_scale_keys()) {
            if (key.rfind("matmul.", 0) == 0) precisions.push_back(key);
            else if (key != kCommunicationScale && key != kOverheadScale) families.push_back(key);
        }
    }
    size_t g() const { return 0; }
    size_t d(size_t f) const { return 1 + f; }
    size_t m(size_t p) const { return 1 + families.size() + p; }
    size_t c() const { return 1 + families.size() + precisions.size(); }
    size_t o() const { return c() + 1; }
    size_t size() const { return o() + 1; }
};

const Parameters& parameters() {
    static const Parameters p;
    return p;
}

size_t index_of(const std::vector<std::string>& keys, const std::string& key) {
    return size_t(std::find(keys.begin(), keys.end(), key) - keys.begin());
}

// A part of a row's prediction: its time and the parameters (and the document's keys) that scale it.
struct Term {
    double ms = 0;
    std::vector<size_t> parameters;
    std::vector<std::string> keys;
};

// A row as terms, and what no factor scales. The idle time is shared out over the kernels in proportion (the
// stages' compute it waits for scales as their kernels do); a family on the matrix units is split over the
// precisions in the shares of matmul_precision_ms.
std::vector<Term> terms(const CalibrationObservation& row, double* fixed_ms) {
    const Parameters& P = parameters();
    double kernels = 0, matmul = 0;
    for (const auto& [family, ms] : row.family_ms) kernels += ms;
    for (const auto& [precision, ms] : row.matmul_precision_ms) matmul += ms;
    double idle_share = kernels > 0 ? 1.0 + row.idle_ms / kernels : 1.0;
    std::vector<Term> out;
    for (const auto& [family, ms] : row.family_ms) {
        const std::string name = to_string(family);
        size_t f = index_of(P.families, name);
        if (uses_matrix_units(family) && matmul > 0) {
            for (const auto& [precision, share] : row.matmul_precision_ms) {
                const std::string key = matmul_precision_key(precision);
                out.push_back({ms * idle_share * share / matmul, {P.g(), P.d(f), P.m(index_of(P.precisions, key))},
                               {name, key}});
            }
        } else {
            out.push_back({ms * idle_share, {P.g(), P.d(f)}, {name}});
        }
    }
    out.push_back({row.communication_ms, {P.c()}, {kCommunicationScale}});
    out.push_back({row.overhead_ms, {P.o()}, {kOverheadScale}});
    *fixed_ms = row.fixed_ms + (kernels > 0 ? 0.0 : row.idle_ms);
    return out;
}

// The row's prediction at parameters p, and d(log prediction)/dp.
double predict(const std::vector<Term>& row, double fixed_ms, const Eigen::VectorXd& p, Eigen::VectorXd* gradient) {
    double total = fixed_ms;
    Eigen::VectorXd dp = Eigen::VectorXd::Zero(p.size());
    for (const auto& term : row) {
        double log_scale = 0;
        for (size_t i : term.parameters) log_scale += p[Eigen::Index(i)];
        double ms = term.ms * std::exp(log_scale);
        total += ms;
        for (size_t i : term.parameters) dp[Eigen::Index(i)] += ms;
    }
    if (gradient) *gradient = dp / total;
    return total;
}

}  // namespace

double CalibrationObservation::predicted_ms() const {
    double total = idle_ms + communication_ms + overhead_ms + fixed_ms;
    for (const auto& [family, ms] : family_ms) total += ms;
    return total;
}

double calibrated_ms(const CalibrationObservation& row, const DeviceCalibration& device) {
    double total = 0;
    for (const auto& term : terms(row, &total)) {
        double scale = 1;
        for (const auto& key : term.keys) scale *= device.scale(key);
        total += term.ms * scale;
    }
    return total;
}

CalibrationSummary summarise(const std::vector<double>& predicted, const std::vector<double>& measured) {
    CalibrationSummary s;
    std::vector<double> ape;
    for (size_t i = 0; i < predicted.size(); ++i) {
        ape.push_back(100.0 * std::abs(predicted[i] - measured[i]) / measured[i]);
        s.worst_off_by = std::max(s.worst_off_by, std::max(predicted[i] / measured[i], measured[i] / predicted[i]));
    }
    if (ape.empty()) return s;
    std::sort(ape.begin(), ape.end());
    size_t n = ape.size();
    s.median_ape_pct = n % 2 ? ape[n / 2] : 0.5 * (ape[n / 2 - 1] + ape[n / 2]);
    return s;
}

DeviceCalibration fit_calibration(const std::vector<CalibrationObservation>& rows, const CalibrationPrior& prior) {
    if (rows.empty()) throw Error("calibration: no measured rows to fit", ErrorCode::missing, "measurements");
    const Parameters& P = parameters();
    const Eigen::Index n = Eigen::Index(P.size());
    std::vector<std::vector<Term>> row_terms;
    std::vector<double> fixed(rows.size(), 0.0);
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i];
        if (!(row.measured_ms > 0) || !std::isfinite(row.measured_ms) || !(row.predicted_ms() > 0) ||
            !std::isfinite(row.predicted_ms()))
            throw Error("calibration: a row needs a positive measured and predicted time", ErrorCode::invalid_value,
                        "measurements");
        row_terms.push_back(terms(row, &fixed[i]));
    }
    // The prior's precision (1 / sd^2) per parameter.
    auto inverse_square = [](double sd) { return 1.0 / (sd * sd); };
    Eigen::VectorXd precision(n);
    precision[Eigen::Index(P.g())] = inverse_square(prior.device_sd);
    for (size_t f = 0; f < P.families.size(); ++f) precision[Eigen::Index(P.d(f))] = inverse_square(prior.family_sd);
    for (size_t p = 0; p < P.precisions.size(); ++p) precision[Eigen::Index(P.m(p))] = inverse_square(prior.precision_sd);
    precision[Eigen::Index(P.c())] = inverse_square(prior.communication_sd);
    precision[Eigen::Index(P.o())] = inverse_square(prior.overhead_sd);
    const double w = inverse_square(prior.residual_sd);

    auto objective = [&](const Eigen::VectorXd& p) {
        double sum = 0;
        for (size_t i = 0; i < rows.size(); ++i) {
            double r = std::log(predict(row_terms[i], fixed[i], p, nullptr) / rows[i].measured_ms);
            sum += w * r * r;
        }
        return sum + p.cwiseProduct(p).dot(precision);
    };
    // Gauss-Newton with step halving: a sum of squares in log space, smooth, started at the prior's centre.
    Eigen::VectorXd p = Eigen::VectorXd::Zero(n);
    Eigen::MatrixXd curvature;
    double current = objective(p);
    for (int iteration = 0; iteration < 50; ++iteration) {
        Eigen::MatrixXd h = precision.asDiagonal();
        Eigen::VectorXd g = precision.cwiseProduct(p);
        for (size_t i = 0; i < rows.size(); ++i) {
            Eigen::VectorXd grad;
            double r = std::log(predict(row_terms[i], fixed[i], p, &grad) / rows[i].measured_ms);
            h += w * grad * grad.transpose();
            g += w * r * grad;
        }
        curvature = h;
        Eigen::VectorXd step = h.ldlt().solve(-g);
        double scale = 1.0, next = current;
        Eigen::VectorXd candidate = p;
        for (int halving = 0; halving < 30; ++halving, scale *= 0.5) {
            candidate = p + scale * step;
            next = objective(candidate);
            if (next <= current) break;
        }
        if (!(next <= current)) break;
        bool converged = (candidate - p).cwiseAbs().maxCoeff() < 1e-10;
        p = candidate, current = next;
        if (converged) break;
    }
    Eigen::MatrixXd covariance = curvature.ldlt().solve(Eigen::MatrixXd::Identity(n, n));

    // The document's keys as sums of parameters (A), their logs A p and log-covariance A cov A^T.
    const auto& keys = calibration_scale_keys();
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(Eigen::Index(keys.size()), n);
    for (size_t k = 0; k < keys.size(); ++k) {
        Eigen::Index row = Eigen::Index(k);
        if (keys[k] == kCommunicationScale) a(row, Eigen::Index(P.c())) = 1;
        else if (keys[k] == kOverheadScale) a(row, Eigen::Index(P.o())) = 1;
        else if (keys[k].rfind("matmul.", 0) == 0) a(row, Eigen::Index(P.m(index_of(P.precisions, keys[k])))) = 1;
        else a(row, Eigen::Index(P.g())) = a(row, Eigen::Index(P.d(index_of(P.families, keys[k])))) = 1;
    }
    Eigen::VectorXd logs = a * p;
    Eigen::MatrixXd log_covariance = a * covariance * a.transpose();

    DeviceCalibration d;
    d.rows = std::int64_t(rows.size());
    d.residual_sd = prior.residual_sd;
    for (size_t k = 0; k < keys.size(); ++k) {
        d.scales[keys[k]] = std::exp(logs[Eigen::Index(k)]);
        std::vector<double> row;
        for (size_t j = 0; j < keys.size(); ++j) row.push_back(log_covariance(Eigen::Index(k), Eigen::Index(j)));
        d.log_covariance.push_back(std::move(row));
    }
    std::vector<double> measured, before, after;
    for (const auto& row : rows) {
        measured.push_back(row.measured_ms);
        before.push_back(row.predicted_ms());
        after.push_back(calibrated_ms(row, d));
    }
    d.before = summarise(before, measured);
    d.after = summarise(after, measured);
    return d;
}

}  // namespace prenet
