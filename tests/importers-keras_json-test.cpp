// Keras model.to_json() import. Fixtures in tests/fixtures/keras are real exports (README.md there says whose);
// their parameter counts are the exporters' own (model.summary() / the weights manifest). The Keras 3 documents
// built here follow Keras 3's format field for field; their counts are Keras' formulas for each layer, cited.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"
#include "importers/keras_json.hpp"
#include "importers/resolve.hpp"
#include "ops/features.hpp"
#include "test-helpers.hpp"

using namespace prenet;

namespace {

json fixture(const std::string& file) { return prenet::testing::source_json("tests/fixtures/keras/" + file); }

std::int64_t params_of(const json& doc, ModelInputs in = {1, 0, 0}) {
    return compute_features(resolve_model(doc, in), Precision::fp32).params;
}

using prenet::testing::import_error;

// Keras 3's serialised tensor and layer.
json tensor(const std::string& layer, json shape) {
    return {{"class_name", "__keras_tensor__"},
            {"config", {{"shape", shape}, {"dtype", "float32"}, {"keras_history", {layer, 0, 0}}}}};
}
json layer3(const std::string& cls, const std::string& name, json config, json args) {
    config["name"] = name;
    config["trainable"] = true;
    return {{"module", "keras.layers"}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr},
            {"name", name}, {"inbound_nodes", json::array({{{"args", args}, {"kwargs", json::object()}}})}};
}
json input3(const std::string& name, json batch_shape) {
    return {{"module", "keras.layers"}, {"class_name", "InputLayer"},
            {"config", {{"batch_shape", batch_shape}, {"dtype", "float32"}, {"sparse", false}, {"name", name}}},
            {"registered_name", nullptr}, {"name", name}, {"inbound_nodes", json::array()}};
}
json functional3(const std::string& name, json layers, const std::string& input, const std::string& output) {
    return {{"module", "keras.src.models.functional"}, {"class_name", "Functional"}, {"registered_name", "Functional"},
            {"config", {{"name", name}, {"trainable", true}, {"layers", layers},
                        {"input_layers", {input, 0, 0}}, {"output_layers", {output, 0, 0}}}}};
}

}  // namespace

// tensorflow/tfjs src/models_test.ts, fakeNonSequentialModel and fakeMnistModel: Keras 2.1.1's to_json() of the
// Keras mnist_cnn example, Functional ("Model") and Sequential. Keras' summary: 1,199,882 parameters
// (conv 3x3x1x32+32, conv 3x3x32x64+64, dense 9216x128+128, dense 128x10+10).
TEST(KerasImport, Keras2MnistCnn) {
    EXPECT_EQ(params_of(fixture("mnist-functional-keras2.1.1.json")), 1199882);
    EXPECT_EQ(params_of(fixture("mnist-sequential-keras2.1.1.json")), 1199882);
    Model m = resolve_model(fixture("mnist-functional-keras2.1.1.json"), {4, 0, 0});
    EXPECT_EQ(m.name, "mnist");
    EXPECT_EQ(m.domain, "vision");
    EXPECT_EQ(m.blocks.front().layers.front().input, (Shape{4, 1, 28, 28}));  // channels first inside
    EXPECT_TRUE(m.notes.empty());
}

// TensorFlow.js layers models (tfjs-layers writes Keras' JSON): their weights manifests list every weight.
// tensorflow/tfjs e2e/integration_tests/load_predict_data/layers_model/model.json: Embedding 100x20, GRU(4)
// without reset_after: kernel 20x12, recurrent 4x12, bias 12: 2,300. tensorflow/tfjs-examples
// abalone-node/trainedModel/model.json: Dense 8x50+50, 50x50+50, 50x1+1: 3,051.
TEST(KerasImport, TensorFlowJsLayersModels) {
    EXPECT_EQ(params_of(fixture("embedding-gru-tfjs.json")), 2300);
    EXPECT_EQ(params_of(fixture("abalone-dense-tfjs.json")), 3051);
    Model m = resolve_model(fixture("embedding-gru-tfjs.json"), {1, 0, 0});
    EXPECT_EQ(m.domain, "language");
    EXPECT_EQ(m.tokens_per_sample, 10);
    EXPECT_EQ(resolve_model(fixture("embedding-gru-tfjs.json"), {1, 64, 0}).tokens_per_sample, 64);  // --seq
}

// A Keras 3 Functional CNN with a residual Add and a Concatenate: conv 3x3x8x8+8 (same), BatchNormalization 8
// (gamma, beta trainable; the moving mean and variance are not), Add, DepthwiseConv2D 3x3x8+8, SeparableConv2D(16):
// 3x3x8 + 8x16 + 16, Concatenate on channels (8 + 16), GlobalAveragePooling2D, Dense 24x10+10.
TEST(KerasImport, Keras3FunctionalCnn) {
    json s16 = {nullptr, 16, 16, 8};
    json layers = json::array({
        input3("in", s16),
        layer3("Conv2D", "conv", {{"filters", 8}, {"kernel_size", {3, 3}}, {"strides", {1, 1}}, {"padding", "same"},
                                  {"data_format", "channels_last"}, {"dilation_rate", {1, 1}}, {"groups", 1},
                                  {"activation", "relu"}, {"use_bias", true}},
               json::array({tensor("in", s16)})),
        layer3("BatchNormalization", "bn", {{"axis", -1}, {"center", true}, {"scale", true}},
               json::array({tensor("conv", s16)})),
        layer3("Add", "add", json::object(), json::array({json::array({tensor("in", s16), tensor("bn", s16)})})),
        layer3("DepthwiseConv2D", "dw", {{"kernel_size", {3, 3}}, {"padding", "same"}, {"depth_multiplier", 1},
                                         {"use_bias", true}, {"activation", "linear"}},
               json::array({tensor("add", s16)})),
        layer3("SeparableConv2D", "sep", {{"filters", 16}, {"kernel_size", {3, 3}}, {"strides", {2, 2}},
                                          {"padding", "same"}, {"use_bias", true}, {"activation", "relu"}},
               json::array({tensor("dw", s16)})),
        layer3("MaxPooling2D", "pool", {{"pool_size", {2, 2}}, {"strides", {2, 2}}, {"padding", "valid"}},
               json::array({tensor("dw", s16)})),
        layer3("Concatenate", "cat", {{"axis", -1}},
               json::array({json::array({tensor("pool", {nullptr, 8, 8, 8}), tensor("sep", {nullptr, 8, 8, 16})})})),
        layer3("GlobalAveragePooling2D", "gap", {{"keepdims", false}}, json::array({tensor("cat", {nullptr, 8, 8, 24})})),
        layer3("Dense", "dense", {{"units", 10}, {"activation", "softmax"}, {"use_bias", true}},
               json::array({tensor("gap", {nullptr, 24})})),
    });
    json doc = functional3("cnn", layers, "in", "dense");
    EXPECT_EQ(params_of(doc), (9 * 8 * 8 + 8) + 2 * 8 + (9 * 8 + 8) + (9 * 8 + 8 * 16 + 16) + (24 * 10 + 10));
    Model m = resolve_model(doc, {2, 0, 0});
    EXPECT_TRUE(m.notes.empty());
    // --image resizes the input; the shapes follow.
    EXPECT_EQ(resolve_model(doc, {1, 0, 32}).blocks.front().layers.front().input, (Shape{1, 8, 32, 32}));
}

// Keras 3 text models: Embedding 1000x64; Bidirectional(LSTM(32)) 2 x 4 (64x32 + 32x32 + 32); GRU(16,
// reset_after) 3 (64x16 + 16x16) + 2 x 3 x 16; MultiHeadAttention(4 heads, key_dim 16) on width 64: query, key,
// value 3 (64x64 + 64), output 64x64 + 64; LayerNormalization 2 x 64; Dense 64x2+2.
TEST(KerasImport, Keras3RecurrentAndAttention) {
    json tok = {nullptr, 20};
    json layers = json::array({
        input3("tokens", tok),
        layer3("Embedding", "emb", {{"input_dim", 1000}, {"output_dim", 64}}, json::array({tensor("tokens", tok)})),
        layer3("Bidirectional", "bilstm",
               {{"merge_mode", "concat"},
                {"layer", {{"module", "keras.layers"}, {"class_name", "LSTM"},
                           {"config", {{"name", "lstm"}, {"units", 32}, {"use_bias", true}, {"return_sequences", true}}}}}},
               json::array({tensor("emb", {nullptr, 20, 64})})),
        layer3("MultiHeadAttention", "mha", {{"num_heads", 4}, {"key_dim", 16}, {"value_dim", 16}, {"use_bias", true}},
               json::array({tensor("bilstm", {nullptr, 20, 64}), tensor("bilstm", {nullptr, 20, 64})})),
        layer3("LayerNormalization", "ln", {{"axis", -1}, {"center", true}, {"scale", true}},
               json::array({tensor("mha", {nullptr, 20, 64})})),
        layer3("GRU", "gru", {{"units", 16}, {"reset_after", true}, {"use_bias", true}, {"return_sequences", false}},
               json::array({tensor("ln", {nullptr, 20, 64})})),
        layer3("Dense", "out", {{"units", 2}, {"use_bias", true}}, json::array({tensor("gru", {nullptr, 16})})),
    });
    json doc = functional3("text", layers, "tokens", "out");
    std::int64_t expected = 1000 * 64 + 2 * 4 * (64 * 32 + 32 * 32 + 32) + 3 * (64 * 64 + 64) + 64 * 64 + 64 + 2 * 64 +
                            3 * (64 * 16 + 16 * 16) + 2 * 3 * 16 + 16 * 2 + 2;
    EXPECT_EQ(params_of(doc), expected);
    Model m = resolve_model(doc, {1, 0, 0});
    EXPECT_EQ(m.tokens_per_sample, 20);
}

// A layer PreNeT does not model is reported, with the shape Keras recorded after it, never dropped silently.
TEST(KerasImport, UnknownLayersAreReported) {
    json s = {nullptr, 32};
    json layers = json::array({
        input3("x", s),
        layer3("MyCustomLayer", "custom", json::object(), json::array({tensor("x", s)})),
        layer3("Dense", "dense", {{"units", 4}}, json::array({tensor("custom", {nullptr, 48})})),
    });
    json doc = functional3("m", layers, "x", "dense");
    Model m = resolve_model(doc, {1, 0, 0});
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].find("MyCustomLayer"), std::string::npos);
    EXPECT_NE(m.notes[0].find("[1,48]"), std::string::npos);
    EXPECT_EQ(params_of(doc), 48 * 4 + 4);  // the Dense reads the recorded width
}

TEST(KerasImport, BadDocumentsAreClearErrors) {
    json mnist = fixture("mnist-sequential-keras2.1.1.json");
    EXPECT_TRUE(looks_like_keras_json(mnist));
    EXPECT_FALSE(looks_like_keras_json(json{{"layers", json::array()}}));  // a layers JSON document
    json no_shape = mnist;
    no_shape["config"][0]["config"].erase("batch_input_shape");
    EXPECT_NE(import_error(no_shape).find("input shape"), std::string::npos);
    json open_dim = mnist;
    open_dim["config"][0]["config"]["batch_input_shape"] = {nullptr, nullptr, nullptr, 1};
    EXPECT_NE(import_error(open_dim).find("--image"), std::string::npos);
    EXPECT_EQ(import_error(open_dim, {1, 0, 28}), "");
    json huge = mnist;
    huge["config"][5]["config"]["units"] = 1LL << 40;
    EXPECT_NE(import_error(huge).find("1099511627776"), std::string::npos);
    json bad_act = mnist;
    bad_act["config"][5]["config"]["activation"] = "no_such_function";
    EXPECT_NE(import_error(bad_act).find("no_such_function"), std::string::npos);
    json dangling = fixture("mnist-functional-keras2.1.1.json");
    dangling["config"]["layers"][2]["inbound_nodes"] = json::parse(R"([[["nowhere", 0, 0, {}]]])");
    EXPECT_NE(import_error(dangling).find("nowhere"), std::string::npos);
    json merge = fixture("mnist-functional-keras2.1.1.json");
    merge["config"]["layers"][2]["class_name"] = "Add";
    merge["config"]["layers"][2]["inbound_nodes"] = json::parse(R"([[["input_6", 0, 0, {}], ["conv2d_15", 0, 0, {}]]])");
    EXPECT_NE(import_error(merge).find("broadcasting"), std::string::npos);
}

namespace {
// A Keras 3 Sequential on `batch_shape` with the given layers after its InputLayer. A vector, not a json: a
// one-layer list `{layer}` would be the layer itself (a copy) to clang, where GCC makes it an array.
json sequential3(json batch_shape, const std::vector<json>& layers) {
    json all = json::array({{{"class_name", "InputLayer"}, {"config", {{"batch_shape", batch_shape}, {"name", "in"}}}}});
    for (const auto& l : layers) all.push_back(l);
    return {{"class_name", "Sequential"}, {"config", {{"name", "s"}, {"layers", all}}}};
}
json keras_layer(const std::string& cls, json config) { return {{"class_name", cls}, {"config", config}}; }
}  // namespace

// A nested model with no output (a Functional of only an InputLayer, its output_layers naming nothing it made)
// is refused by name: a TimeDistributed read out[0] of it (SIGSEGV), a Sequential's next layer inputs.at(0)
// ("vector::_M_range_check"). A nested model without its config is refused too (it was read as one).
TEST(KerasImport, NestedModelsWithoutOutputsAreErrors) {
    json empty_functional = {{"class_name", "Functional"},
                             {"config", {{"name", "inner"},
                                         {"layers", json::array({input3("x", {nullptr, 8})})},
                                         {"output_layers", json::array({{"nowhere", 0, 0}})}}}};
    json wrapped = sequential3({nullptr, 4, 8}, {keras_layer("TimeDistributed", {{"layer", empty_functional}})});
    std::string e = import_error(wrapped);
    EXPECT_NE(e.find("no output"), std::string::npos) << e;
    EXPECT_NE(e.find("inner"), std::string::npos) << e;
    json chained = sequential3({nullptr, 8}, {empty_functional, keras_layer("Dense", {{"units", 4}})});
    e = import_error(chained);
    EXPECT_NE(e.find("no output"), std::string::npos) << e;
    json no_config = sequential3({nullptr, 8}, {json{{"class_name", "Functional"}}, keras_layer("Dense", {{"units", 4}})});
    e = import_error(no_config);
    EXPECT_NE(e.find("needs a 'config'"), std::string::npos) << e;
    // A nested model that does make its output still imports through the wrapper.
    json inner = empty_functional;
    inner["config"]["layers"].push_back(layer3("Dense", "d", {{"units", 3}}, json::array({tensor("x", {nullptr, 8})})));
    inner["config"]["output_layers"] = json::array({{"d", 0, 0}});
    EXPECT_EQ(params_of(sequential3({nullptr, 4, 8}, {keras_layer("TimeDistributed", {{"layer", inner}})})), 8 * 3 + 3);
}

// An axis is an integer in range: 1.5 and 2^64 - 1 were cast (to 1 and -1), a string threw nlohmann's
// "[json.exception.type_error.302]".
TEST(KerasImport, AxesMustBeIntegers) {
    auto bn = [](json axis) {
        return sequential3({nullptr, 8, 8, 4}, {keras_layer("BatchNormalization", {{"axis", axis}})});
    };
    EXPECT_EQ(params_of(bn(json::array({3}))), 2 * 4);
    EXPECT_EQ(params_of(bn(-1)), 2 * 4);
    for (json bad : {json::array({1.5}), json::array({18446744073709551615ULL}), json::array({"x"}), json(2.0 / 3),
                     json::array({1, 3})}) {
        std::string e = import_error(bn(bad));
        EXPECT_NE(e.find("'axis'"), std::string::npos) << bad.dump() << ": " << e;
        EXPECT_EQ(e.find("json.exception"), std::string::npos) << e;
    }
    json concat = sequential3({nullptr, 8}, {keras_layer("Concatenate", {{"axis", 1.5}})});
    EXPECT_NE(import_error(concat).find("'axis' must be an integer"), std::string::npos) << import_error(concat);
}

// A model of only InputLayers (or of layers that only change shapes) computes nothing: refused, as an ONNX graph
// that computes nothing is, rather than reported as 0 parameters and 0 FLOPs.
TEST(KerasImport, ModelsThatComputeNothingAreErrors) {
    json only_input = sequential3({nullptr, 8}, {});
    EXPECT_NE(import_error(only_input).find("computes nothing"), std::string::npos) << import_error(only_input);
    json functional = functional3("f", json::array({input3("x", {nullptr, 8})}), "x", "x");
    EXPECT_NE(import_error(functional).find("computes nothing"), std::string::npos) << import_error(functional);
    json permute = sequential3({nullptr, 4, 8}, {keras_layer("Permute", {{"dims", {2, 1}}})});
    EXPECT_NE(import_error(permute).find("computes nothing"), std::string::npos) << import_error(permute);
}

// ZeroPadding's output is a shape like any layer's: 32 + 2^31 is over the limit on a dimension (it was never
// checked, no layer being added for it); each side is an integer (2^63 - 1 twice overflowed the sum).
TEST(KerasImport, PaddingMeetsTheDimensionLimit) {
    auto padded = [](json padding) {
        return sequential3({nullptr, 32, 32, 1}, {keras_layer("ZeroPadding2D", {{"padding", padding}}),
                                                  keras_layer("Conv2D", {{"filters", 2}, {"kernel_size", 3}})});
    };
    EXPECT_EQ(params_of(padded(json::array({{1, 1}, {2, 2}}))), 3 * 3 * 2 + 2);
    std::string e = import_error(padded(json::array({{1073741824, 1073741824}, {0, 0}})));
    EXPECT_NE(e.find("2147483680"), std::string::npos) << e;
    EXPECT_NE(e.find("limit"), std::string::npos) << e;
    // As the last layer too, where no later layer reads the shape.
    e = import_error(sequential3({nullptr, 32, 32, 1}, {keras_layer("Conv2D", {{"filters", 2}, {"kernel_size", 3}}),
                                                        keras_layer("ZeroPadding2D", {{"padding", 1073741824}})}));
    EXPECT_NE(e.find("limit"), std::string::npos) << e;
    e = import_error(padded(json::array({{9223372036854775807LL, 9223372036854775807LL}, {0, 0}})));
    EXPECT_NE(e.find("'padding'"), std::string::npos) << e;
    e = import_error(padded(json::array({{1.5, 1}, {0, 0}})));
    EXPECT_NE(e.find("'padding' must be an integer"), std::string::npos) << e;
}

// The fuzz seeds with nested models (fuzz/seeds/keras_json/) import, so the fuzzer starts from models that reach
// the nested paths. TimeDistributed(Functional(Dense 8 -> 6)) = 54, BatchNormalization over 6 = 12, the nested
// Sequential's Dense 30 -> 3 = 93; a Functional inside a Functional: Dense 8 -> 4 = 36, Conv1D 3 x 4 x 2 + 2 = 26.
TEST(KerasImport, NestedModelSeedsImport) {
    auto seed = [](const std::string& file) { return prenet::testing::source_json("fuzz/seeds/keras_json/" + file); };
    EXPECT_EQ(params_of(seed("nested-timedistributed-functional-keras3.json")), 54 + 12 + 93);
    EXPECT_EQ(params_of(seed("nested-functional-in-functional-keras3.json")), 36 + 26);
    EXPECT_NE(import_error(seed("nested-model-without-outputs.json")).find("no output"), std::string::npos);
    EXPECT_NE(import_error(seed("padding-and-axes-at-the-limits.json")).find("limit"), std::string::npos);
}
