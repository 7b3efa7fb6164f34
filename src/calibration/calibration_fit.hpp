#pragma once
// Fitting a device's calibration (calibration/calibration.hpp) to measured rows, shrunk toward the uncalibrated
// model (docs/calibration.md "The fit"). Each row's prediction is split into the parts the factors scale:
//   predicted = sum over families f (and, on the matrix units, precisions p) of  e^(g + d_f + m_p) t_fp
//               x (1 + t_idle / t_kernels)  +  e^c t_communication  +  e^o t_overhead  +  t_fixed,
// g a device-wide factor (its clock, its memory system: what every kernel shares), d_f a family's own, m_p a matrix
// precision's own, c and o the communication's and the overhead's. The fit minimises
//   sum over rows (log predicted - log measured)^2 / residual_sd^2  +  sum over parameters p^2 / prior_sd(p)^2,
// a Gaussian prior on every log-factor (maximum a posteriori, Gauss-Newton), so that one row mostly moves g, a few
// rows of different shapes separate the families, and thirty cannot push a factor the rows say little about. The
// inverse of the objective's curvature at the optimum is the factors' covariance.
#include <map>
#include <vector>

#include "calibration/calibration.hpp"

namespace prenet {

// One measured row, its prediction split into what each factor scales.
struct CalibrationObservation {
    std::map<Family, double> family_ms;  // kernel time by family
    // The matrix-unit kernels' time by precision (its sum is that of the matrix families): a family's time at
    // each precision is taken in these shares.
    std::map<Precision, double> matmul_precision_ms;
    double idle_ms = 0;                  // a pipeline's bubble: compute the stages wait for, scaled as the kernels
    double communication_ms = 0;         // exposed communication
    double overhead_ms = 0;              // the framework's overhead
    double fixed_ms = 0;                 // what no factor scales (an input stall)
    double measured_ms = 0;
    double predicted_ms() const;         // uncalibrated: the sum of the parts
};

// The prior's spreads, as standard deviations of natural-log factors, and a row's own spread.
struct CalibrationPrior {
    // The learned models' error on an unseen device is ~15-30 % (docs/accuracy.md): g's prior allows that easily.
    double device_sd = 0.35;
    // A family on its own, beyond the device-wide factor.
    double family_sd = 0.2;
    // A matrix precision on its own (TF32 against FP16 tensor cores).
    double precision_sd = 0.2;
    double communication_sd = 0.5;
    double overhead_sd = 0.7;
    // log(measured / predicted) of one row about the fitted factors: run-to-run noise and what no factor models.
    double residual_sd = 0.05;
};

// The device's factors and their covariance; rows, residual_sd and the before/after summaries filled in.
// Throws Error on no rows or a row without a positive measured and predicted time.
DeviceCalibration fit_calibration(const std::vector<CalibrationObservation>& rows,
                                  const CalibrationPrior& prior = CalibrationPrior{});

// A row's prediction with the factors applied to its parts (the fit's own arithmetic).
double calibrated_ms(const CalibrationObservation& row, const DeviceCalibration& device);

// Median APE and worst ratio of predictions against measurements (same length, positive).
CalibrationSummary summarise(const std::vector<double>& predicted_ms, const std::vector<double>& measured_ms);

}  // namespace prenet
