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

// The models people train now (issue #30): each count is exact against a published total, unique trainable
// parameters (tied tables once).
//   Qwen3: the KerasHub presets' counts (keras_hub/src/models/qwen3/qwen3_presets.py and qwen3_moe_presets.py), which
//     equal the Hub's safetensors totals (Qwen3-235B-A22B: 235,093,634,560, its "235B").
//   Gemma 2: the KerasHub gemma presets (gemma2_2b_en 2,614,341,888, gemma2_9b_en, gemma2_27b_en).
//   Gemma 3: the KerasHub gemma3 text presets, which embed 262,144 tokens; the Hugging Face language models of the 4B,
//     12B and 27B multimodal checkpoints embed 262,208 (their text_config's vocab_size), 64 rows more.
//   Llama 4: the Hub's safetensors totals of meta-llama/Llama-4-Scout-17B-16E-Instruct (108,641,793,536) and
//     Maverick-17B-128E (401,583,781,376) less their vision tower and projector (871,932,416 each, the same
//     vision_config): 107,769,861,120 and 400,711,848,960 ("109B" and "400B" in Meta's model card).
//   DeepSeek-V2-Lite: its model card's 15.7B, the Hub's 15,706,484,224 (tests/importers-hf-config-test.cpp derives it).
//   Mixtral 8x22B v0.1 (vocabulary 32000), OLMo 2 1124 7B and 13B, Phi-4: the Hub's safetensors totals.
TEST(TransformerZoo, ModelsPeopleTrainNowMatchPublishedCounts) {
    const std::pair<const char*, std::int64_t> expected[] = {
        {"qwen3-0.6b", 596049920},
        {"qwen3-1.7b", 1720574976},
        {"qwen3-4b", 4022468096},
        {"qwen3-8b", 8190735360},
        {"qwen3-14b", 14768307200},
        {"qwen3-32b", 32762123264},
        {"qwen3-30b-a3b", 30532122624},
        {"qwen3-235b-a22b", 235093634560},
        {"gemma2-2b", 2614341888},
        {"gemma2-9b", 9241705984},
        {"gemma2-27b", 27227128320},
        {"gemma3-1b", 999885952},
        {"gemma3-4b", 3880099328 + 64 * 2560},
        {"gemma3-12b", 11765788416 + 64 * 3840},
        {"gemma3-27b", 27009002240 + 64 * 5376},
        {"llama4-scout", 108641793536 - 871932416},
        {"llama4-maverick", 401583781376 - 871932416},
        {"deepseek-v2-lite", 15706484224},
        {"mixtral-8x22b", 140620634112},
        {"olmo2-7b", 7298617344},
        {"olmo2-13b", 13716198400},
        {"phi-4", 14659507200},
    };
    for (const auto& [id, count] : expected) EXPECT_EQ(params_of(id), count) << id;
}

// Active parameters per token, as the model cards give them (rounded): the forward multiply-accumulates per token at
// a short sequence (128 tokens, where attention's scores are a small share) plus the input embedding table, which is
// a lookup, not a product (DeepSeek's figure leaves the table out). Each MoE layer runs top_k experts (and any shared
// one) per token. Measured: 3.34, 22.14, 17.17, 17.17, 2.45 and 39.15 B.
TEST(TransformerZoo, ActiveParametersOfTheMixturesOfExperts) {
    struct Case {
        const char* id;
        double active_billions, tolerance, embedding;  // the card's figure; its rounding; vocabulary x hidden
    };
    const Case cases[] = {
        {"qwen3-30b-a3b", 3.3, 0.05, 151936.0 * 2048},   // "3.3B activated"
        {"qwen3-235b-a22b", 22, 0.5, 151936.0 * 4096},   // "22B activated"
        {"llama4-scout", 17, 0.5, 202048.0 * 5120},      // "17B (Activated)"
        {"llama4-maverick", 17, 0.5, 202048.0 * 5120},   // "17B (Activated)"
        {"deepseek-v2-lite", 2.4, 0.06, 0},  // "2.4B activated": without the input table (2.45 B; 2.66 B with it)
        {"mixtral-8x22b", 39, 0.5, 32000.0 * 6144},      // "39B active"
    };
    for (const auto& c : cases) {
        auto f = compute_features(build_zoo_model(c.id, {1, 128, 0}), Precision::bf16);
        EXPECT_NEAR((f.macs / 128 + c.embedding) / 1e9, c.active_billions, c.tolerance) << c.id;
    }
}
