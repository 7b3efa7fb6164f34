// The kernel models compiled into the binary (predict/embedded_models.hpp, written by cmake/embed_kernel_models.py
// from models/kernels.json): the same trees as the JSON gives, bit for bit, and so the same predictions.
#include <gtest/gtest.h>

#include "test-helpers.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "importers/zoo.hpp"
#include "ops/features.hpp"
#include "predict/embedded_models.hpp"
#include "predict/learned.hpp"
#include "run/optimizer.hpp"
#include "run/step.hpp"

using namespace prenet;
using nlohmann::json;

namespace {
std::uint64_t bits(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}
}  // namespace

TEST(EmbeddedKernelModels, AreTheTreesOfModelsKernelsJsonBitForBit) {
    const EmbeddedKernelModels* data = embedded_kernel_model_data();
    if (!data) GTEST_SKIP() << "no fitted models built in";
    json file = prenet::testing::source_json("models/kernels.json");
    auto trees = embedded_trees(*data);
    json without_trees = file;
    std::size_t gbt_families = 0, nodes = 0;
    for (auto& [family, entry] : file["families"].items()) {
        const json& model = entry["model"];
        if (model["type"] != "gbt") continue;
        ++gbt_families;
        without_trees["families"][family]["model"].erase("trees");
        auto regressor = regressor_from_json(model);
        const auto& expected = dynamic_cast<const TreeEnsemble&>(*regressor).trees;
        ASSERT_TRUE(trees.count(family)) << family;
        const auto& got = trees.at(family);
        ASSERT_EQ(got.size(), expected.size()) << family;
        for (std::size_t t = 0; t < got.size(); ++t) {
            const auto &a = got[t], &b = expected[t];
            ASSERT_EQ(a.feature, b.feature) << family << " tree " << t;
            for (std::size_t i = 0; i < a.feature.size(); ++i, ++nodes) {
                SCOPED_TRACE(family + " tree " + std::to_string(t) + " node " + std::to_string(i));
                if (a.feature[i] >= 0) {
                    EXPECT_EQ(a.left[i], b.left[i]);
                    EXPECT_EQ(a.right[i], b.right[i]);
                    EXPECT_EQ(bits(a.threshold[i]), bits(b.threshold[i]));
                } else {
                    EXPECT_EQ(bits(a.value[i]), bits(b.value[i]));
                }
            }
        }
    }
    EXPECT_EQ(trees.size(), gbt_families);
    EXPECT_EQ(nodes, data->node_count);
    // Everything but the trees stays JSON, unchanged.
    EXPECT_EQ(json::parse(data->document), without_trees);
}

TEST(EmbeddedKernelModels, PredictAsTheJsonDocumentDoes) {
    const LearnedPredictor* embedded = embedded_learned_predictor();
    if (!embedded) GTEST_SKIP() << "no fitted models built in";
    LearnedPredictor from_json(prenet::testing::source_json("models/kernels.json"));
    for (const char* id : {"gpt2", "resnet50", "llama2-7b"}) {
        Model m = build_zoo_model(id, {2, 512, 0});
        for (Precision precision : {Precision::fp32, Precision::bf16}) {
            ModelFeatures f = compute_features(m, precision);
            for (const auto& hw : hardware_catalogue()) {
                double a = predict_step(f, hw, *embedded, precision, find_optimizer("adamw")).total_ms();
                double b = predict_step(f, hw, from_json, precision, find_optimizer("adamw")).total_ms();
                EXPECT_EQ(bits(a), bits(b)) << id << " on " << hw.id;
            }
        }
    }
    // The document rebuilt for tests and benchmarks predicts the same too.
    LearnedPredictor rebuilt(*embedded_kernel_models());
    Model m = build_zoo_model("gpt2", {2, 512, 0});
    ModelFeatures f = compute_features(m, Precision::bf16);
    const HardwareSpec& hw = find_hardware("h100-sxm5-80gb");
    EXPECT_EQ(bits(predict_step(f, hw, rebuilt, Precision::bf16, find_optimizer("adamw")).total_ms()),
              bits(predict_step(f, hw, *embedded, Precision::bf16, find_optimizer("adamw")).total_ms()));
}

// A number mantissa x 10^exponent would not give exactly is stored as the double itself; inconsistent arrays
// are an Error, not a read out of bounds.
TEST(EmbeddedKernelModels, ReadsExactDoublesAndRejectsInconsistentArrays) {
    const char* families[] = {"gemm"};
    std::int32_t tree_counts[] = {1};
    std::int16_t tree_sizes[] = {3};
    std::int8_t feature[] = {0, -1, -1};
    std::int32_t mantissa[] = {15, 0, -25};
    std::int8_t exponent[] = {-1, EmbeddedKernelModels::kExactDouble, 3};
    double exact[] = {0.1 + 0.2};  // 0.30000000000000004: not six digits
    EmbeddedKernelModels data{"{}", families, tree_counts, 1, tree_sizes, feature, mantissa, exponent, exact, 3, 1};
    auto trees = embedded_trees(data);
    ASSERT_EQ(trees.at("gemm").size(), 1u);
    const TreeEnsemble::Tree& t = trees.at("gemm")[0];
    EXPECT_EQ(t.feature, (std::vector<int>{0, -1, -1}));
    EXPECT_EQ(t.left[0], 1);
    EXPECT_EQ(t.right[0], 2);
    EXPECT_EQ(bits(t.threshold[0]), bits(1.5));
    EXPECT_EQ(bits(t.value[1]), bits(0.1 + 0.2));
    EXPECT_EQ(bits(t.value[2]), bits(-25000.0));

    EmbeddedKernelModels bad = data;
    mantissa[1] = 1;  // past the one exact double
    EXPECT_THROW(embedded_trees(bad), Error);
    mantissa[1] = 0;
    feature[1] = 3;  // node 1 a split: its children would be nodes 3 and 4 of a 3-node tree
    EXPECT_THROW(embedded_trees(bad), Error);
    feature[1] = -1;
    bad.node_count = 4;  // a node no tree holds
    EXPECT_THROW(embedded_trees(bad), Error);
    bad.node_count = 2;  // a tree past the nodes
    EXPECT_THROW(embedded_trees(bad), Error);
}
