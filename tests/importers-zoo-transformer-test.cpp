#include <gtest/gtest.h>

#include "core/error.hpp"
#include "importers/zoo.hpp"
#include "ops/features.hpp"

using namespace prenet;

namespace {

std::int64_t params_of(const std::string& id) {
    return compute_features(build_zoo_model(id, {1, 128, 0}), Precision::fp32).params;
}

}  // namespace

// Published unique trainable parameter counts (tied weights once; BERT with pooler; causal LMs with LM head).
TEST(TransformerZoo, ParameterCountsMatchPublished) {
    const std::pair<const char*, std::int64_t> expected[] = {
        {"vit-b16", 86567656},           {"bert-base", 109482240},        {"bert-large", 335141888},
        {"bert-base-pretraining", 110106428}, {"bert-large-pretraining", 336226108},
        {"gpt2", 124439808},             {"gpt2-medium", 354823168},      {"gpt2-large", 774030080},
        {"gpt2-xl", 1557611200},         {"opt-1.3b", 1315758080},        {"llama2-7b", 6738415616},
        {"llama2-13b", 13015864320},     {"llama2-70b", 68976648192},     {"llama3-8b", 8030261248},
        {"llama3-70b", 70553706496},     {"llama3.1-405b", 405853388800}, {"mistral-7b", 7241732096},
        {"mixtral-8x7b", 46702792704},   {"tinyllama-1.1b", 1100048384},  {"bloom-176b", 176247271424},
        {"pythia-12b", 11846072320},     {"t5-base", 222903552},
    };
    for (const auto& [id, count] : expected) EXPECT_EQ(params_of(id), count) << id;
}

TEST(TransformerZoo, LargeModelsAreInTheRightBallpark) {
    EXPECT_NEAR(params_of("gpt3-175b") / 1e9, 175, 2);
    EXPECT_NEAR(params_of("opt-175b") / 1e9, 175, 2);
    EXPECT_NEAR(params_of("deepseek-v3") / 1e9, 671, 10);
    EXPECT_NEAR(params_of("palm-540b") / 1e9, 540, 10);
    EXPECT_NEAR(params_of("falcon-40b") / 1e9, 41.8, 1.5);
    EXPECT_NEAR(params_of("starcoder-15b") / 1e9, 15.5, 0.5);
}

TEST(TransformerZoo, RepeatedBlocksAreStoredOnce) {
    Model m = build_zoo_model("llama2-7b", {1, 512, 0});
    size_t layers = 0;
    for (const auto& b : m.blocks) layers += b.layers.size();
    EXPECT_LT(layers, 30u);  // 32 identical transformer blocks are one block repeated 32 times
}

TEST(TransformerZoo, ForwardFlopsFollowSixNDRule) {
    // Training FLOPs ~ 6 N D for dense decoders at short sequence: forward ~ 2 N per token.
    Model m = build_zoo_model("llama2-7b", {1, 256, 0});
    auto f = compute_features(m, Precision::bf16);
    double per_token = f.forward_flops / 256;
    EXPECT_NEAR(per_token / (2.0 * 6.738e9), 1.0, 0.05);
    EXPECT_NEAR(f.backward_flops() / f.forward_flops, 2.0, 0.1);
}

TEST(TransformerZoo, LearnedPositionsLimitSequenceLength) {
    EXPECT_THROW(build_zoo_model("gpt2", {1, 4096, 0}), Error);
    EXPECT_NO_THROW(build_zoo_model("llama2-7b", {1, 16384, 0}));
}

TEST(TransformerZoo, UnknownIdSuggestsAlternatives) {
    try {
        build_zoo_model("llama9", {});
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("llama2-7b"), std::string::npos);
    }
}

TEST(TransformerZoo, FlashAttentionSavesActivationMemory) {
    ModelInputs eager{2, 2048, 0}, flash{2, 2048, 0, true};
    auto half = MixedRecipe::half_model;
    auto a = compute_features(build_zoo_model("llama2-7b", eager), Precision::bf16, half);
    auto b = compute_features(build_zoo_model("llama2-7b", flash), Precision::bf16, half);
    EXPECT_EQ(a.params, b.params);
    // Eager attention keeps the [batch, heads, seq, seq] probabilities of every layer; the fused kernel does not
    // (it keeps a log-sum-exp per row instead). Its output is the output projection's input in both: one tensor.
    double scores = 32.0 * 2 * 32 * 2048.0 * 2048;
    double lse = 32.0 * 2 * 32 * 2048.0 * 4;
    EXPECT_NEAR(a.saved_activation_bytes - b.saved_activation_bytes, 2 * scores - lse, 1e6);
    // Under autocast the softmax runs in fp32: it keeps its 4-byte output and the context product keeps the
    // 2-byte copy it casts.
    auto c = compute_features(build_zoo_model("llama2-7b", eager), Precision::bf16);
    auto d = compute_features(build_zoo_model("llama2-7b", flash), Precision::bf16);
    double eager_minus_flash = c.saved_activation_bytes - d.saved_activation_bytes;
    EXPECT_NEAR(eager_minus_flash, (4 + 2) * scores - lse, 1e6);
    // Causal flash attention skips the masked half of the scores.
    EXPECT_LT(b.forward_flops, a.forward_flops);
}
