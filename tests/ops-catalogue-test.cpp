// The op catalogue's traits: what each kind declares about saving tensors for the backward and about
// torch.autocast, which ops/features.cpp reads instead of keeping lists of kinds of its own.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "ops/catalogue.hpp"

using namespace prenet;

namespace {

const OpTraits& traits(const std::string& kind) { return OpCatalogue::instance().find(kind).traits; }

Layer layer_of(const std::string& kind, json attrs = json::object()) {
    Layer l;
    l.kind = kind;
    l.attrs = std::move(attrs);
    return l;
}

OpDef def_without_traits(const std::string& kind) {
    return {kind, "a kind that forgot its traits", [](Layer& l) { l.output = l.input; },
            [](const Layer&, Precision, LayerCost&) {}};
}

}  // namespace

TEST(OpCatalogue, EveryKindDeclaresItsAutocastClass) {
    const auto kinds = OpCatalogue::instance().kinds();
    ASSERT_FALSE(kinds.empty());
    for (const auto& kind : kinds) EXPECT_NE(traits(kind).autocast, AutocastClass::unset) << kind;
}

TEST(OpCatalogue, RejectsAKindWithoutAnAutocastClass) {
    OpCatalogue c;
    EXPECT_THROW(c.add(def_without_traits("new_kind")), Error);
    EXPECT_THROW(c.find("new_kind"), Error);  // nothing was registered
    OpDef declared = def_without_traits("new_kind");
    declared.traits = OpTraits::of(AutocastClass::follows_input);
    c.add(declared);
    EXPECT_EQ(c.find("new_kind").traits.autocast, AutocastClass::follows_input);
    EXPECT_THROW(c.add(declared), Error);  // a second registration would silently replace the first
}

TEST(OpCatalogue, MatmulKindsRunInHalfAndKeepTheirInput) {
    for (const char* kind : {"linear", "conv2d", "conv_transpose2d", "attention", "mla_attention", "mlp", "moe",
                             "lstm", "squeeze_excitation"}) {
        EXPECT_EQ(traits(kind).autocast, AutocastClass::half) << kind;
        EXPECT_TRUE(traits(kind).saves_input) << kind;
        EXPECT_FALSE(traits(kind).starts_fp32_stream) << kind;
    }
    EXPECT_TRUE(traits("attention").fp32_softmax_under_autocast);
    EXPECT_TRUE(traits("mla_attention").fp32_softmax_under_autocast);
    EXPECT_FALSE(traits("linear").fp32_softmax_under_autocast);
}

TEST(OpCatalogue, NormsSoftmaxAndLossAreOnTheFp32List) {
    for (const char* kind : {"layernorm", "rmsnorm", "groupnorm", "softmax", "cross_entropy"})
        EXPECT_EQ(traits(kind).autocast, AutocastClass::fp32_list) << kind;
    EXPECT_TRUE(traits("layernorm").saves_input);
    EXPECT_FALSE(traits("softmax").saves_input);
    // Batch norm is not on autocast's fp32 list but keeps its input like the others.
    EXPECT_EQ(traits("batchnorm").autocast, AutocastClass::follows_input);
    EXPECT_TRUE(traits("batchnorm").saves_input);
}

TEST(OpCatalogue, EmbeddingsProduceFp32AndSomeStartTheResidualStream) {
    for (const char* kind : {"embedding", "positional_embedding", "token_type_embedding", "cls_token",
                             "relative_position_bias"})
        EXPECT_EQ(traits(kind).autocast, AutocastClass::fp32_output) << kind;
    EXPECT_TRUE(traits("embedding").starts_fp32_stream);
    EXPECT_TRUE(traits("positional_embedding").starts_fp32_stream);
    EXPECT_TRUE(traits("cls_token").starts_fp32_stream);
    EXPECT_FALSE(traits("token_type_embedding").starts_fp32_stream);
    EXPECT_FALSE(traits("relative_position_bias").starts_fp32_stream);
    EXPECT_TRUE(traits("residual_add").adds_to_residual_stream);
    EXPECT_FALSE(traits("concat").adds_to_residual_stream);
}

TEST(OpCatalogue, WhetherAnActivationKeepsItsOutputDependsOnItsFunction) {
    const OpTraits& act = traits("activation");
    EXPECT_EQ(act.autocast, AutocastClass::follows_input);
    EXPECT_TRUE(act.keeps_output(layer_of("activation")));  // relu by default
    for (const char* fn : {"relu", "relu6", "sigmoid", "tanh"})
        EXPECT_TRUE(act.keeps_output(layer_of("activation", {{"function", fn}}))) << fn;
    for (const char* fn : {"gelu", "silu", "hardswish", "identity"})
        EXPECT_FALSE(act.keeps_output(layer_of("activation", {{"function", fn}}))) << fn;
    for (const char* kind : {"dropout", "linear", "maxpool2d", "layernorm"})
        EXPECT_FALSE(traits(kind).keeps_output(layer_of(kind))) << kind;
}

TEST(OpCatalogue, ShapeOnlyAndElementwiseKindsFollowTheirInput) {
    for (const char* kind : {"dropout", "residual_add", "concat", "reshape", "flatten", "select_token",
                             "mean_tokens", "maxpool2d", "avgpool2d", "adaptive_avgpool2d"}) {
        EXPECT_EQ(traits(kind).autocast, AutocastClass::follows_input) << kind;
        EXPECT_EQ(traits(kind).saves_input, std::string(kind) == "maxpool2d") << kind;
    }
}

TEST(OpCatalogue, AttentionIsTheKindsWithProjectionsWhoseHeadsSplit) {
    std::vector<std::string> attention;
    for (const auto& kind : OpCatalogue::instance().kinds())
        if (is_attention(kind)) attention.push_back(kind);
    EXPECT_EQ(attention, (std::vector<std::string>{"attention", "mla_attention"}));  // not a bare attention_core
    EXPECT_THROW(is_attention("convolution9d"), Error);
}

TEST(OpCatalogue, OnlyTheMixtureOfExpertsRoutesToExperts) {
    std::vector<std::string> routing;
    for (const auto& kind : OpCatalogue::instance().kinds())
        if (traits(kind).routes_to_experts) routing.push_back(kind);
    EXPECT_EQ(routing, (std::vector<std::string>{"moe"}));
    Layer moe;
    moe.kind = "moe";
    EXPECT_TRUE(is_expert_layer(moe));
    Layer mlp;
    mlp.kind = "mlp";
    EXPECT_FALSE(is_expert_layer(mlp));
}

TEST(Catalogue, UnknownKindIsAClearError) {
    ModelBuilder b("t", {1, 4}, infer_shape);
    try {
        b.add("convolution9d", "x");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown layer type 'convolution9d'"), std::string::npos);
    }
}
