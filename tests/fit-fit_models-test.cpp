// Fitting and validating (fit/fit_models.hpp): the report's held-out predictions are the shipped predictor's, each
// source timed with its floor, data files stamped with rows and a hash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>

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

// Convolutions measured on `device` at `batches`, with times a little above their bound.
std::vector<Sample> conv_samples(const std::string& device, const std::string& source,
                                 std::initializer_list<std::int64_t> batches) {
    std::vector<Sample> out;
    const HardwareSpec& hw = find_hardware(device);
    int i = 0;
    for (std::int64_t batch : batches)
        for (std::int64_t channels : {32, 64, 128})
            for (const char* op : {"conv2d", "conv2d_grad_input", "conv2d_grad_weight"}) {
                Kernel k = kernel_from_row(op, {{"n", batch}, {"c", channels}, {"h", 28}, {"w", 28}, {"k", 2 * channels},
                                                {"filter_h", 3}, {"filter_w", 3}, {"pad_h", 1}, {"pad_w", 1}},
                                           Precision::fp32);
                double slowdown = 1.5 + 0.5 * std::sin(double(++i));
                out.push_back({device, source, k, lower_bound_ms(k, hw) * slowdown + 0.02});
            }
    return out;
}

}  // namespace

// The accuracy report's held-out predictions are the shipped predictor's: LearnedPredictor built from the
// fold's models document, incl. its convolution passes beyond the largest training batch.
TEST(Fit, HeldOutPredictionsAreTheShippedPredictors) {
    std::vector<Sample> train = conv_samples("v100-sxm2-16gb", "deepbench", {4, 8, 16, 32});
    for (const auto& s : conv_samples("t4", "neusight", {8, 32})) train.push_back(s);
    std::vector<Sample> test = conv_samples("a100-pcie-80gb", "deepbench", {16, 64, 128});
    for (const auto& s : conv_samples("a100-pcie-80gb", "neusight", {128})) test.push_back(s);
    GbtParams gbt;
    gbt.trees = 8;
    gbt.min_leaf = 4;
    for (const char* learner : {"ridge", "gbt", "gbt-time"}) {
        HeldOutFold fold = held_out_fold(learner, train, test, gbt);
        ASSERT_EQ(fold.predicted_ms.size(), test.size()) << learner;
        const nlohmann::json& conv = fold.models.at("families").at("conv");
        EXPECT_EQ(conv.at("max_batch").get<double>(), 32.0);  // the training rows' largest batch
        nlohmann::json unsplit = fold.models;
        unsplit["families"]["conv"].erase("max_batch");
        bool passes_mattered = false;
        for (size_t i = 0; i < test.size(); ++i) {
            const HardwareSpec& hw = find_hardware(test[i].device);
            LearnedPredictor shipped(timed_as_measured_by(fold.models, test[i].source));
            EXPECT_DOUBLE_EQ(fold.predicted_ms[i], shipped.kernel_ms(test[i].kernel, hw)) << learner << " row " << i;
            LearnedPredictor whole(timed_as_measured_by(unsplit, test[i].source));
            if (whole.kernel_ms(test[i].kernel, hw) != fold.predicted_ms[i]) passes_mattered = true;
        }
        // Batches 64 and 128 lie beyond the training batches: a formula without the passes would differ.
        EXPECT_TRUE(passes_mattered) << learner;
    }
    EXPECT_THROW(held_out_fold("roofline", train, test, gbt), Error);
}

TEST(Fit, EachSourceIsTimedWithItsOwnFloor) {
    auto doc = nlohmann::json::parse(R"({"families": {"gemm": {"floor_ms": 0.005,
        "floor_ms_by_source": {"neusight": 0.03, "deepbench": 0.007}}, "conv": {"floor_ms": 0.005}}})");
    nlohmann::json neusight = timed_as_measured_by(doc, "neusight");
    EXPECT_EQ(neusight["families"]["gemm"]["floor_ms"].get<double>(), 0.03);
    EXPECT_EQ(neusight["families"]["conv"]["floor_ms"].get<double>(), 0.005);  // unknown there: unchanged
    EXPECT_EQ(timed_as_measured_by(doc, "xla")["families"]["gemm"]["floor_ms"].get<double>(), 0.005);
}

TEST(Fit, DataFilesAreStampedWithRowsAndAHashOfTheirBytes) {
    EXPECT_EQ(fnv1a64(""), 14695981039346656037ull);  // the FNV-1a 64 offset basis
    EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);    // the reference implementation's value
    EXPECT_NE(fnv1a64("ab"), fnv1a64("ba"));
    std::string path = ::testing::TempDir() + "prenet-stamp.csv";
    {
        std::ofstream out(path, std::ios::binary);
        out << "device,latency_ms\nt4,1\nt4,2\n";
    }
    DataFileStamp s = stamp_data_file(path);
    EXPECT_EQ(s.rows, 2u);
    EXPECT_EQ(s.fnv1a64, fnv1a64("device,latency_ms\nt4,1\nt4,2\n"));
    EXPECT_FALSE(source_commit().empty());
}

TEST(Fit, ShippedNumbersKeepNineSignificantDigits) {
    nlohmann::json models = {{"base", 0.43413773474878832},
                             {"trees", {{{"threshold", {1.2345678901234e-5, -98765.4321098765}}, {"leaf", 3}}}}};
    round_to_significant_digits(models, 9);
    EXPECT_EQ(models["base"].get<double>(), 0.434137735);
    EXPECT_EQ(models["trees"][0]["threshold"][0].get<double>(), 1.23456789e-5);
    EXPECT_EQ(models["trees"][0]["threshold"][1].get<double>(), -98765.4321);
    EXPECT_TRUE(models["trees"][0]["leaf"].is_number_integer());  // integers (feature indices, children) untouched
    EXPECT_EQ(models["trees"][0]["leaf"].get<int>(), 3);
}

TEST(Fit, KeepsTheLowestErrorUnlessARidgeIsWithinTheTolerance) {
    // A clearly better GBT is kept; of two GBTs the better one (same size, no reason to prefer either).
    EXPECT_EQ(keep_learner({{"ridge", 0.40}, {"ridge-all", 0.30}, {"gbt", 0.20}, {"gbt-all", 0.18}}), "gbt-all");
    // The best ridge within 15% of the best GBT is kept over it: 0.138 <= 0.125 x 1.15 = 0.14375.
    EXPECT_EQ(keep_learner({{"ridge", 0.50}, {"ridge-all", 0.138}, {"gbt", 0.125}, {"gbt-all", 0.13}}), "ridge-all");
    // Just past the tolerance, the GBT: 0.145 > 0.14375.
    EXPECT_EQ(keep_learner({{"ridge", 0.50}, {"ridge-all", 0.145}, {"gbt", 0.125}, {"gbt-all", 0.13}}), "gbt");
    // A ridge better outright is kept, and a learner without an error (NaN: no held-out device) is no candidate.
    EXPECT_EQ(keep_learner({{"ridge", 0.10}, {"ridge-all", NAN}, {"gbt", 0.12}}), "ridge");
    EXPECT_THROW(keep_learner({{"gbt", NAN}}), Error);
}

// Sections written by hand after the marker (issues' status notes) survive `prenet fit` rewriting the report;
// without the marker nothing is kept.
TEST(FitReport, KeepsWhatIsWrittenByHandAfterTheMarker) {
    std::string report = std::string("# Kernel accuracy\n\ngenerated\n\n") + kHandWrittenMarker + "\n\n## Notes\n\nby hand\n";
    std::string tail = hand_written_tail(report);
    EXPECT_EQ(tail.rfind(std::string("\n") + kHandWrittenMarker, 0), 0u);
    EXPECT_NE(tail.find("## Notes\n\nby hand\n"), std::string::npos);
    EXPECT_EQ(tail.find("generated"), std::string::npos);
    EXPECT_EQ(hand_written_tail("# Kernel accuracy\n\ngenerated\n"), "");
}
