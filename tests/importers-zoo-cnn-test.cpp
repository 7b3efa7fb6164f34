// The CNN and recurrent zoo entries against torchvision / PyTorch: exact parameter counts (running statistics
// are buffers, not parameters), the commonly quoted forward MACs (conv + linear) at 224x224, and shapes.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "importers/zoo.hpp"
#include "ops/features.hpp"

using namespace prenet;

namespace {

ModelFeatures features(const std::string& id, ModelInputs in = {1, 0, 0}) {
    return compute_features(build_zoo_model(id, in), Precision::fp32);
}

const Layer& layer_named(const Model& m, const std::string& name) {
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.name == name) return l;
    throw Error("no layer " + name);
}

}  // namespace

TEST(CnnZoo, ParameterCountsMatchTorchvision) {
    EXPECT_EQ(features("resnet18").params, 11689512);
    EXPECT_EQ(features("resnet50").params, 25557032);
    EXPECT_EQ(features("vgg16").params, 138357544);
    EXPECT_EQ(features("mobilenet-v2").params, 3504872);
    EXPECT_EQ(features("efficientnet-b0").params, 5288548);
    EXPECT_EQ(features("densenet121").params, 7978856);
}

// v1 strides the first 1x1 of layer2.0, layer3.0 and layer4.0 instead of the 3x3: same weights, and each of those
// 1x1 convolutions (C x C/2 channels at H x H) runs on a quarter of the pixels: C * C/2 * H^2 * 3/4 MACs fewer.
TEST(CnnZoo, ResNet50V1StridesTheFirst1x1) {
    const double saved = 3 * (256.0 * 128 * 56 * 56 * 0.75);  // the same for (512, 28) and (1024, 14)
    EXPECT_EQ(features("resnet50-v1").params, features("resnet50").params);
    EXPECT_DOUBLE_EQ(features("resnet50-v1").macs, features("resnet50").macs - saved);
    EXPECT_NEAR(features("resnet50-v1").macs, 3.858e9, 1e6);  // the paper's "3.8 x 10^9 FLOPs" (multiply-adds)
}

TEST(CnnZoo, MacsMatchQuotedNumbers) {
    EXPECT_NEAR(features("resnet18").macs, 1.814e9, 0.5e6);
    EXPECT_NEAR(features("resnet50").macs, 4.089e9, 0.5e6);
    EXPECT_NEAR(features("vgg16").macs, 15.470e9, 0.5e6);
    EXPECT_NEAR(features("mobilenet-v2").macs, 0.3008e9, 0.05e6);
    // torchvision's model cards: 0.39 and 2.83 GFLOPS (their "FLOPS" are MACs).
    EXPECT_NEAR(features("efficientnet-b0").macs, 0.39e9, 0.005e9);
    EXPECT_NEAR(features("densenet121").macs, 2.83e9, 0.005e9);
}

TEST(CnnZoo, MacsScaleWithBatch) {
    for (const char* id : {"resnet18", "mobilenet-v2", "efficientnet-b0", "densenet121"}) {
        auto one = features(id), eight = features(id, {8, 0, 0});
        EXPECT_DOUBLE_EQ(eight.macs, 8 * one.macs) << id;
        EXPECT_EQ(eight.params, one.params) << id;
    }
}

TEST(CnnZoo, Shapes) {
    Model r50 = build_zoo_model("resnet50", {1, 0, 0});
    EXPECT_EQ(r50.domain, "vision");
    EXPECT_EQ(layer_named(r50, "avgpool").output, (Shape{1, 2048, 1, 1}));
    EXPECT_EQ(layer_named(r50, "layer4.0.conv2").output, (Shape{1, 512, 7, 7}));
    EXPECT_EQ(layer_named(r50, "fc").output, (Shape{1, 1000}));
    Model vgg = build_zoo_model("vgg16", {2, 0, 0});
    EXPECT_EQ(layer_named(vgg, "flatten").output, (Shape{2, 25088}));
    Model dense = build_zoo_model("densenet121", {1, 0, 0});
    EXPECT_EQ(layer_named(dense, "features.norm5").output, (Shape{1, 1024, 7, 7}));
    EXPECT_EQ(layer_named(dense, "features.transition1.pool").output, (Shape{1, 128, 28, 28}));
    Model eff = build_zoo_model("efficientnet-b0", {1, 0, 0});
    EXPECT_EQ(layer_named(eff, "features.8.0").output, (Shape{1, 1280, 7, 7}));
}

TEST(CnnZoo, OtherImageSizes) {
    Model r50 = build_zoo_model("resnet50", {1, 0, 160});
    EXPECT_EQ(layer_named(r50, "layer4.0.conv2").output, (Shape{1, 512, 5, 5}));
    EXPECT_EQ(compute_features(r50, Precision::fp32).params, 25557032);
    // Five 2x2 pools take 32 to 1; the adaptive pool then spreads it to 7x7, as in PyTorch.
    Model vgg = build_zoo_model("vgg16", {1, 0, 32});
    EXPECT_EQ(layer_named(vgg, "flatten").output, (Shape{1, 25088}));
    EXPECT_THROW(build_zoo_model("vgg16", {1, 0, 16}), Error);      // a 2x2 pool on 1x1
    EXPECT_THROW(build_zoo_model("densenet121", {1, 0, 16}), Error);
    // Batch norm cannot train on one value per channel (layer3 is 1x1 at 8x8), but a batch of 2 can.
    EXPECT_THROW(build_zoo_model("resnet50", {1, 0, 8}), Error);
    EXPECT_NO_THROW(build_zoo_model("resnet50", {2, 0, 8}));
    for (const char* id : {"resnet18", "mobilenet-v2", "efficientnet-b0"})
        EXPECT_THROW(build_zoo_model(id, {1, 0, 1}), Error) << id;
}

TEST(RecurrentZoo, LstmLanguageModel) {
    const std::int64_t vocab = 10000, emb = 1500, hidden = 1500;
    // nn.LSTM per layer: weight_ih [4h, in], weight_hh [4h, h], bias_ih [4h], bias_hh [4h].
    const std::int64_t lstm_layer = 4 * hidden * (emb + hidden) + 2 * 4 * hidden;
    const std::int64_t expected = vocab * emb + 2 * lstm_layer + hidden * vocab + vocab;
    EXPECT_EQ(expected, 66034000);
    Model m = build_zoo_model("lstm-lm", {20, 0, 0});
    EXPECT_EQ(m.domain, "language");
    EXPECT_EQ(m.tokens_per_sample, 35);
    EXPECT_EQ(layer_named(m, "decoder").output, (Shape{20, 35, vocab}));
    auto f = compute_features(m, Precision::fp32);
    EXPECT_EQ(f.params, expected);
    EXPECT_DOUBLE_EQ(compute_features(build_zoo_model("lstm-lm", {40, 0, 0}), Precision::fp32).macs, 2 * f.macs);
}

// A ReLU keeps its output and the next convolution keeps its input: one tensor, counted once. NVIDIA trains
// ResNet-50 with AMP at batch 256 on a 16 GB V100, so its saved activations must stay well below that.
TEST(CnnZoo, ReluOutputAndNextConvInputAreOneTensor) {
    auto f = compute_features(build_zoo_model("resnet50", {256, 0, 224}), Precision::fp16);
    EXPECT_LT(f.saved_activation_bytes, 12e9);
    double relu_saved = 0;
    for (const auto& lf : f.layers)
        if (lf.layer.kind == "activation") relu_saved += double(lf.repeat) * lf.cost.saved_activation_bytes;
    EXPECT_GT(relu_saved, 0);
}
