// The layers-JSON format (docs/layers-json.md, schemas/layers.schema.json): the examples import with their
// hand-computed parameter counts, groups behave as documented, and every mistake is an Error that says where.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/error.hpp"
#include "importers/layers_json.hpp"
#include "importers/resolve.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "test-helpers.hpp"

using namespace prenet;

namespace {

using prenet::testing::import_error;
using prenet::testing::source_json;

std::int64_t params_of(const Model& m) { return compute_features(m, Precision::fp32).params; }

const Layer* find_layer(const Model& m, const std::string& name) {
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.name == name) return &l;
    return nullptr;
}


// A document with a [16] input and these layers.
json doc16(json layers) { return {{"input", {{"shape", {16}}}}, {"layers", std::move(layers)}}; }

}  // namespace

TEST(LayersJson, MnistMlpExample) {
    json doc = source_json("examples/mnist-mlp.json");
    ASSERT_TRUE(looks_like_layers_json(doc));
    Model m = resolve_model(doc, {64, 0, 0});
    // 784 x 512 + 512 = 401,920; 512 x 512 + 512 = 262,656; 512 x 10 + 10 = 5,130 (Keras mnist_mlp: 669,706).
    EXPECT_EQ(params_of(m), 401920 + 262656 + 5130);
    EXPECT_EQ(params_of(m), 669706);
    EXPECT_EQ(m.name, "mnist-mlp");
    EXPECT_EQ(m.domain, "vision");
    EXPECT_EQ(m.batch, 64);
    EXPECT_EQ(m.tokens_per_sample, 0);
    ASSERT_NE(find_layer(m, "fc1"), nullptr);
    EXPECT_EQ(find_layer(m, "fc1")->input, (Shape{64, 784}));
    EXPECT_EQ(find_layer(m, "classifier")->output, (Shape{64, 10}));
    EXPECT_NE(find_layer(m, "layers[2]"), nullptr);  // unnamed layers are called by their path
    EXPECT_EQ(find_layer(m, "layers[2]")->kind, "activation");
    // Forward MACs are the weights times the batch (2 FLOPs each), plus small elementwise work.
    auto f = compute_features(m, Precision::fp32);
    EXPECT_NEAR(f.forward_flops / (2.0 * 64 * (784 * 512 + 512 * 512 + 512 * 10)), 1.0, 0.02);
}

TEST(LayersJson, TinyTransformerExample) {
    json doc = source_json("examples/tiny-transformer.json");
    Model m = resolve_model(doc, {1, 0, 0});
    // Token table 8000 x 256 = 2,048,000; positions 512 x 256 = 131,072; per block two layer norms 2 x 512,
    // attention 4 (256^2 + 256) = 263,168, MLP 256 x 1024 + 1024 + 1024 x 256 + 256 = 525,568 (789,760), x 4;
    // final norm 512; the LM head is tied to the token table.
    constexpr std::int64_t block = 2 * 512 + 4 * (256 * 256 + 256) + (256 * 1024 + 1024 + 1024 * 256 + 256);
    static_assert(block == 789760);
    EXPECT_EQ(params_of(m), 8000 * 256 + 512 * 256 + 4 * block + 512);
    EXPECT_EQ(params_of(m), 5338624);
    EXPECT_EQ(m.domain, "language");
    EXPECT_EQ(m.tokens_per_sample, 128);  // input.tokens
    // The four blocks are one block repeated four times, with each residual's add after its branch.
    auto it = std::find_if(m.blocks.begin(), m.blocks.end(), [](const Block& b) { return b.name == "blocks"; });
    ASSERT_NE(it, m.blocks.end());
    EXPECT_EQ(it->repeat, 4);
    std::vector<std::string> kinds;
    for (const auto& l : it->layers) kinds.push_back(l.kind);
    EXPECT_EQ(kinds, (std::vector<std::string>{"layernorm", "attention", "dropout", "residual_add", "layernorm", "mlp",
                                               "dropout", "residual_add"}));
    EXPECT_EQ(it->layers[3].name, "attention_block.add");
    // --seq replaces input.tokens, up to the position table's 512.
    Model longer = resolve_model(doc, {2, 512, 0});
    EXPECT_EQ(longer.tokens_per_sample, 512);
    EXPECT_EQ(find_layer(longer, "lm_head")->output, (Shape{2, 512, 8000}));
    EXPECT_EQ(params_of(longer), 5338624);
    EXPECT_NE(import_error(doc, {1, 1024, 0}).find("position_embedding"), std::string::npos);
}

TEST(LayersJson, RepeatMultipliesParameters) {
    // linear 16 -> 16: 16 x 16 + 16 = 272 parameters per repetition.
    json layer = {{"type", "linear"}, {"out_features", 16}};
    auto repeated = [&](std::int64_t count) {
        return params_of(resolve_model(doc16({{{"type", "repeat"}, {"count", count}, {"layers", {layer, layer}}}}),
                                       {1, 0, 0}));
    };
    EXPECT_EQ(repeated(1), 2 * 272);
    EXPECT_EQ(repeated(3), 3 * 2 * 272);
    EXPECT_EQ(repeated(10), 10 * 2 * 272);
    // FLOPs scale the same way.
    auto flops = [&](std::int64_t count) {
        json d = doc16({{{"type", "linear"}, {"out_features", 16}},
                        {{"type", "repeat"}, {"count", count}, {"layers", {layer}}}});
        return compute_features(resolve_model(d, {8, 0, 0}), Precision::fp32).forward_flops;
    };
    EXPECT_NEAR(flops(5) - flops(1), 4 * (flops(2) - flops(1)), 1e-6 * flops(5));
    // A nested repeat is unrolled inside the outer one: 2 x 3 repetitions.
    json nested = doc16({{{"type", "repeat"},
                          {"count", 2},
                          {"layers", {{{"type", "repeat"}, {"count", 3}, {"layers", {layer}}}}}}});
    EXPECT_EQ(params_of(resolve_model(nested, {1, 0, 0})), 6 * 272);
}

TEST(LayersJson, RepeatThatChangesTheShapeIsAnErrorUnlessOnce) {
    json widen = {{"type", "linear"}, {"out_features", 32}};
    EXPECT_NO_THROW(resolve_model(doc16({{{"type", "repeat"}, {"count", 1}, {"layers", {widen}}}}), {1, 0, 0}));
    std::string message = import_error(doc16({{{"type", "repeat"}, {"count", 2}, {"layers", {widen}}}}));
    EXPECT_NE(message.find("layers[0]"), std::string::npos) << message;
    EXPECT_NE(message.find("repeat"), std::string::npos) << message;
    message = import_error(doc16({{{"type", "repeat"}, {"count", 0}, {"layers", {widen}}}}));
    EXPECT_NE(message.find("'count'"), std::string::npos) << message;
    message = import_error(doc16({{{"type", "repeat"}, {"layers", {widen}}}}));
    EXPECT_NE(message.find("'count'"), std::string::npos) << message;
}

TEST(LayersJson, ResidualAddsTheInputBackAndMustKeepTheShape) {
    json same = doc16({{{"type", "residual"},
                        {"name", "skip"},
                        {"layers", {{{"type", "linear"}, {"out_features", 16}}, {{"type", "activation"}}}}}});
    Model m = resolve_model(same, {1, 0, 0});
    ASSERT_NE(find_layer(m, "skip.add"), nullptr);
    EXPECT_EQ(find_layer(m, "skip.add")->kind, "residual_add");
    EXPECT_EQ(params_of(m), 272);

    json changes = doc16({{{"type", "linear"}, {"out_features", 16}},
                          {{"type", "residual"}, {"layers", {{{"type", "linear"}, {"out_features", 8}}}}}});
    std::string message = import_error(changes);
    EXPECT_NE(message.find("layers[1]"), std::string::npos) << message;
    EXPECT_NE(message.find("residual"), std::string::npos) << message;
    EXPECT_NE(message.find("[1,8]"), std::string::npos) << message;
}

TEST(LayersJson, BadLayersAreErrorsThatNameThePath) {
    json ok = {{"type", "linear"}, {"out_features", 16}};
    auto error_at_2 = [&](json bad) { return import_error(doc16({ok, ok, std::move(bad)})); };

    std::string message = error_at_2({{"type", "linear"}, {"out_features", -5}});
    EXPECT_NE(message.find("layers[2]"), std::string::npos) << message;
    EXPECT_NE(message.find("'out_features'"), std::string::npos) << message;

    message = error_at_2({{"type", "linear"}});
    EXPECT_NE(message.find("layers[2]"), std::string::npos) << message;
    EXPECT_NE(message.find("'out_features'"), std::string::npos) << message;

    message = error_at_2({{"type", "linear"}, {"out_features", "sixteen"}});
    EXPECT_NE(message.find("layers[2]"), std::string::npos) << message;

    message = error_at_2(42);
    EXPECT_NE(message.find("layers[2]"), std::string::npos) << message;

    message = error_at_2({{"out_features", 16}});  // no type
    EXPECT_NE(message.find("layers[2]"), std::string::npos) << message;

    message = error_at_2({{"type", "repeat"}, {"count", 2}});
    EXPECT_NE(message.find("layers[2]"), std::string::npos) << message;
    EXPECT_NE(message.find("'layers'"), std::string::npos) << message;

    message = error_at_2({{"type", "residual"}, {"layers", "linear"}});
    EXPECT_NE(message.find("layers[2]"), std::string::npos) << message;
    EXPECT_NE(message.find("'layers'"), std::string::npos) << message;

    // Inside a group the path continues from the group's name.
    message = error_at_2({{"type", "repeat"}, {"name", "blocks"}, {"count", 2}, {"layers", {ok, 7}}});
    EXPECT_NE(message.find("blocks[1]"), std::string::npos) << message;
    message = error_at_2({{"type", "residual"}, {"layers", {ok, {{"type", "linear"}, {"out_features", 0}}}}});
    EXPECT_NE(message.find("layers[2][1]"), std::string::npos) << message;
}

TEST(LayersJson, UnknownTypeNamesThePathAndTheKnownTypes) {
    std::string message = import_error(doc16({{{"type", "linear"}, {"out_features", 16}}, {{"type", "conv9d"}}}));
    EXPECT_NE(message.find("'conv9d'"), std::string::npos) << message;
    EXPECT_NE(message.find("conv2d"), std::string::npos) << message;  // the known types are listed
    EXPECT_NE(message.find("layers[1]"), std::string::npos) << message;
    // Also when the layer has a name of its own.
    message = import_error(doc16({{{"type", "dense"}, {"name", "fc"}, {"out_features", 16}}}));
    EXPECT_NE(message.find("layers[0]"), std::string::npos) << message;
}

TEST(LayersJson, WrongTypesOfNameAndDomainAreErrors) {
    EXPECT_NE(import_error(doc16({{{"type", "linear"}, {"name", 5}, {"out_features", 16}}})).find("name"),
              std::string::npos);
    json d = doc16({{{"type", "linear"}, {"out_features", 16}}});
    d["domain"] = 3;
    EXPECT_NE(import_error(d).find("domain"), std::string::npos);
}

TEST(LayersJson, DocumentErrors) {
    json layers = {{{"type", "linear"}, {"out_features", 4}}};
    EXPECT_NE(import_error({{"layers", layers}}).find("'input'"), std::string::npos);
    EXPECT_NE(import_error({{"input", {{"shape", json::array()}}}, {"layers", layers}}).find("input.shape"),
              std::string::npos);
    EXPECT_NE(import_error({{"input", {{"shape", {3, 0, 8}}}}, {"layers", layers}}).find("input.shape"),
              std::string::npos);
    EXPECT_NE(import_error({{"input", {{"tokens", 0}}}, {"layers", layers}}).find("input.tokens"), std::string::npos);
    EXPECT_NE(import_error({{"input", {{"shape", {4}}}}, {"layers", json::array()}}).find("'layers'"),
              std::string::npos);
    EXPECT_NE(import_error({{"input", {{"shape", {4}}}}, {"layers", "linear"}}).find("'layers'"), std::string::npos);
    EXPECT_FALSE(import_error({{"input", {{"shape", {4}}}}}).empty());  // no layers: not a model at all
    EXPECT_NE(import_error(doc16(layers), {0, 0, 0}).find("batch"), std::string::npos);
}

TEST(LayersJson, IntegersPastInt64AreOverTheLimitNotNegative) {
    // What a browser sends for 9223372036854775807 (JS rounds it up past INT64_MAX): an unsigned integer that
    // a signed read would wrap negative, and the message would wrongly say "not positive".
    json huge = json::parse("9223372036854776000");
    ASSERT_TRUE(huge.is_number_unsigned());
    json layers = {{{"type", "linear"}, {"out_features", 4}}};
    EXPECT_NE(import_error({{"input", {{"shape", {huge}}}}, {"layers", layers}}).find("over the limit"), std::string::npos);
    EXPECT_NE(import_error({{"input", {{"tokens", huge}}}, {"layers", {{{"type", "embedding"}, {"vocab", 8}, {"dim", 4}}}}})
                  .find("over the limit"),
              std::string::npos);
    EXPECT_NE(import_error(doc16({{{"type", "repeat"}, {"count", huge}, {"layers", layers}}})).find("over the limit"),
              std::string::npos);
    EXPECT_NE(import_error(doc16({{{"type", "repeat"}, {"count", -2}, {"layers", layers}}})).find("positive integer 'count'"),
              std::string::npos);
}

TEST(LayersJson, ImageOverrideResizesAnImageInput) {
    // conv 3 -> 16, 3 x 3: 3 x 9 x 16 + 16 = 448; linear 16 -> 10: 170. The pooling makes any size work.
    json doc = {{"input", {{"shape", {3, 32, 32}}}},
                {"domain", "vision"},
                {"layers",
                 {{{"type", "conv2d"}, {"name", "conv"}, {"out_channels", 16}, {"kernel_size", 3}, {"padding", 1}},
                  {{"type", "adaptive_avgpool2d"}},
                  {{"type", "flatten"}},
                  {{"type", "linear"}, {"name", "head"}, {"out_features", 10}},
                  {{"type", "cross_entropy"}}}}};
    Model at32 = resolve_model(doc, {2, 0, 0});
    EXPECT_EQ(find_layer(at32, "conv")->input, (Shape{2, 3, 32, 32}));
    EXPECT_EQ(find_layer(at32, "conv")->output, (Shape{2, 16, 32, 32}));
    Model at64 = resolve_model(doc, {2, 0, 64});
    EXPECT_EQ(find_layer(at64, "conv")->input, (Shape{2, 3, 64, 64}));
    EXPECT_EQ(find_layer(at64, "conv")->output, (Shape{2, 16, 64, 64}));
    EXPECT_EQ(params_of(at32), 448 + 170);
    EXPECT_EQ(params_of(at64), 448 + 170);
    auto f32 = compute_features(at32, Precision::fp32), f64 = compute_features(at64, Precision::fp32);
    EXPECT_NEAR(f64.macs / f32.macs, 4.0, 0.05);  // the conv dominates and has 4x the positions
    // The MNIST MLP's [1, 28, 28] input is an image too: at 64 px its first linear layer sees 4096 features.
    Model mlp = resolve_model(source_json("examples/mnist-mlp.json"), {1, 0, 64});
    EXPECT_EQ(find_layer(mlp, "fc1")->input, (Shape{1, 4096}));
    EXPECT_EQ(params_of(mlp), 4096 * 512 + 512 + 262656 + 5130);
    // --image does not touch inputs that are not [C, H, W].
    Model flat = resolve_model(doc16({{{"type", "linear"}, {"name", "fc"}, {"out_features", 4}}}), {1, 0, 64});
    EXPECT_EQ(find_layer(flat, "fc")->input, (Shape{1, 16}));
}

// The schema names exactly the catalogue's layer types (plus the two groups), each with a definition.
TEST(LayersJson, SchemaCoversTheCatalogue) {
    json schema = source_json("schemas/layers.schema.json");
    EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    std::vector<std::string> in_schema = schema["$defs"]["layer"]["properties"]["type"]["enum"];
    std::vector<std::string> expected = OpCatalogue::instance().kinds();
    expected.push_back("repeat");
    expected.push_back("residual");
    std::sort(in_schema.begin(), in_schema.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(in_schema, expected);
    for (const auto& kind : expected) {
        ASSERT_TRUE(schema["$defs"].contains(kind)) << kind;
        EXPECT_EQ(schema["$defs"][kind]["properties"]["type"]["const"], kind);
    }
    // Required attributes in the schema are required by the importer: a layer with only its type fails.
    for (const auto& kind : OpCatalogue::instance().kinds()) {
        const json& required = schema["$defs"][kind]["required"];
        if (required.size() <= 1) continue;  // only "type"
        json doc = {{"input", {{"shape", {3, 8, 8}}}}, {"layers", {{{"type", kind}}}}};
        EXPECT_THROW(resolve_model(doc, {1, 0, 0}), Error) << kind;
    }
}

// An attention layer that names its kernel (`flash`) keeps it; the others run the requested kernel (flash by
// default).
TEST(LayersJson, AnAttentionLayersFlashWinsOverTheRequestedKernel) {
    json doc = source_json("examples/tiny-transformer.json");
    auto attention_of = [](const Model& m) {
        auto it = std::find_if(m.blocks.begin(), m.blocks.end(), [](const Block& b) { return b.name == "blocks"; });
        return it->layers[1];
    };
    EXPECT_TRUE(attention_of(resolve_model(doc, {1, 0, 0, true})).attrs.at("flash").get<bool>());
    EXPECT_FALSE(attention_of(resolve_model(doc, {1, 0, 0, false})).attrs.at("flash").get<bool>());
    // Name the kernel on the layer: it wins, even over an explicit ask.
    std::string text = doc.dump();
    size_t at = text.find("\"type\":\"attention\"");
    ASSERT_NE(at, std::string::npos);
    text.insert(at, "\"flash\":false,");
    json named = json::parse(text);
    EXPECT_FALSE(attention_of(resolve_model(named, {1, 0, 0, true, true})).attrs.at("flash").get<bool>());
}
