// Convolutional image classifiers, layer for layer as torchvision builds them (1000 ImageNet classes,
// input [batch, 3, image, image]). Layer names follow torchvision's module paths; a run of identical units
// (same input shape, same layers) is stored once as a repeated block named with its index range ("layer3.1-5").
#include <algorithm>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "importers/zoo.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

using I = std::int64_t;

// ---- single layers ----

void conv(ModelBuilder& b, const std::string& name, I out, I kernel, I stride = 1, I groups = 1, bool bias = false) {
    b.add("conv2d", name, {{"out_channels", out}, {"kernel_size", kernel}, {"stride", stride},
                           {"padding", (kernel - 1) / 2}, {"groups", groups}, {"bias", bias}});
}

void bn(ModelBuilder& b, const std::string& name) {
    b.add("batchnorm", name);
    // PyTorch refuses to train batch norm on one value per channel ("Expected more than 1 value per channel").
    if (elements(b.shape()) / b.shape()[1] == 1)
        throw Error("layer '" + name + "': batch norm in training needs more than one value per channel, but its "
                    "input is " + to_string(b.shape()) + "; use a larger batch or image");
}

void act(ModelBuilder& b, const std::string& name, const std::string& function) {
    b.add("activation", name, {{"function", function}});
}

// torchvision's Conv2dNormActivation: conv (no bias), batch norm, activation, named prefix.0/.1/.2.
void conv_bn_act(ModelBuilder& b, const std::string& prefix, I out, I kernel, I stride, I groups,
                 const std::string& function) {
    conv(b, prefix + ".0", out, kernel, stride, groups);
    bn(b, prefix + ".1");
    act(b, prefix + ".2", function);
}

// Closes a residual unit whose input had shape `in`: the optional strided 1x1 conv + bn downsample on the
// shortcut, then the add. The current shape is the main path's output.
void shortcut(ModelBuilder& b, const std::string& name, const Shape& in, bool downsample = false, I stride = 1) {
    Shape main_out = b.shape();
    if (downsample) {
        b.set_shape(in);
        conv(b, name + ".downsample.0", main_out[1], 1, stride);
        bn(b, name + ".downsample.1");
        if (b.shape() != main_out)
            throw Error("'" + name + "': shortcut " + to_string(b.shape()) + " does not match " + to_string(main_out));
    }
    b.set_shape(main_out);
    b.add("residual_add", name + ".add");
}

// The closing layers of every classifier: global average pool, flatten, [dropout], linear, loss.
Model classify(ModelBuilder& b, const std::string& fc_name, double dropout = 0) {
    b.add("adaptive_avgpool2d", "avgpool", {{"output_size", 1}});
    b.add("flatten", "flatten");
    if (dropout > 0) b.add("dropout", "classifier.0", {{"p", dropout}});
    b.add("linear", fc_name, {{"out_features", 1000}});
    b.add("cross_entropy", "loss");
    return b.finish("vision", 0);
}

std::string index_range(I first, I last) {
    return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

// A stage of `count` units whose first may change shape (stride, channels) and whose others are identical:
// the first is a block of its own, the rest one block repeated count - 1 times. unit(name, first).
template <class Unit>
void stage(ModelBuilder& b, const std::string& prefix, I first_index, I count, Unit unit) {
    std::string name = prefix + std::to_string(first_index);
    b.begin_block(name);
    unit(name, true);
    b.end_block();
    if (count == 1) return;
    name = prefix + index_range(first_index + 1, first_index + count - 1);
    b.begin_block(name, count - 1);
    unit(name, false);
    b.end_block();
}

ModelBuilder image_builder(const std::string& name, const ModelInputs& in) {
    return ModelBuilder(name, {in.batch, 3, in.image, in.image}, infer_shape);
}

// ---- ResNet (He et al. 2016; torchvision v1.5: stride on the 3x3 conv; v1: on the first 1x1) ----

void basic_block(ModelBuilder& b, const std::string& n, I planes, I stride) {
    Shape in = b.shape();
    conv(b, n + ".conv1", planes, 3, stride);
    bn(b, n + ".bn1");
    act(b, n + ".relu1", "relu");
    conv(b, n + ".conv2", planes, 3);
    bn(b, n + ".bn2");
    shortcut(b, n, in, stride != 1 || in[1] != planes, stride);
    act(b, n + ".relu2", "relu");
}

enum class ResNetBlock { basic, bottleneck, bottleneck_v1 };

void bottleneck(ModelBuilder& b, const std::string& n, I planes, I stride, bool stride_on_1x1) {
    Shape in = b.shape();
    conv(b, n + ".conv1", planes, 1, stride_on_1x1 ? stride : 1);
    bn(b, n + ".bn1");
    act(b, n + ".relu1", "relu");
    conv(b, n + ".conv2", planes, 3, stride_on_1x1 ? 1 : stride);
    bn(b, n + ".bn2");
    act(b, n + ".relu2", "relu");
    conv(b, n + ".conv3", planes * 4, 1);
    bn(b, n + ".bn3");
    shortcut(b, n, in, stride != 1 || in[1] != planes * 4, stride);
    act(b, n + ".relu3", "relu");
}

Model resnet(const std::string& name, const ModelInputs& in, const std::vector<I>& depths, ResNetBlock block) {
    ModelBuilder b = image_builder(name, in);
    conv(b, "conv1", 64, 7, 2);
    bn(b, "bn1");
    act(b, "relu", "relu");
    b.add("maxpool2d", "maxpool", {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}});
    for (size_t s = 0; s < depths.size(); ++s) {
        I planes = I(64) << s;
        stage(b, "layer" + std::to_string(s + 1) + ".", 0, depths[s], [&](const std::string& n, bool first) {
            I stride = first && s > 0 ? 2 : 1;
            if (block == ResNetBlock::basic) basic_block(b, n, planes, stride);
            else bottleneck(b, n, planes, stride, block == ResNetBlock::bottleneck_v1);
        });
    }
    return classify(b, "fc");
}

// ---- VGG-16 (Simonyan & Zisserman 2015, configuration D, no batch norm) ----

Model vgg16(const ModelInputs& in) {
    ModelBuilder b = image_builder("vgg16", in);
    const std::vector<I> cfg = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
    int index = 0;
    for (I c : cfg) {
        std::string n = "features." + std::to_string(index);
        if (c == 0) {
            b.add("maxpool2d", n, {{"kernel_size", 2}, {"stride", 2}});
            index += 1;
        } else {
            conv(b, n, c, 3, 1, 1, true);
            act(b, "features." + std::to_string(index + 1), "relu");
            index += 2;
        }
    }
    b.add("adaptive_avgpool2d", "avgpool", {{"output_size", 7}});
    b.add("flatten", "flatten");
    for (int i : {0, 3}) {
        b.add("linear", "classifier." + std::to_string(i), {{"out_features", 4096}});
        act(b, "classifier." + std::to_string(i + 1), "relu");
        b.add("dropout", "classifier." + std::to_string(i + 2), {{"p", 0.5}});
    }
    b.add("linear", "classifier.6", {{"out_features", 1000}});
    b.add("cross_entropy", "loss");
    return b.finish("vision", 0);
}

// ---- MobileNetV2 (Sandler et al. 2018) ----

void inverted_residual(ModelBuilder& b, const std::string& n, I expand, I out, I stride) {
    Shape in = b.shape();
    I hidden = in[1] * expand;
    int i = 0;
    if (expand != 1) conv_bn_act(b, n + ".conv." + std::to_string(i++), hidden, 1, 1, 1, "relu6");
    conv_bn_act(b, n + ".conv." + std::to_string(i++), hidden, 3, stride, hidden, "relu6");
    conv(b, n + ".conv." + std::to_string(i), out, 1);
    bn(b, n + ".conv." + std::to_string(i + 1));
    if (stride == 1 && in[1] == out) shortcut(b, n, in);
}

Model mobilenet_v2(const ModelInputs& in) {
    ModelBuilder b = image_builder("mobilenet-v2", in);
    conv_bn_act(b, "features.0", 32, 3, 2, 1, "relu6");
    struct Setting { I t, c, n, s; };
    const Setting settings[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    I index = 1;
    for (const Setting& st : settings) {
        stage(b, "features.", index, st.n, [&](const std::string& n, bool first) {
            inverted_residual(b, n, st.t, st.c, first ? st.s : 1);
        });
        index += st.n;
    }
    conv_bn_act(b, "features." + std::to_string(index), 1280, 1, 1, 1, "relu6");
    return classify(b, "classifier.1", 0.2);
}

// ---- EfficientNet-B0 (Tan & Le 2019) ----

// MBConv: expand 1x1, depthwise kxk, squeeze-excitation (squeeze = block input channels / 4), project 1x1;
// the residual path has stochastic depth with rate `drop` (a per-sample mask, modelled as dropout: no params).
void mbconv(ModelBuilder& b, const std::string& n, I expand, I kernel, I stride, I out, double drop) {
    Shape in = b.shape();
    I hidden = in[1] * expand;
    int i = 0;
    if (expand != 1) conv_bn_act(b, n + ".block." + std::to_string(i++), hidden, 1, 1, 1, "silu");
    conv_bn_act(b, n + ".block." + std::to_string(i++), hidden, kernel, stride, hidden, "silu");
    b.add("squeeze_excitation", n + ".block." + std::to_string(i++),
          {{"squeeze_channels", std::max<I>(1, in[1] / 4)}});
    conv(b, n + ".block." + std::to_string(i) + ".0", out, 1);
    bn(b, n + ".block." + std::to_string(i) + ".1");
    if (stride == 1 && in[1] == out) {
        if (drop > 0) b.add("dropout", n + ".stochastic_depth", {{"p", drop}});
        shortcut(b, n, in);
    }
}

Model efficientnet_b0(const ModelInputs& in) {
    ModelBuilder b = image_builder("efficientnet-b0", in);
    conv_bn_act(b, "features.0", 32, 3, 2, 1, "silu");
    struct Setting { I expand, kernel, stride, out, layers; };
    const Setting settings[] = {{1, 3, 1, 16, 1}, {6, 3, 2, 24, 2}, {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
                                {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
    const double total_blocks = 16, stochastic_depth = 0.2;
    I block_id = 0, stage_index = 1;
    for (const Setting& st : settings) {
        stage(b, "features." + std::to_string(stage_index) + ".", 0, st.layers, [&](const std::string& n, bool first) {
            // torchvision raises the rate linearly with the block index; a repeated block keeps its first rate
            // (the cost does not depend on it).
            double drop = stochastic_depth * double(first ? block_id : block_id + 1) / total_blocks;
            mbconv(b, n, st.expand, st.kernel, first ? st.stride : 1, st.out, drop);
        });
        block_id += st.layers;
        ++stage_index;
    }
    conv_bn_act(b, "features.8", 1280, 1, 1, 1, "silu");
    return classify(b, "classifier.1", 0.2);
}

// ---- DenseNet-121 (Huang et al. 2017) ----

// BN-ReLU-conv1x1 (bn_size * growth) - BN-ReLU-conv3x3 (growth) on a side branch, concatenated onto its input.
void dense_layer(ModelBuilder& b, const std::string& n, I growth, I bn_size) {
    Shape in = b.shape();
    bn(b, n + ".norm1");
    act(b, n + ".relu1", "relu");
    conv(b, n + ".conv1", bn_size * growth, 1);
    bn(b, n + ".norm2");
    act(b, n + ".relu2", "relu");
    conv(b, n + ".conv2", growth, 3);
    b.set_shape(in);
    b.add("concat", n + ".cat", {{"extra", growth}});
}

void transition(ModelBuilder& b, const std::string& n) {
    I out = b.shape()[1] / 2;
    bn(b, n + ".norm");
    act(b, n + ".relu", "relu");
    conv(b, n + ".conv", out, 1);
    b.add("avgpool2d", n + ".pool", {{"kernel_size", 2}, {"stride", 2}});
}

Model densenet121(const ModelInputs& in) {
    const I growth = 32, bn_size = 4;
    const std::vector<I> blocks = {6, 12, 24, 16};
    ModelBuilder b = image_builder("densenet121", in);
    conv(b, "features.conv0", 64, 7, 2);
    bn(b, "features.norm0");
    act(b, "features.relu0", "relu");
    b.add("maxpool2d", "features.pool0", {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}});
    for (size_t i = 0; i < blocks.size(); ++i) {
        std::string n = "features.denseblock" + std::to_string(i + 1);
        b.begin_block(n);  // every layer sees more channels: nothing repeats
        for (I j = 1; j <= blocks[i]; ++j) dense_layer(b, n + ".denselayer" + std::to_string(j), growth, bn_size);
        b.end_block();
        if (i + 1 == blocks.size()) break;
        n = "features.transition" + std::to_string(i + 1);
        b.begin_block(n);
        transition(b, n);
        b.end_block();
    }
    bn(b, "features.norm5");
    act(b, "relu", "relu");
    return classify(b, "classifier");
}

ZooEntry vision(std::string id, std::string description, std::function<Model(const ModelInputs&)> build) {
    return ZooEntry{std::move(id), "vision", std::move(description), 0, 224, std::move(build)};
}

}  // namespace

std::vector<ZooEntry> cnn_zoo() {
    return {
        vision("resnet18", "ResNet-18, 11.7M params (He et al. 2016, 'Deep Residual Learning'; torchvision resnet18)",
               [](const ModelInputs& in) { return resnet("resnet18", in, {2, 2, 2, 2}, ResNetBlock::basic); }),
        vision("resnet50",
               "ResNet-50 with bottlenecks, 25.6M params (He et al. 2016; torchvision resnet50, stride on the 3x3)",
               [](const ModelInputs& in) { return resnet("resnet50", in, {3, 4, 6, 3}, ResNetBlock::bottleneck); }),
        vision("resnet50-v1",
               "ResNet-50 v1 as in the paper and TensorFlow's tf_cnn_benchmarks: stride on the first 1x1 of a block",
               [](const ModelInputs& in) { return resnet("resnet50-v1", in, {3, 4, 6, 3}, ResNetBlock::bottleneck_v1); }),
        vision("vgg16", "VGG-16 without batch norm, 138M params (Simonyan & Zisserman 2015; torchvision vgg16)",
               vgg16),
        vision("mobilenet-v2",
               "MobileNetV2 inverted residuals, 3.5M params (Sandler et al. 2018; torchvision mobilenet_v2)",
               mobilenet_v2),
        vision("efficientnet-b0",
               "EfficientNet-B0, MBConv with squeeze-excitation and SiLU, 5.3M params (Tan & Le 2019; torchvision "
               "efficientnet_b0)",
               efficientnet_b0),
        vision("densenet121",
               "DenseNet-121, growth 32, blocks 6-12-24-16, 8.0M params (Huang et al. 2017; torchvision densenet121)",
               densenet121),
    };
}

}  // namespace prenet
