// calibration/calibration_fit.hpp: the shrinkage fit finds known factors from synthetic rows, moves little on
// weak evidence, and narrows the range as rows are added.
#include "calibration/calibration_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"

namespace prenet {
namespace {

// A row whose parts are given, measured as if the device ran each part `truth` times the prediction.
CalibrationObservation row(double gemm, double attention, double elementwise, double overhead,
                           const std::map<std::string, double>& truth) {
    CalibrationObservation o;
    o.family_ms = {{Family::gemm, gemm}, {Family::attention, attention}, {Family::elementwise, elementwise}};
    o.overhead_ms = overhead;
    auto t = [&](const char* k) { return truth.count(k) ? truth.at(k) : 1.0; };
    o.measured_ms = gemm * t("gemm") + attention * t("attention") + elementwise * t("elementwise") +
                    overhead * t("overhead");
    return o;
}

TEST(CalibrationFit, OneRowMovesTheDeviceNearlyAllTheWay) {
    // A device 1.3x slower than predicted on everything: one row says so.
    std::map<std::string, double> truth = {{"gemm", 1.3}, {"attention", 1.3}, {"elementwise", 1.3}, {"overhead", 1.3}};
    DeviceCalibration d = fit_calibration({row(60, 20, 20, 0, truth)});
    EXPECT_EQ(d.rows, 1);
    EXPECT_NEAR(calibrated_ms(row(60, 20, 20, 0, truth), d), 130.0, 130.0 * 0.02);
    // A family the row does not hold moves with the device-wide factor only.
    EXPECT_GT(d.scale("conv"), 1.2);
    EXPECT_LT(d.scale("conv"), 1.31);
    EXPECT_DOUBLE_EQ(d.scale(kCommunicationScale), 1.0);  // no communication in the row: unmoved
}

TEST(CalibrationFit, RowsOfDifferentShapesSeparateTheFamilies) {
    // GEMMs 1.2x slower, attention 0.8x (faster), element-wise 1.5x: rows with different mixes tell them apart.
    std::map<std::string, double> truth = {{"gemm", 1.2}, {"attention", 0.8}, {"elementwise", 1.5}};
    std::vector<CalibrationObservation> rows = {row(90, 5, 5, 0, truth), row(10, 85, 5, 0, truth),
                                                row(10, 5, 85, 0, truth), row(40, 40, 20, 0, truth),
                                                row(30, 30, 40, 0, truth), row(70, 20, 10, 0, truth)};
    // Noise-free rows: a prior that says so lets the rows speak.
    CalibrationPrior exact;
    exact.residual_sd = 0.01;
    DeviceCalibration d = fit_calibration(rows, exact);
    EXPECT_NEAR(d.scale("gemm"), 1.2, 0.05);
    EXPECT_NEAR(d.scale("attention"), 0.8, 0.05);
    EXPECT_NEAR(d.scale("elementwise"), 1.5, 0.08);
    ASSERT_TRUE(d.after.has_value());
    EXPECT_LT(d.after->median_ape_pct, 3.0);
    EXPECT_GT(d.before->median_ape_pct, 10.0);
}

TEST(CalibrationFit, ThirtyNoisyRowsDoNotOverfitAFamilyTheyBarelyHold) {
    // Every row is 90 % GEMM and 1.1x slow, with +-3 % noise; the softmax's 0.1 ms says almost nothing about it.
    std::vector<CalibrationObservation> rows;
    for (int i = 0; i < 30; ++i) {
        CalibrationObservation o;
        o.family_ms = {{Family::gemm, 90.0 + i}, {Family::softmax, 0.1}};
        o.measured_ms = 1.1 * (90.1 + i) * (1.0 + 0.03 * std::sin(7.0 * i));
        rows.push_back(o);
    }
    DeviceCalibration d = fit_calibration(rows);
    EXPECT_NEAR(d.scale("gemm"), 1.1, 0.02);
    // The softmax follows the device, not the noise: within its prior's reach of the GEMMs' factor.
    EXPECT_NEAR(d.scale("softmax"), d.scale("gemm"), 0.1);
}

TEST(CalibrationFit, TheRangeNarrowsWithTheEvidence) {
    std::map<std::string, double> truth = {{"gemm", 1.1}, {"attention", 1.1}, {"elementwise", 1.1}};
    std::map<std::string, double> step = {{"gemm", 60}, {"attention", 30}, {"elementwise", 10}};
    std::vector<CalibrationObservation> rows;
    double last = 1e9;
    for (int n : {1, 3, 10}) {
        while (int(rows.size()) < n) rows.push_back(row(50 + double(rows.size()), 30, 20, 0, truth));
        double width = calibrated_relative_uncertainty(fit_calibration(rows), step);
        EXPECT_LT(width, last) << n << " rows";
        last = width;
    }
    // Never narrower than a row's own spread.
    EXPECT_GT(last, std::expm1(1.6449 * CalibrationPrior{}.residual_sd) * 0.999);
}

TEST(CalibrationFit, OverheadAndCommunicationHaveTheirOwnFactors) {
    std::vector<CalibrationObservation> rows;
    for (int i = 0; i < 6; ++i) {
        CalibrationObservation o;
        o.family_ms = {{Family::gemm, 50.0 + 20 * i}};
        o.communication_ms = 40.0 - 5 * i;
        o.overhead_ms = 10.0 + 3 * (i % 3);
        o.measured_ms = o.family_ms[Family::gemm] + 2.0 * o.communication_ms + 0.5 * o.overhead_ms;
        rows.push_back(o);
    }
    CalibrationPrior exact;
    exact.residual_sd = 0.01;
    DeviceCalibration d = fit_calibration(rows, exact);
    EXPECT_NEAR(d.scale(kCommunicationScale), 2.0, 0.15);
    EXPECT_NEAR(d.scale("gemm"), 1.0, 0.08);
}

TEST(CalibrationFit, RefusesNoRowsAndTimesThatAreNotPositive) {
    EXPECT_THROW(fit_calibration({}), Error);
    CalibrationObservation zero;
    zero.family_ms = {{Family::gemm, 10}};
    EXPECT_THROW(fit_calibration({zero}), Error);  // measured 0
}

TEST(CalibrationFit, SummaryIsTheMedianAndTheWorstRatio) {
    CalibrationSummary s = summarise({110, 50, 100}, {100, 100, 100});
    EXPECT_DOUBLE_EQ(s.median_ape_pct, 10.0);
    EXPECT_DOUBLE_EQ(s.worst_off_by, 2.0);
}

}  // namespace
}  // namespace prenet
