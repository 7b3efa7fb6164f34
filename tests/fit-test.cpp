// Fitting and loading the learned predictor, on small synthetic data (fast; the real fit is `prenet fit`).
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

TEST(Regressors, MalformedJsonIsAnError) {
    EXPECT_THROW(regressor_from_json({{"type", "forest"}}), Error);
    EXPECT_THROW(regressor_from_json({{"type", "ridge"}, {"mean", {1}}}), Error);
    nlohmann::json bad_tree = {{"type", "gbt"}, {"base", 0}, {"learning_rate", 0.1},
                               {"trees", {{{"feature", {0}}, {"threshold", {0}}, {"left", {0}}, {"right", {0}},
                                           {"value", {0}}}}}};
    EXPECT_THROW(regressor_from_json(bad_tree), Error);  // a split node pointing at itself would loop forever
}

TEST(LearnedPredictor, NeverBeatsTheRooflineBound) {
    // A model that claims every kernel runs 100x faster than the bound must still be clamped to the bound.
    auto doc = nlohmann::json::parse(R"({"families": {"gemm": {"floor_ms": 0, "features": ["log_flops"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": -2}}}})");
    LearnedPredictor p(doc);
    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");
    Kernel k = kernel_from_row("bmm", {{"b", 8}, {"m", 2048}, {"n", 2048}, {"k", 2048}}, Precision::fp32);
    EXPECT_GE(p.kernel_ms(k, hw), roofline_bound_ms(k, hw));
    EXPECT_NEAR(p.kernel_ms(k, hw), roofline_bound_ms(k, hw), 1e-12);
}

TEST(LearnedPredictor, AddsTheLatencyFloorAndTheSlowdown) {
    auto doc = nlohmann::json::parse(R"({"families": {"elementwise": {"floor_ms": 0.02, "features": ["log_flops"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0.30103}}}})");
    LearnedPredictor p(doc);
    const HardwareSpec& hw = find_hardware("t4");
    Kernel k = kernel_from_row("add", {{"b", 1024}, {"h", 1024}}, Precision::fp32);
    EXPECT_NEAR(p.kernel_ms(k, hw), (roofline_bound_ms(k, hw) + 0.02) * 2.0, 1e-6);
}

TEST(LearnedPredictor, RejectsUnknownFeatures) {
    auto doc = nlohmann::json::parse(R"({"families": {"gemm": {"features": ["log_moon_phase"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}}}})");
    EXPECT_THROW(LearnedPredictor{doc}, Error);
}

TEST(LearnedPredictor, RejectsUnknownFamilies) {
    auto doc = nlohmann::json::parse(R"({"families": {"gemmm": {"features": ["log_flops"],
        "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}}}})");
    EXPECT_THROW(LearnedPredictor{doc}, Error);
}

// The range a step carries comes from the predictor itself: the learned one weighs its families' validation
// errors by their share of the step, a shared view forwards that, and the roofline has none.
TEST(LearnedPredictor, ReportsItsUncertaintyThroughTheKernelPredictorInterface) {
    auto doc = nlohmann::json::parse(R"({"families": {
        "gemm": {"features": ["log_flops"], "validation": {"p90_ape": 0.2}, "devices": ["a100-sxm4-80gb"],
                 "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}},
        "elementwise": {"features": ["log_flops"], "validation": {"p90_ape": 0.6}, "devices": ["a100-sxm4-80gb"],
                 "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0}}}})");
    LearnedPredictor learned(doc);
    SharedPredictor shared(learned);
    RooflinePredictor roofline;
    const HardwareSpec& hw = find_hardware("a100-sxm4-80gb");  // the fitted device: no widening
    const std::map<Family, double> ms = {{Family::gemm, 3.0}, {Family::attention, 1.0}, {Family::gather, 4.0}};
    const KernelPredictor& as_learned = learned;
    std::optional<double> r = as_learned.relative_uncertainty(ms, hw);
    ASSERT_TRUE(r);
    // attention is timed by the gemm model, gather by the elementwise one.
    EXPECT_NEAR(*r, (4.0 * 0.2 + 4.0 * 0.6) / 8.0, 1e-12);
    EXPECT_EQ(shared.relative_uncertainty(ms, hw), r);
    EXPECT_FALSE(roofline.relative_uncertainty(ms, hw));
    EXPECT_FALSE(SharedPredictor(roofline).relative_uncertainty(ms, hw));
    // A device far outside the fitted ones widens the range.
    EXPECT_GT(*learned.relative_uncertainty(ms, find_hardware("t4")), *r);
}

TEST(KernelFeatures, AreFiniteForEveryCatalogueDevice) {
    Kernel k = kernel_from_row("conv", {{"b", 32}, {"in_channels", 64}, {"out_channels", 128}, {"kernel_size", 3},
                                        {"input_size", 56}, {"stride", 1}, {"padding", 1}},
                               Precision::bf16);
    for (const auto& hw : hardware_catalogue()) {
        auto x = kernel_features(k, hw);
        ASSERT_EQ(x.size(), kernel_feature_names().size());
        for (double v : x) EXPECT_TRUE(std::isfinite(v)) << hw.id;
    }
}

namespace {

double feature(const Kernel& k, const std::string& name) {
    const auto& names = kernel_feature_names();
    auto at = std::find(names.begin(), names.end(), name);
    if (at == names.end()) throw Error("no feature " + name);
    return kernel_features(k, find_hardware("v100-sxm2-16gb"))[size_t(at - names.begin())];
}

Kernel conv_row(std::int64_t in, std::int64_t out, std::int64_t kernel, Precision p) {
    return kernel_from_row("conv", {{"b", 32}, {"in_channels", in}, {"out_channels", out}, {"kernel_size", kernel},
                                    {"input_size", 56}, {"stride", 1}, {"padding", kernel / 2}},
                           p);
}

}  // namespace

// Half-precision tensor cores need channel counts / GEMM dims in multiples of 8; FP32 never uses them.
TEST(KernelFeatures, TensorCoreAlignmentAndWinograd) {
    EXPECT_EQ(feature(conv_row(64, 128, 3, Precision::fp16), "tensor_core_aligned"), 1.0);
    EXPECT_EQ(feature(conv_row(3, 64, 3, Precision::fp16), "tensor_core_aligned"), 0.0);
    EXPECT_EQ(feature(conv_row(64, 128, 3, Precision::tf32), "tensor_core_aligned"), 0.0);  // no TF32 data
    EXPECT_EQ(feature(conv_row(64, 128, 3, Precision::fp32), "tensor_core_aligned"), 0.0);
    Kernel gemm = kernel_from_row("linear", {{"b", 1}, {"m", 4096}, {"n", 4096}, {"k", 4096}}, Precision::bf16);
    Kernel odd = kernel_from_row("linear", {{"b", 1}, {"m", 4096}, {"n", 1000}, {"k", 4095}}, Precision::bf16);
    EXPECT_EQ(feature(gemm, "tensor_core_aligned"), 1.0);
    EXPECT_EQ(feature(odd, "tensor_core_aligned"), 0.0);
    EXPECT_EQ(feature(conv_row(64, 128, 3, Precision::fp32), "winograd"), 1.0);
    EXPECT_EQ(feature(conv_row(64, 128, 1, Precision::fp32), "winograd"), 0.0);
    EXPECT_EQ(feature(conv_row(64, 128, 3, Precision::fp16), "winograd"), 0.0);  // V100 tensor cores: implicit GEMM
}

// Batch norm's streaming passes are timed by the elementwise model; layer norm keeps the norm model.
TEST(KernelFeatures, BatchNormUsesTheElementwiseModel) {
    Kernel bn;
    bn.family = Family::norm;
    bn.op = "batchnorm_backward";
    Kernel ln = bn;
    ln.op = "layernorm";
    EXPECT_EQ(model_family(bn), Family::elementwise);
    EXPECT_EQ(model_family(ln), Family::norm);
    EXPECT_EQ(model_family(Family::norm), Family::norm);
    EXPECT_EQ(model_family(Family::attention), Family::gemm);
}

// A convolution over more images than the models saw is timed as passes over the largest measured batch,
// counted in waves of output tiles: a small-batch pass can leave units idle that the whole batch fills.
TEST(LearnedPredictor, ConvolutionsBeyondTheMeasuredBatchArePassesCountedInWaves) {
    auto models = [](double max_batch) {
        auto doc = nlohmann::json::parse(R"({"families": {"conv": {"floor_ms": 0.01, "features": ["log_flops"],
            "model": {"type": "ridge", "mean": [0], "scale": [1], "weights": [0], "bias": 0.3}}}})");
        doc["families"]["conv"]["max_batch"] = max_batch;
        return LearnedPredictor(doc);
    };
    const HardwareSpec& hw = find_hardware("v100-sxm2-16gb");  // 80 SMs
    // ResNet-50's last stage: 512 -> 512 channels, 3x3 on 7x7 images.
    auto conv = [](const std::string& op, std::int64_t batch) {
        return kernel_from_row(op, {{"n", batch}, {"c", 512}, {"h", 7}, {"w", 7}, {"k", 512}, {"filter_h", 3},
                                    {"filter_w", 3}, {"pad_h", 1}, {"pad_w", 1}},
                               Precision::fp16);
    };
    LearnedPredictor capped = models(64);
    // Batch 64: 3136 output rows = 25 tiles x 4 = 100 tiles, 2 waves; batch 256: 392 tiles, 5 waves, not 4 x 2.
    EXPECT_DOUBLE_EQ(output_tile_waves(conv("conv2d", 64), hw), 2);
    EXPECT_DOUBLE_EQ(output_tile_waves(conv("conv2d", 256), hw), 5);
    EXPECT_NEAR(capped.kernel_ms(conv("conv2d", 256), hw), 2.5 * capped.kernel_ms(conv("conv2d", 64), hw), 1e-12);
    EXPECT_NEAR(capped.kernel_ms(conv("conv2d_grad_input", 256), hw),
                2.5 * capped.kernel_ms(conv("conv2d_grad_input", 64), hw), 1e-12);
    // The weight gradient's output (512 x 4608) does not grow with the batch: plain passes.
    EXPECT_DOUBLE_EQ(output_tile_waves(conv("conv2d_grad_weight", 256), hw), 0);
    EXPECT_NEAR(capped.kernel_ms(conv("conv2d_grad_weight", 256), hw),
                4 * capped.kernel_ms(conv("conv2d_grad_weight", 64), hw), 1e-12);
    // A pass that already fills its waves scales by the passes (never by more).
    Kernel k32 = conv_row(64, 128, 3, Precision::bf16);  // batch 32 on 56x56: 784 tiles
    Kernel k128 = kernel_from_row("conv", {{"b", 128}, {"in_channels", 64}, {"out_channels", 128}, {"kernel_size", 3},
                                           {"input_size", 56}, {"stride", 1}, {"padding", 1}},
                                  Precision::bf16);
    LearnedPredictor capped32 = models(32), open32 = models(0);
    double ratio = capped32.kernel_ms(k128, hw) / capped32.kernel_ms(k32, hw);
    EXPECT_LE(ratio, 4.0 + 1e-12);
    EXPECT_GT(ratio, 3.5);
    EXPECT_DOUBLE_EQ(capped32.kernel_ms(k32, hw), open32.kernel_ms(k32, hw));  // within the range: unchanged
    EXPECT_GE(capped.kernel_ms(conv("conv2d", 256), hw), lower_bound_ms(conv("conv2d", 256), hw));
    EXPECT_THROW(models(-1), Error);
}

// The norm model has seen forward layer norms only; a backward pass over the same rows runs at the
// efficiency it gives that forward, applied to the backward's own bound.
TEST(LearnedPredictor, NormBackwardRunsAtTheForwardEfficiencyOfItsRows) {
    auto doc = nlohmann::json::parse(R"({"families": {"norm": {"floor_ms": 0.01, "features": ["log_flops"],
        "model": {"type": "ridge", "mean": [9], "scale": [1], "weights": [-0.2], "bias": 0.3}}}})");
    LearnedPredictor predictor(doc);
    const HardwareSpec& hw = find_hardware("v100-sxm2-16gb");
    Kernel forward = kernel_from_row("ln", {{"b", 8192}, {"h", 1024}}, Precision::fp32);
    Kernel grad_weight = forward;  // reads x and dy, 2 FLOPs an element: fewer FLOPs than any forward row
    grad_weight.phase = Phase::backward_weight;
    grad_weight.op = "layernorm_grad_weight";
    grad_weight.flops = 2.0 * 8192 * 1024;
    grad_weight.bytes = 2.0 * 8192 * 1024 * 4;
    double forward_slowdown = predictor.kernel_ms(forward, hw) / (lower_bound_ms(forward, hw) + 0.01);
    EXPECT_NEAR(predictor.kernel_ms(grad_weight, hw) / (lower_bound_ms(grad_weight, hw) + 0.01), forward_slowdown,
                1e-9);
    // Asked directly, the model would have seen 3.5x fewer FLOPs and called it slower.
    EXPECT_GT(std::pow(10.0, predictor.log_slowdown(grad_weight, hw)), forward_slowdown);
}

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
