// Hugging Face config.json import: every fixture in tests/fixtures/hf imports, and the parameter counts match
// the published ones (each derived from first principles in a comment), and bad configs give errors that name
// the field or the model type.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "importers/hf_config.hpp"
#include "importers/resolve.hpp"
#include "importers/vision_language.hpp"
#include "ops/features.hpp"
#include "test-helpers.hpp"

using namespace prenet;

namespace {

const std::string kFixtures = PRENET_SOURCE_DIR "/tests/fixtures/hf/";

json fixture(const std::string& file) { return prenet::testing::source_json("tests/fixtures/hf/" + file); }

std::int64_t params_of(const json& config, ModelInputs inputs = {1, 128, 0}) {
    return compute_features(resolve_model(config, inputs), Precision::fp32).params;
}

std::int64_t fixture_params(const std::string& file) { return params_of(fixture(file)); }

// The message of the prenet::Error that importing `config` at 128 tokens throws ("" if it does not throw).
std::string import_error(const json& config) { return prenet::testing::import_error(config, {1, 128, 0}); }

// Executions of layers of `kind` in the model (a repeated block counts its repeat).
std::int64_t count_layers(const Model& m, const std::string& kind) {
    std::int64_t n = 0;
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == kind) n += b.repeat;
    return n;
}

// GPT-2 (learned positions, tied LM head), hidden d, L layers, vocabulary V, P positions:
// token table V d + position table P d + per layer [c_attn d 3d + 3d, c_proj d d + d, two layer norms 4d,
// c_fc d 4d + 4d, mlp c_proj 4d d + d] = 12 d^2 + 13 d + final layer norm 2d.
constexpr std::int64_t gpt2_params(std::int64_t d, std::int64_t L, std::int64_t V, std::int64_t P) {
    return V * d + P * d + L * (12 * d * d + 13 * d) + 2 * d;
}

// BERT-style encoder with pooler: word, position and token-type tables + embedding layer norm; per layer
// Q, K, V, O with biases 4(d^2 + d), FFN d f + f + f d + d, two layer norms 4d; pooler d^2 + d.
constexpr std::int64_t bert_params(std::int64_t d, std::int64_t L, std::int64_t f, std::int64_t V, std::int64_t P,
                                   std::int64_t types) {
    return (V + P + types) * d + 2 * d + L * (4 * (d * d + d) + 2 * d * f + f + d + 4 * d) + d * d + d;
}

// Llama-style decoder (RMSNorm, SwiGLU, no biases), untied unless `tied`: per layer q d (h hd), k and v
// d (kv hd) each, o (h hd) d, gate/up/down 3 d f, two RMSNorm weights 2d; final norm d; embeddings V d (x2).
constexpr std::int64_t llama_params(std::int64_t d, std::int64_t L, std::int64_t h, std::int64_t kv, std::int64_t hd,
                                    std::int64_t f, std::int64_t V, bool tied) {
    return L * (2 * d * h * hd + 2 * d * kv * hd + 3 * d * f + 2 * d) + d + (tied ? 1 : 2) * V * d;
}

// T5 v1.0 / Switch (no biases, RMSNorm, ReLU MLP, tied shared embedding): d model width, inner = heads x d_kv,
// f feed-forward, L layers per stack, `sparse` of them with E experts (each a d f + f d MLP) and a d E router.
// Encoder layer: attention 4 d inner + 2 norms; decoder layer: self + cross attention 8 d inner + 3 norms.
// Each stack: relative bias table 32 buckets x heads, final norm d.
constexpr std::int64_t t5_params(std::int64_t d, std::int64_t heads, std::int64_t d_kv, std::int64_t f, std::int64_t L,
                                 std::int64_t V, std::int64_t sparse = 0, std::int64_t E = 0) {
    std::int64_t inner = heads * d_kv, mlp = 2 * d * f;
    std::int64_t ffn = (L - sparse) * mlp + sparse * (E * mlp + d * E);
    std::int64_t encoder = L * (4 * d * inner + 2 * d) + ffn + 32 * heads + d;
    std::int64_t decoder = L * (8 * d * inner + 3 * d) + ffn + 32 * heads + d;
    return V * d + encoder + decoder;
}

}  // namespace

TEST(HfConfig, EveryFixtureImports) {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kFixtures)) {
        if (entry.path().extension() != ".json") continue;
        ++count;
        const std::string file = entry.path().filename().string();
        SCOPED_TRACE(file);
        json config = fixture(file);
        ASSERT_TRUE(looks_like_hf_config(config)) << file;
        Model m;
        // A vision-language model's sequence holds its image tokens too (hundreds to thousands).
        std::int64_t seq = is_vision_language_config(config) ? 4096 : 128;
        ASSERT_NO_THROW(m = resolve_model(config, {1, seq, 0})) << file;
        EXPECT_FALSE(m.blocks.empty()) << file;
        EXPECT_GT(compute_features(m, Precision::bf16).params, 0) << file;
    }
    EXPECT_GE(count, 25);  // 13 from NeuSight + 12 written for PreNeT
}

// Published unique trainable parameter counts (tied weights once). Each is checked against its formula too,
// so a wrong fixture and a wrong importer cannot agree by accident.
TEST(HfConfig, DecoderParameterCountsMatchPublished) {
    // Llama 2 7B: d 4096, 32 layers, 32 heads of 128, f 11008, V 32000, untied.
    static_assert(llama_params(4096, 32, 32, 32, 128, 11008, 32000, false) == 6738415616);
    EXPECT_EQ(fixture_params("llama2_7b.json"), 6738415616);
    // Mistral 7B: as Llama but GQA with 8 KV heads and f 14336.
    static_assert(llama_params(4096, 32, 32, 8, 128, 14336, 32000, false) == 7241732096);
    EXPECT_EQ(fixture_params("mistral-7b-v0.1.json"), 7241732096);
    // Mixtral 8x7B: Mistral's attention with 8 SwiGLU experts (3 d f each) and a d x 8 router per layer.
    static_assert(llama_params(4096, 32, 32, 8, 128, 14336, 32000, false) + 32 * (7LL * 3 * 4096 * 14336 + 4096 * 8) ==
                  46702792704);
    EXPECT_EQ(fixture_params("mixtral-8x7b-v0.1.json"), 46702792704);
    // Qwen2 7B: d 3584, 28 layers, 28 heads of 128, 4 KV heads, f 18944, V 152064, untied, plus q/k/v biases
    // (3584 + 2 x 512 per layer).
    static_assert(llama_params(3584, 28, 28, 4, 128, 18944, 152064, false) + 28 * (3584 + 2 * 512) == 7615616512);
    EXPECT_EQ(fixture_params("qwen2-7b.json"), 7615616512);
    // Gemma 7B: d 3072, 28 layers, 16 heads of 256 (h hd = 4096 != d), f 24576, V 256000, tied.
    static_assert(llama_params(3072, 28, 16, 16, 256, 24576, 256000, true) == 8537680896);
    EXPECT_EQ(fixture_params("gemma-7b.json"), 8537680896);

    // GPT-2 medium / large / XL (1024 positions) and OPT-1.3B (2048 positions + OPT's offset of 2; OPT's
    // layer has the same 12 d^2 + 13 d parameters as GPT-2's).
    static_assert(gpt2_params(1024, 24, 50257, 1024) == 354823168);
    static_assert(gpt2_params(1280, 36, 50257, 1024) == 774030080);
    static_assert(gpt2_params(1600, 48, 50257, 1024) == 1557611200);
    static_assert(gpt2_params(2048, 24, 50272, 2050) == 1315758080);
    EXPECT_EQ(fixture_params("gpt2_med.json"), 354823168);
    EXPECT_EQ(fixture_params("gpt2_large.json"), 774030080);
    EXPECT_EQ(fixture_params("gpt2_xl.json"), 1557611200);
    EXPECT_EQ(fixture_params("opt_13.json"), 1315758080);

    // Pythia-1B (GPT-NeoX): d 2048, 16 layers, f 8192, V 50304, untied; per layer qkv d 3d + 3d, dense d^2 + d,
    // MLP 2 d f + f + d, two layer norms 4d; final layer norm 2d.
    static_assert(16 * (4 * 2048 * 2048 + 4 * 2048 + 2 * 2048 * 8192 + 8192 + 2048 + 4 * 2048) + 2 * 2048 +
                      2 * 50304 * 2048 ==
                  1011781632);
    EXPECT_EQ(fixture_params("pythia-1b.json"), 1011781632);
    // BLOOM-560M: d 1024, 24 layers, f 4d, V 250880, tied, ALiBi (no position table), embedding layer norm;
    // per layer 12 d^2 + 13 d as GPT-2.
    static_assert(250880 * 1024 + 2 * 1024 + 24 * (12 * 1024 * 1024 + 13 * 1024) + 2 * 1024 == 559214592);
    EXPECT_EQ(fixture_params("bloom-560m.json"), 559214592);
    // Falcon-7B: d 4544, 71 heads of 64, multi-query (one K and one V head), 32 layers, f 4d, no biases, one
    // shared layer norm per parallel block (2d), V 65024, tied; final layer norm 2d.
    static_assert(32LL * (4544 * (4544 + 2 * 64) + 4544 * 4544 + 2 * 4544 * 18176 + 2 * 4544) + 2 * 4544 +
                      65024LL * 4544 ==
                  6921720704);
    EXPECT_EQ(fixture_params("falcon-7b.json"), 6921720704);
}

// Falcon-40B's model card says 40B and the Hub's safetensors total 41.8B, which stores the tied LM head as
// well; the unique count follows from the config: d 8192, 128 heads of 64, 8 KV heads, 60 layers, f 4d,
// no biases, two layer norms per block (new decoder architecture), V 65024 tied.
TEST(HfConfig, Falcon40BFollowsFromItsConfig) {
    constexpr std::int64_t d = 8192;
    constexpr std::int64_t layer = d * (d + 2 * 8 * 64) + d * d + 2 * d * 4 * d + 4 * d;
    static_assert(60 * layer + 2 * d + 65024 * d == 41303293952);
    EXPECT_EQ(fixture_params("falcon-40b.json"), 41303293952);
    EXPECT_EQ(fixture_params("falcon-40b.json") + 65024 * d, 41835970560);  // the Hub's 41.8B
}

TEST(HfConfig, EncoderParameterCountsMatchPublished) {
    // The bare encoders (BertModel, RobertaModel: with the pooler, no pre-training head).
    auto bare = [](const std::string& file, const char* architecture) {
        json c = fixture(file);
        c["architectures"] = {architecture};
        return params_of(c);
    };
    static_assert(bert_params(768, 12, 3072, 30522, 512, 2) == 109482240);
    static_assert(bert_params(1024, 24, 4096, 30522, 512, 2) == 335141888);
    EXPECT_EQ(bare("bert.json", "BertModel"), 109482240);
    EXPECT_EQ(bare("bert_large.json", "BertModel"), 335141888);
    // RoBERTa-base: 514 positions (padding offset 2), one token type, V 50265.
    static_assert(bert_params(768, 12, 3072, 50265, 514, 1) == 124645632);
    EXPECT_EQ(bare("roberta-base.json", "RobertaModel"), 124645632);
    // ViT-B/16 at 224: patch conv 3 16 16 d + d, class token d, 197 positions, 12 BERT-base layers
    // (7,087,872 each), final layer norm 2d, head d 1000 + 1000.
    static_assert(3 * 16 * 16 * 768 + 768 + 768 + 197 * 768 + 12 * 7087872 + 2 * 768 + 768 * 1000 + 1000 == 86567656);
    EXPECT_EQ(fixture_params("vit-base-patch16-224.json"), 86567656);
}

// With the architecture the fixture names (BertLMHeadModel, RobertaForMaskedLM) the model is the encoder without
// its pooler plus the masked-LM head: dense d^2 + d, layer norm 2d, and a decoder whose weight is the tied
// token table but whose bias (V) is its own. Published: bert-base 109,514,298; roberta-base 124,697,433.
TEST(HfConfig, MaskedLmHeadsMatchPublished) {
    static_assert(bert_params(768, 12, 3072, 30522, 512, 2) + 2 * 768 + 30522 == 109514298);
    static_assert(bert_params(1024, 24, 4096, 30522, 512, 2) + 2 * 1024 + 30522 == 335174458);
    static_assert(bert_params(768, 12, 3072, 50265, 514, 1) + 2 * 768 + 50265 == 124697433);
    EXPECT_EQ(fixture_params("bert.json"), 109514298);
    EXPECT_EQ(fixture_params("bert_large.json"), 335174458);
    EXPECT_EQ(fixture_params("roberta-base.json"), 124697433);
}

TEST(HfConfig, EncoderDecoderParameterCounts) {
    // T5-base: d 768, 12 heads of 64, f 3072, 12 + 12 layers, V 32128, tied LM head.
    static_assert(t5_params(768, 12, 64, 3072, 12, 32128) == 222903552);
    EXPECT_EQ(fixture_params("t5-base.json"), 222903552);
    // Switch-base-8: T5-base with every other layer (1, 3, ..., 11 in each stack) an 8-expert MoE.
    static_assert(t5_params(768, 12, 64, 3072, 12, 32128, 6, 8) == 619339008);
    EXPECT_EQ(fixture_params("switch-base-8.json"), 619339008);
    // NeuSight's switchxl4: d 1024, 32 heads of 128, f 16384, 24 + 24 layers, 12 of them with 4 experts.
    static_assert(t5_params(1024, 32, 128, 16384, 24, 32128, 12, 4) == 5267615744);
    EXPECT_EQ(fixture_params("switchxl4.json"), 5267615744);
}

TEST(HfConfig, OtherNeuSightConfigsFollowTheirFormulas) {
    // GPT-3-shaped models in GPT-2 form with 2048 positions.
    EXPECT_EQ(fixture_params("gpt3_xl.json"), gpt2_params(3072, 24, 50257, 2048));
    EXPECT_EQ(fixture_params("gpt3_27.json"), gpt2_params(2560, 32, 50257, 2048));
    EXPECT_EQ(fixture_params("gpt3_67.json"), gpt2_params(4096, 32, 50257, 2048));
    EXPECT_EQ(fixture_params("gpt3_13.json"), gpt2_params(5120, 40, 50257, 2048));
    // The one-layer OPT test config with 2048-wide embeddings around a 512-wide model: token table V 2048,
    // project_in and project_out 2048 x 512 (no bias), positions 2050 x 512, one layer 12 d^2 + 13 d,
    // final layer norm 2d.
    constexpr std::int64_t d = 512;
    EXPECT_EQ(fixture_params("opt.json"), 50272 * 2048 + 2 * 2048 * d + 2050 * d + 12 * d * d + 13 * d + 2 * d);
}

// Switch: Hugging Face makes layer i sparse when i % sparse_step == 1, every layer when the step is 1, and none
// when it is 0.
TEST(HfConfig, SwitchSparseStepPlacesExpertsLikeHuggingFace) {
    json c = fixture("switch-base-8.json");
    auto moe_layers = [&](std::int64_t step, std::int64_t layers) {
        json v = c;
        v["encoder_sparse_step"] = step, v["decoder_sparse_step"] = step;
        v["num_layers"] = layers, v["num_decoder_layers"] = layers;
        return count_layers(resolve_model(v, {1, 128, 0}), "moe");
    };
    EXPECT_EQ(moe_layers(2, 12), 2 * 6);
    EXPECT_EQ(moe_layers(1, 12), 2 * 12);
    EXPECT_EQ(moe_layers(0, 12), 0);
    EXPECT_EQ(moe_layers(3, 11), 2 * 4);  // layers 1, 4, 7, 10
    EXPECT_EQ(moe_layers(4, 6), 2 * 2);   // layers 1, 5
    // With no sparse layers Switch-base is T5-base.
    json dense = c;
    dense["encoder_sparse_step"] = 0, dense["decoder_sparse_step"] = 0;
    EXPECT_EQ(params_of(dense), 222903552);
}

// NeuSight's end-to-end training measurements: model-train-<seq>-<batch>.
TEST(HfConfig, NeuSightEndToEndConfigsImportAtTheirSizes) {
    struct Case {
        const char* file;
        std::int64_t seq;
        std::vector<std::int64_t> batches;
    };
    const Case cases[] = {
        {"bert_large.json", 512, {2, 8}},  {"gpt2_large.json", 1024, {1, 4}}, {"gpt3_xl.json", 2048, {1}},
        {"gpt3_27.json", 2048, {1}},       {"opt_13.json", 2048, {1, 2}},     {"switchxl4.json", 512, {1, 2}},
    };
    for (const auto& c : cases) {
        json config = fixture(c.file);
        std::int64_t params = params_of(config);
        for (std::int64_t batch : c.batches) {
            Model m;
            ASSERT_NO_THROW(m = resolve_model(config, {batch, c.seq, 0})) << c.file << " batch " << batch;
            EXPECT_EQ(m.batch, batch) << c.file;
            EXPECT_EQ(m.tokens_per_sample, c.seq) << c.file;
            EXPECT_EQ(m.domain, "language") << c.file;
            auto f = compute_features(m, Precision::fp32);
            EXPECT_EQ(f.params, params) << c.file;  // parameters do not depend on the sizes
            EXPECT_GT(f.forward_flops, 0) << c.file;
        }
    }
    // GPT-2 large's learned position table stops at 1024 tokens.
    EXPECT_THROW(resolve_model(fixture("gpt2_large.json"), {1, 2048, 0}), Error);
}

TEST(HfConfig, UnknownModelTypeNamesItAndListsSupported) {
    std::string message = import_error({{"model_type", "rwkv"}, {"hidden_size", 768}});
    EXPECT_NE(message.find("'rwkv'"), std::string::npos) << message;
    for (const char* type : {"llama", "mistral", "mixtral", "qwen2", "gemma", "gpt2", "gpt_neox", "opt", "bloom",
                             "falcon", "bert", "roberta", "t5", "vit", "switch_transformers", "mamba", "mamba2",
                             "jamba", "zamba2", "falcon_h1", "bamba"})
        EXPECT_NE(message.find(type), std::string::npos) << type << " missing from: " << message;
}

TEST(HfConfig, MissingRequiredFieldIsNamed) {
    json llama = fixture("llama2_7b.json");
    llama.erase("hidden_size");
    std::string message = import_error(llama);
    EXPECT_NE(message.find("'hidden_size'"), std::string::npos) << message;
    EXPECT_NE(message.find("llama"), std::string::npos) << message;

    json t5 = fixture("t5-base.json");
    t5.erase("d_model");
    message = import_error(t5);
    EXPECT_NE(message.find("'d_model'"), std::string::npos) << message;

    // Synonyms are all named when none is present.
    json gpt2 = fixture("gpt2_med.json");
    gpt2.erase("n_embd");
    message = import_error(gpt2);
    EXPECT_NE(message.find("'n_embd'"), std::string::npos) << message;
    EXPECT_NE(message.find("'hidden_size'"), std::string::npos) << message;

    // A null field counts as missing.
    json bert = fixture("bert.json");
    bert["num_attention_heads"] = nullptr;
    message = import_error(bert);
    EXPECT_NE(message.find("'num_attention_heads'"), std::string::npos) << message;
}

TEST(HfConfig, WrongFieldTypeIsNamed) {
    json llama = fixture("llama2_7b.json");
    llama["hidden_size"] = "4096";
    std::string message = import_error(llama);
    EXPECT_NE(message.find("'hidden_size'"), std::string::npos) << message;
    EXPECT_NE(message.find("integer"), std::string::npos) << message;

    json mistral = fixture("mistral-7b-v0.1.json");
    mistral["num_key_value_heads"] = 8.5;
    message = import_error(mistral);
    EXPECT_NE(message.find("'num_key_value_heads'"), std::string::npos) << message;

    json falcon = fixture("falcon-7b.json");
    falcon["parallel_attn"] = "yes";
    message = import_error(falcon);
    EXPECT_NE(message.find("'parallel_attn'"), std::string::npos) << message;

    json gpt2 = fixture("gpt2_large.json");
    gpt2["activation_function"] = 3;
    message = import_error(gpt2);
    EXPECT_NE(message.find("'activation_function'"), std::string::npos) << message;

    json bert = fixture("bert.json");
    bert["num_hidden_layers"] = -2;
    message = import_error(bert);
    EXPECT_NE(message.find("'num_hidden_layers'"), std::string::npos) << message;

    EXPECT_NE(import_error({{"model_type", 7}}).find("model_type"), std::string::npos);
    json bad_act = fixture("bert.json");
    bad_act["hidden_act"] = "swiglu";
    EXPECT_NE(import_error(bad_act).find("swiglu"), std::string::npos);
}

TEST(HfConfig, ArchitectureDetailsFollowTheConfig) {
    // Mixtral routes each token to 2 of 8 experts in all 32 layers.
    Model mixtral = resolve_model(fixture("mixtral-8x7b-v0.1.json"), {1, 128, 0});
    EXPECT_EQ(count_layers(mixtral, "moe"), 32);
    EXPECT_EQ(count_layers(mixtral, "mlp"), 0);
    // Falcon-7B is multi-query: one KV head.
    Model falcon = resolve_model(fixture("falcon-7b.json"), {1, 128, 0});
    bool found = false;
    for (const auto& b : falcon.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention") {
                found = true;
                EXPECT_EQ(l.attrs["kv_heads"], 1);
            }
    EXPECT_TRUE(found);
    // Falcon's new decoder architecture defaults its KV heads to the attention heads, as Hugging Face does.
    json falcon40 = fixture("falcon-40b.json");
    falcon40.erase("num_kv_heads");
    EXPECT_NO_THROW(resolve_model(falcon40, {1, 128, 0}));
    // ViT's class count comes from id2label when present.
    json vit = fixture("vit-base-patch16-224.json");
    vit["id2label"] = {{"0", "cat"}, {"1", "dog"}};
    EXPECT_EQ(params_of(vit), 86567656 - 998 * 769);  // head d x classes + classes
    // ViT resizes to --image.
    Model vit384 = resolve_model(fixture("vit-base-patch16-224.json"), {2, 0, 384});
    EXPECT_EQ(vit384.domain, "vision");
    EXPECT_EQ(vit384.blocks.front().layers.front().input, (Shape{2, 3, 384, 384}));
}

// Hugging Face's BERT, LLaMA, OPT, T5 and ViT code runs query, key and value as three linears; GPT-2, NeoX,
// BLOOM and Falcon as one.
TEST(HfConfig, QueryKeyValueProjectionsFollowTheModellingCode) {
    auto projections = [](const std::string& file) {
        Model m = resolve_model(fixture(file), {1, 128, 0});
        for (const auto& b : m.blocks)
            for (const auto& l : b.layers)
                if (l.kind == "attention") return l.attrs.value("projections", std::string("fused"));
        return std::string("none");
    };
    for (const char* file : {"bert_large.json", "roberta-base.json", "llama2_7b.json", "mistral-7b-v0.1.json",
                             "opt_13.json", "t5-base.json", "vit-base-patch16-224.json", "qwen2-7b.json"})
        EXPECT_EQ(projections(file), "separate") << file;
    for (const char* file : {"gpt2_large.json", "pythia-1b.json", "bloom-560m.json", "falcon-7b.json"})
        EXPECT_EQ(projections(file), "fused") << file;
}

// MPT (llm-foundry) with biases and learned positions, as its pretrain yamls leave MPTConfig's defaults: per
// layer the GPT-2 layer (fused Wqkv with bias, out_proj, two biased LayerNorms, 4d GELU MLP), a position table of
// max_seq_len rows, tied embeddings; that is gpt2_params with MPT's vocabulary.
constexpr std::int64_t mpt_params(std::int64_t d, std::int64_t L, std::int64_t V, std::int64_t S) {
    return gpt2_params(d, L, V, S);
}

json published_config(const std::string& relative) {
    std::ifstream in(std::string(PRENET_SOURCE_DIR "/data/published/") + relative);
    if (!in) throw std::runtime_error("cannot open data/published/" + relative);
    return json::parse(in);
}

// Every run of llm-foundry's A100 benchmark tables states its exact parameter count; the configs in
// data/published/mpt/ must build those models. The benchmark's submit script sets max_seq_len to the run's
// sequence length, so the position table (and the count) grows with it.
TEST(HfConfig, MptConfigsMatchEveryLlmFoundryRun) {
    static_assert(mpt_params(768, 12, 50368, 2048) == 125311488);
    static_assert(mpt_params(4096, 32, 50368, 2048) == 6658859008);
    static_assert(mpt_params(8192, 80, 50368, 2048) == 64862437376);
    CsvTable t = read_csv_file(PRENET_SOURCE_DIR "/data/published/llm_foundry_mpt_a100.csv");
    int model = t.column("model"), seq = t.column("seq"), params = t.column("params");
    ASSERT_GE(model, 0);
    ASSERT_GE(params, 0);
    ASSERT_EQ(t.rows.size(), 139u);
    std::map<std::pair<std::string, std::int64_t>, std::int64_t> cache;  // 61 distinct (model, seq)
    for (const auto& row : t.rows) {
        std::int64_t s = std::stoll(row[seq]);
        auto key = std::make_pair(row[model], s);
        if (!cache.count(key)) {
            json config = published_config("mpt/mpt-" + row[model] + ".json");
            config["max_seq_len"] = s;
            cache[key] = params_of(config, {1, s, 0});
        }
        EXPECT_EQ(cache[key], std::stoll(row[params])) << row[model] << " at seq " << s;
    }
    EXPECT_EQ(cache.size(), 61u);
}

// mosaicml/mpt-7b as released: no biases anywhere (norms included), ALiBi instead of a position table,
// vocabulary 50432 (model card): V d + L (12 d^2 + 2 d) + d.
TEST(HfConfig, MptReleasedSevenBFollowsItsCard) {
    static_assert(50432LL * 4096 + 32 * (12LL * 4096 * 4096 + 2 * 4096) + 4096 == 6649286656);
    json config = published_config("configs/mpt-7b.json");
    EXPECT_EQ(params_of(config), 6649286656);
    Model m = resolve_model(config, {1, 8192, 0});  // ALiBi: no table bounds the sequence
    EXPECT_EQ(count_layers(m, "positional_embedding"), 0);
}

TEST(HfConfig, MptVariantsAndErrors) {
    json base = published_config("mpt/mpt-125m.json");
    const std::int64_t d = 768, L = 12;
    // Grouped-query attention: Wqkv shrinks from 3 d^2 to d (d + 2 kv hd) per layer (+ its bias).
    json gqa = base;
    gqa["attn_config"]["attn_type"] = "grouped_query_attention";
    gqa["attn_config"]["kv_n_heads"] = 4;
    EXPECT_EQ(params_of(base) - params_of(gqa), L * (2 * (d - 4 * 64) * (d + 1)));
    // Multi-query: one key and one value head.
    json mqa = base;
    mqa["attn_config"]["attn_type"] = "multiquery_attention";
    EXPECT_EQ(params_of(base) - params_of(mqa), L * (2 * (d - 64) * (d + 1)));
    // A GLU MLP adds a third d x f matrix (with its bias).
    json glu = base;
    glu["ffn_config"]["ffn_type"] = "mptglu";
    EXPECT_EQ(params_of(glu) - params_of(base), L * (d * 4 * d + 4 * d));
    // expansion_ratio inside ffn_config (as some llm-foundry yamls write it) and ffn_hidden_size.
    json inner = base;
    inner.erase("expansion_ratio");
    inner["ffn_config"]["expansion_ratio"] = 4;
    EXPECT_EQ(params_of(inner), params_of(base));
    inner["ffn_config"]["ffn_hidden_size"] = 2048;
    EXPECT_EQ(params_of(base) - params_of(inner), L * (2 * d * (4 * d - 2048) + (4 * d - 2048)));
    // Sequence beyond the learned table is an error that names it.
    EXPECT_THROW(resolve_model(base, {1, 4096, 0}), Error);
    json bad = base;
    bad["ffn_config"]["ffn_type"] = "mb_dmoe";
    EXPECT_NE(import_error(bad).find("ffn_type 'mb_dmoe'"), std::string::npos) << import_error(bad);
    bad = base;
    bad["attn_config"]["attn_impl"] = "xformers";
    EXPECT_NE(import_error(bad).find("attn_impl 'xformers'"), std::string::npos) << import_error(bad);
    bad = base;
    bad["norm_type"] = "groupnorm";
    EXPECT_NE(import_error(bad).find("norm_type 'groupnorm'"), std::string::npos) << import_error(bad);
}

// LLaMA 65B (data/published/configs/llama-65b.json, for the published-runs comparison): d 8192, 80 layers,
// 64 heads of 128, SwiGLU 22016, vocabulary 32000, untied: the paper's 65.2B.
TEST(HfConfig, Llama65BConfigFollowsItsFormula) {
    static_assert(llama_params(8192, 80, 64, 64, 128, 22016, 32000, false) == 65285660672);
    EXPECT_EQ(params_of(published_config("configs/llama-65b.json")), 65285660672);
}

namespace {
// Whether the model's attention layers run the fused kernel (all of them; none if mixed).
bool runs_flash(const Model& m) {
    int flash = 0, eager = 0;
    for (const auto& block : m.blocks)
        for (const auto& layer : block.layers)
            if (layer.kind == "attention") (layer.attrs.value("flash", false) ? flash : eager)++;
    EXPECT_GT(flash + eager, 0);
    EXPECT_TRUE(flash == 0 || eager == 0);
    return flash > 0;
}
}  // namespace

// The kernel a config names (Hugging Face attn_implementation, llm-foundry attn_impl) wins over the default
// attention kernel; an explicit --attention wins over the config.
TEST(HfConfig, AttnImplementationWinsOverTheDefaultNotOverAnExplicitAsk) {
    json config = fixture("gpt2_med.json");
    ModelInputs by_default{1, 128, 0, true}, asked_eager{1, 128, 0, false, true}, asked_flash{1, 128, 0, true, true};
    EXPECT_TRUE(runs_flash(resolve_model(config, by_default)));
    config["attn_implementation"] = "eager";
    EXPECT_FALSE(runs_flash(resolve_model(config, by_default)));
    EXPECT_TRUE(runs_flash(resolve_model(config, asked_flash)));
    config["attn_implementation"] = "sdpa";
    EXPECT_TRUE(runs_flash(resolve_model(config, ModelInputs{1, 128, 0, false})));  // the default was eager
    EXPECT_FALSE(runs_flash(resolve_model(config, asked_eager)));
    config.erase("attn_implementation");
    config["_attn_implementation"] = "flash_attention_2";
    EXPECT_TRUE(runs_flash(resolve_model(config, ModelInputs{1, 128, 0, false})));
    config["_attn_implementation"] = "paged";
    EXPECT_NE(import_error(config).find("_attn_implementation 'paged'"), std::string::npos) << import_error(config);

    json mpt = published_config("mpt/mpt-125m.json");
    mpt["attn_config"]["attn_impl"] = "torch";  // materialises the scores
    EXPECT_FALSE(runs_flash(resolve_model(mpt, {1, 128, 0, true})));
    mpt["attn_config"]["attn_impl"] = "triton";
    EXPECT_TRUE(runs_flash(resolve_model(mpt, {1, 128, 0, false})));
}

// llm-foundry's attn_impl triton is the Triton FlashAttention of 2022, a first-generation kernel; attn_impl flash
// keeps the default generation, and an explicit --attention flash wins over the config's triton.
TEST(HfConfig, MptTritonAttentionIsTheFirstGeneration) {
    auto generations = [](const Model& m) {
        std::set<int> g;
        for (const auto& block : m.blocks)
            for (const auto& layer : block.layers)
                if (layer.kind == "attention") g.insert(layer.attrs.value("flash_generation", 2));
        return g;
    };
    json mpt = published_config("mpt/mpt-125m.json");
    mpt["attn_config"]["attn_impl"] = "triton";
    EXPECT_EQ(generations(resolve_model(mpt, {1, 128, 0, true})), std::set<int>{1});
    ModelInputs asked_flash{1, 128, 0, true, true};
    EXPECT_EQ(generations(resolve_model(mpt, asked_flash)), std::set<int>{2});
    mpt["attn_config"]["attn_impl"] = "flash";
    EXPECT_EQ(generations(resolve_model(mpt, {1, 128, 0, true})), std::set<int>{2});
}

// --- Families added for issue #16. Each count is the checkpoint's own, derived from its tensor shapes in the
// comment, and agrees with the figure its publisher gives (cited).

// google/gemma-2-2b: embeddings 256000 x 2304 (tied); per layer q 2304 x 2048, k and v 2304 x 1024, o 2048 x 2304,
// gate/up/down 3 x 2304 x 9216 and four RMSNorms (input, post-attention, pre- and post-feedforward) 4 x 2304;
// final norm 2304. 2,614,341,888: the Hub's safetensors parameter count for google/gemma-2-2b.
TEST(HfConfigNewFamilies, Gemma2) {
    EXPECT_EQ(fixture_params("gemma-2-2b.json"),
              256000LL * 2304 + 26 * (2 * 2304 * 2048 + 2 * 2304 * 1024 + 3 * 2304 * 9216 + 4 * 2304) + 2304);
    EXPECT_EQ(fixture_params("gemma-2-2b.json"), 2614341888LL);
    // Alternating local (sliding 4096) and global layers: half of the 26 attention layers are windowed.
    Model m = resolve_model(fixture("gemma-2-2b.json"), {1, 8192, 0});
    std::int64_t local = 0, global = 0;
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention") (l.attrs.value("window", 0) == 4096 ? local : global) += b.repeat;
    EXPECT_EQ(local, 13);
    EXPECT_EQ(global, 13);
    EXPECT_EQ(count_layers(m, "attention"), 26);
}

// google/gemma-3-1b-pt: embeddings 262144 x 1152 (tied); per layer q 1152 x 1024, k and v 1152 x 256, o 1024 x 1152,
// QK-norm 2 x 256, MLP 3 x 1152 x 6912, four norms 4 x 1152; final norm. 999,885,952: the Hub's count ("1B").
TEST(HfConfigNewFamilies, Gemma3Text) {
    EXPECT_EQ(fixture_params("gemma-3-1b-pt.json"),
              262144LL * 1152 + 26 * (2 * 1152 * 1024 + 2 * 1152 * 256 + 2 * 256 + 3 * 1152 * 6912 + 4 * 1152) + 1152);
    EXPECT_EQ(fixture_params("gemma-3-1b-pt.json"), 999885952LL);
    // Five local (512) layers per global one: layers 5, 11, 17, 23 are global.
    Model m = resolve_model(fixture("gemma-3-1b-pt.json"), {1, 2048, 0});
    std::int64_t local = 0;
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention" && l.attrs.value("window", 0) == 512) local += b.repeat;
    EXPECT_EQ(local, 22);
    // A multimodal gemma3 config imports its text model (text_config) and says the vision tower is left out.
    json mm = {{"model_type", "gemma3"}, {"torch_dtype", "bfloat16"}, {"text_config", fixture("gemma-3-1b-pt.json")}};
    Model text = resolve_model(mm, {1, 128, 0});
    EXPECT_EQ(compute_features(text, Precision::fp32).params, 999885952LL);
    ASSERT_EQ(text.notes.size(), 1u);
    EXPECT_NE(text.notes[0].find("vision tower"), std::string::npos);
}

// microsoft/Phi-3-mini-4k-instruct: untied 32064 x 3072 embeddings and head; per layer fused qkv 3072 x 9216,
// o 3072 x 3072, fused gate_up 3072 x 16384 and down 8192 x 3072, two norms. 3,821,079,552 ("3.8B", Phi-3
// technical report; the Hub's count).
TEST(HfConfigNewFamilies, Phi3) {
    EXPECT_EQ(fixture_params("phi-3-mini-4k-instruct.json"),
              2 * 32064LL * 3072 + 32 * (4 * 3072LL * 3072 + 3 * 3072LL * 8192 + 2 * 3072) + 3072);
    EXPECT_EQ(fixture_params("phi-3-mini-4k-instruct.json"), 3821079552LL);
    Model m = resolve_model(fixture("phi-3-mini-4k-instruct.json"), {1, 4096, 0});
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention") {
                EXPECT_EQ(l.attrs.value("window", 0), 2047);  // sliding_window on every layer
                EXPECT_FALSE(l.attrs.contains("projections"));  // fused qkv_proj
            }
}

// Qwen/Qwen3-0.6B: tied 151936 x 1024; per layer q 1024 x 2048, k and v 1024 x 1024, o 2048 x 1024, QK-norm 2 x 128,
// MLP 3 x 1024 x 3072, two norms. 596,049,920: the model card's 0.6B total and 0.44B non-embedding
// (440,467,456 = 596,049,920 - 151936 x 1024).
TEST(HfConfigNewFamilies, Qwen3) {
    EXPECT_EQ(fixture_params("qwen3-0.6b.json"), llama_params(1024, 28, 16, 8, 128, 3072, 151936, true) + 28 * 256);
    EXPECT_EQ(fixture_params("qwen3-0.6b.json"), 596049920LL);
}

// Qwen/Qwen1.5-MoE-A2.7B: untied 151936 x 2048; per layer attention with q/k/v biases 3 (2048^2 + 2048) + o 2048^2,
// 60 experts 3 x 2048 x 1408, router 2048 x 60, shared expert 3 x 2048 x 5632 and its gate 2048 x 1, two norms.
// 14,315,784,192: the model card's "14.3B parameters in total".
TEST(HfConfigNewFamilies, Qwen2Moe) {
    std::int64_t d = 2048;
    std::int64_t layer = 3 * (d * d + d) + d * d + 60 * 3 * d * 1408 + d * 60 + 3 * d * 5632 + d + 2 * d;
    EXPECT_EQ(fixture_params("qwen1.5-moe-a2.7b.json"), 2 * 151936LL * d + 24 * layer + d);
    EXPECT_EQ(fixture_params("qwen1.5-moe-a2.7b.json"), 14315784192LL);
}

// Qwen/Qwen3-30B-A3B: untied 151936 x 2048; per layer q 2048 x 4096, k and v 2048 x 512, o 4096 x 2048, QK-norm,
// 128 experts 3 x 2048 x 768, router 2048 x 128, two norms. 30,532,122,624: the model card's 30.5B total.
TEST(HfConfigNewFamilies, Qwen3Moe) {
    std::int64_t d = 2048;
    std::int64_t layer = 2 * d * 4096 + 2 * d * 512 + 256 + 128 * 3 * d * 768 + d * 128 + 2 * d;
    EXPECT_EQ(fixture_params("qwen3-30b-a3b.json"), 2 * 151936LL * d + 48 * layer + d);
    EXPECT_EQ(fixture_params("qwen3-30b-a3b.json"), 30532122624LL);
}

// deepseek-ai/DeepSeek-V3: untied 129280 x 7168; MLA per layer q_a 7168 x 1536 + norm, q_b 1536 x 128 x 192,
// kv_a 7168 x 576 + norm 512, kv_b 512 x 128 x 256, o 128 x 128 x 7168; 3 dense layers (MLP 3 x 7168 x 18432) and
// 58 MoE layers (256 routed + 1 shared expert of 3 x 7168 x 2048, router 256 x 7168). 671,026,404,352: the paper's
// "671B total parameters" (arXiv:2412.19437); the Hub's 685B adds the 14B multi-token-prediction module, which is
// not part of the Hugging Face model. The router's e_score_correction_bias is a buffer, not counted.
TEST(HfConfigNewFamilies, DeepSeekV3) {
    std::int64_t d = 7168;
    std::int64_t mla = d * 1536 + 1536 + 1536LL * 128 * 192 + d * 576 + 512 + 512LL * 128 * 256 + 128LL * 128 * d;
    std::int64_t dense = mla + 2 * d + 3 * d * 18432, moe = mla + 2 * d + 257 * 3 * d * 2048 + 256 * d;
    EXPECT_EQ(fixture_params("deepseek-v3.json"), 2 * 129280LL * d + 3 * dense + 58 * moe + d);
    EXPECT_EQ(fixture_params("deepseek-v3.json"), 671026404352LL);
    Model m = resolve_model(fixture("deepseek-v3.json"), {1, 128, 0});
    EXPECT_EQ(count_layers(m, "mla_attention"), 61);
    EXPECT_EQ(count_layers(m, "moe"), 58);
    EXPECT_EQ(count_layers(m, "mlp"), 3);
}

// bigcode/gpt_bigcode-santacoder: GPT-2 with multi-query attention: c_attn 2048 x (2048 + 2 x 128) + bias;
// 1,124,886,528 ("1.1B", SantaCoder, arXiv:2301.03988).
TEST(HfConfigNewFamilies, GptBigCode) {
    std::int64_t d = 2048, kv = 2 * 128;
    std::int64_t layer = d * (d + kv) + d + kv + d * d + d + 4 * d + 2 * 4 * d * d + 4 * d + d;
    EXPECT_EQ(fixture_params("gpt_bigcode-santacoder.json"), 49280LL * d + 2048LL * d + 24 * layer + 2 * d);
    EXPECT_EQ(fixture_params("gpt_bigcode-santacoder.json"), 1124886528LL);
}

// openai/whisper-tiny: 37,760,640 parameters in the checkpoint (the Hub's count, "39M" in the Whisper paper's
// table rounded with the encoder table). Of them the encoder's 1500 x 384 sinusoidal position table is frozen
// (requires_grad False in transformers): 37,760,640 - 576,000 = 37,184,640 trainable, what PreNeT counts.
// Encoder: conv1 80 x 384 x 3 + 384, conv2 384 x 384 x 3 + 384, 4 layers of [q, v, o with bias, k without,
// LN, fc1, fc2, LN], final LN. Decoder: tokens 51865 x 384, positions 448 x 384, 4 layers with cross-attention,
// final LN; proj_out tied.
TEST(HfConfigNewFamilies, Whisper) {
    std::int64_t d = 384, attn = 4 * d * d + 3 * d, mlp = 2 * d * 1536 + 1536 + d;
    std::int64_t encoder = 80 * d * 3 + d + d * d * 3 + d + 4 * (attn + mlp + 4 * d) + 2 * d;
    std::int64_t decoder = 51865 * d + 448 * d + 4 * (2 * attn + mlp + 6 * d) + 2 * d;
    EXPECT_EQ(fixture_params("whisper-tiny.json"), encoder + decoder);
    EXPECT_EQ(fixture_params("whisper-tiny.json"), 37760640LL - 1500 * 384);
    Model m = resolve_model(fixture("whisper-tiny.json"), {2, 0, 0});
    EXPECT_EQ(m.domain, "speech");
    EXPECT_EQ(m.blocks.front().layers.front().input, (Shape{2, 80, 3000}));
}

// openai/clip-vit-base-patch32's vision tower (CLIPVisionModel): bias-free patch conv 3 x 32 x 32 x 768, class
// embedding 768, positions 50 x 768, pre-LN, 12 layers of 7,087,872, post-LN: 87,456,000 (the vision half of the
// checkpoint's 151,277,313, without the 768 x 512 visual projection).
// google/siglip-base-patch16-224's (SiglipVisionModel): patch conv 3 x 16 x 16 x 768 + 768, positions 196 x 768,
// 12 layers, post-LN, attention-pooling head (probe 768, nn.MultiheadAttention 4 x 768^2 + 4 x 768, LN, MLP):
// 92,884,224.
TEST(HfConfigNewFamilies, VisionTowers) {
    std::int64_t d = 768, layer = 4 * (d * d + d) + 2 * d * 3072 + 3072 + d + 4 * d;
    EXPECT_EQ(fixture_params("clip-vit-base-patch32.json"), 3 * 32 * 32 * d + d + 50 * d + 2 * d + 12 * layer + 2 * d);
    EXPECT_EQ(fixture_params("clip-vit-base-patch32.json"), 87456000LL);
    std::int64_t head = d + 4 * (d * d + d) + 2 * d + 2 * d * 3072 + 3072 + d;
    EXPECT_EQ(fixture_params("siglip-base-patch16-224.json"), 3 * 16 * 16 * d + d + 196 * d + 12 * layer + 2 * d + head);
    EXPECT_EQ(fixture_params("siglip-base-patch16-224.json"), 92884224LL);
    Model clip = resolve_model(fixture("clip-vit-base-patch32.json"), {1, 0, 0});
    ASSERT_EQ(clip.notes.size(), 1u);
    EXPECT_NE(clip.notes[0].find("text tower"), std::string::npos);
}

// mosaicml/mpt-7b: tied 50432 x 4096, per layer Wqkv 4096 x 12288, out 4096^2, FFN 2 x 4096 x 16384, two bias-free
// LayerNorms: 6,649,286,656 ("6.7B", the model card).
TEST(HfConfigNewFamilies, Mpt) {
    EXPECT_EQ(fixture_params("mpt-7b.json"), 50432LL * 4096 + 32 * (12 * 4096LL * 4096 + 2 * 4096) + 4096);
    EXPECT_EQ(fixture_params("mpt-7b.json"), 6649286656LL);
}

// torch_dtype is the default precision when none is asked for; --precision wins; "auto" and absence say nothing.
TEST(HfConfigNewFamilies, TorchDtype) {
    EXPECT_EQ(document_dtype(fixture("qwen3-0.6b.json")), "bf16");
    EXPECT_EQ(document_dtype(fixture("whisper-tiny.json")), "fp32");
    EXPECT_EQ(document_dtype(json{{"model_type", "llama"}, {"torch_dtype", "float16"}}), "fp16");
    EXPECT_EQ(document_dtype(json{{"model_type", "llama"}, {"dtype", "auto"}}), "");
    EXPECT_EQ(document_dtype(json{{"model_type", "llama"}}), "");
    EXPECT_THROW(document_dtype(json{{"model_type", "llama"}, {"torch_dtype", "int4"}}), Error);
    EXPECT_THROW(document_dtype(json{{"model_type", "llama"}, {"torch_dtype", 16}}), Error);
}

// Qwen2's use_sliding_window windows the layers from max_window_layers on; layer_types wins over any rule.
TEST(HfConfigNewFamilies, SlidingWindowRules) {
    json q = fixture("qwen2-7b.json");
    q["use_sliding_window"] = true, q["sliding_window"] = 4096, q["max_window_layers"] = 20;
    Model m = resolve_model(q, {1, 8192, 0});
    std::int64_t local = 0;
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention" && l.attrs.value("window", 0) == 4096) local += b.repeat;
    EXPECT_EQ(local, q["num_hidden_layers"].get<std::int64_t>() - 20);
    json g = fixture("gemma-2-2b.json");
    g["layer_types"] = json::array();
    for (int i = 0; i < 26; ++i) g["layer_types"].push_back(i < 2 ? "full_attention" : "sliding_attention");
    Model mg = resolve_model(g, {1, 128, 0});
    local = 0;
    for (const auto& b : mg.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention" && l.attrs.contains("window")) local += b.repeat;
    EXPECT_EQ(local, 24);
    g["layer_types"] = json::array({"sliding_attention"});
    EXPECT_NE(import_error(g).find("layer_types"), std::string::npos);
    // A windowed layer's fused attention does less work than a global one at a long sequence.
    json mistral = fixture("mistral-7b-v0.1.json");
    auto flops = [](const json& c) {
        return compute_features(resolve_model(c, {1, 16384, 0, true}), Precision::bf16).forward_flops;
    };
    json unwindowed = mistral;
    unwindowed.erase("sliding_window");
    EXPECT_LT(flops(mistral), flops(unwindowed));
}

TEST(HfConfigNewFamilies, BadConfigsNameTheField) {
    json d = fixture("deepseek-v3.json");
    d.erase("kv_lora_rank");
    EXPECT_NE(import_error(d).find("kv_lora_rank"), std::string::npos);
    json w = fixture("whisper-tiny.json");
    w["decoder_attention_heads"] = 8;
    EXPECT_NE(import_error(w).find("heads"), std::string::npos);
    json c = {{"model_type", "clip"}};
    EXPECT_NE(import_error(c).find("vision_config"), std::string::npos);
    json m = fixture("qwen1.5-moe-a2.7b.json");
    m["mlp_only_layers"] = json::array({99});
    EXPECT_NE(import_error(m).find("mlp_only_layers"), std::string::npos);
    json g3 = {{"model_type", "gemma3"}};
    EXPECT_NE(import_error(g3).find("text_config"), std::string::npos);
}

// deepseek-ai/DeepSeek-V2-Lite: q_lora_rank null, so one full-rank q_proj 2048 x 16 x 192 and no query bottleneck
// (it was refused: "field 'q_lora_rank' must be positive, got 0"); kv_a 2048 x 576 + norm 512, kv_b 512 x 16 x 256,
// o 16 x 128 x 2048; layer 0 dense (MLP 3 x 2048 x 10944), 26 MoE layers (64 routed experts and 2 shared ones of
// 3 x 2048 x 1408, router 64 x 2048); untied 102400 x 2048. 15,706,484,224: the model card's "15.7B total".
// Per token it runs the 6 routed experts it picks: "2.4B activated" (the card), the forward MACs per token.
TEST(HfConfigNewFamilies, DeepSeekV2LiteWithoutQueryBottleneck) {
    std::int64_t d = 2048;
    std::int64_t mla = d * 16 * 192 + d * 576 + 512 + 512LL * 16 * 256 + 16LL * 128 * d;
    std::int64_t dense = mla + 2 * d + 3 * d * 10944, moe = mla + 2 * d + 66 * 3 * d * 1408 + 64 * d;
    EXPECT_EQ(fixture_params("deepseek-v2-lite.json"), 2 * 102400LL * d + dense + 26 * moe + d);
    EXPECT_EQ(fixture_params("deepseek-v2-lite.json"), 15706484224LL);
    Model m = resolve_model(fixture("deepseek-v2-lite.json"), {1, 128, 0});
    EXPECT_EQ(count_layers(m, "mla_attention"), 27);
    EXPECT_EQ(count_layers(m, "moe"), 26);
    EXPECT_EQ(count_layers(m, "mlp"), 1);
    ModelFeatures f = compute_features(m, Precision::bf16);
    EXPECT_NEAR(f.macs / 128 / 1e9, 2.4, 0.1);
}

// A layer count is checked against the layer limit when it is read, before a per-layer table is built or looped
// over (qwen2's max_window_layers, layer_types, mlp_only_layers, DeepSeek's moe_layer_freq): 2^31 - 1 layers took
// 5-12 s and ~530 MB to be refused by the spec's check afterwards, whose message did not name the field.
TEST(HfConfigLimits, PerLayerTablesWaitForTheLayerLimit) {
    const std::int64_t huge = (std::int64_t{1} << 31) - 1;
    json qwen = fixture("qwen2-7b.json");
    qwen["use_sliding_window"] = true, qwen["sliding_window"] = 4096, qwen["max_window_layers"] = 0;
    json gemma = fixture("gemma-2-2b.json");
    gemma["layer_types"] = json::array({"sliding_attention"});
    json moe = fixture("qwen1.5-moe-a2.7b.json");
    moe["mlp_only_layers"] = json::array({0});
    json deepseek = fixture("deepseek-v2-lite.json");
    deepseek["moe_layer_freq"] = 2;
    for (json config : {qwen, gemma, moe, deepseek}) {
        config["num_hidden_layers"] = huge;
        std::string e = import_error(config);
        EXPECT_NE(e.find("'num_hidden_layers' is 2147483647, over 100000 (the limit on layers)"), std::string::npos)
            << config["model_type"] << ": " << e;
    }
    json t5 = fixture("t5-base.json");
    t5["num_decoder_layers"] = huge;
    EXPECT_NE(import_error(t5).find("'num_decoder_layers'"), std::string::npos) << import_error(t5);
    json gpt2 = fixture("gpt2_med.json");
    gpt2["n_layer"] = huge;
    EXPECT_NE(import_error(gpt2).find("'n_layer'"), std::string::npos) << import_error(gpt2);
}

// num_experts 0 is dense in Hugging Face's Qwen2-MoE / Qwen3-MoE code (a sparse block only where num_experts > 0):
// imported so, with a note that num_experts_per_tok is unused. Where 0 experts is no such signal (Mixtral's
// num_local_experts, DeepSeek's n_routed_experts, whose null is the dense one) experts per token past the
// experts is refused, not quietly a dense model.
TEST(HfConfigNewFamilies, ZeroExperts) {
    json qwen = fixture("qwen1.5-moe-a2.7b.json");
    qwen["num_experts"] = 0;
    Model m = resolve_model(qwen, {1, 128, 0});
    EXPECT_EQ(count_layers(m, "moe"), 0);
    EXPECT_EQ(count_layers(m, "mlp"), qwen["num_hidden_layers"].get<std::int64_t>());
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].find("num_experts is 0"), std::string::npos) << m.notes[0];
    json mixtral = fixture("mixtral-8x7b-v0.1.json");
    mixtral["num_local_experts"] = 0;
    EXPECT_NE(import_error(mixtral).find("experts per token (2) must be between 1 and the number of experts (0)"),
              std::string::npos) << import_error(mixtral);
    json deepseek = fixture("deepseek-v2-lite.json");
    deepseek["n_routed_experts"] = 0;
    EXPECT_NE(import_error(deepseek).find("'n_routed_experts' is 0"), std::string::npos) << import_error(deepseek);
    deepseek["n_routed_experts"] = nullptr;
    EXPECT_EQ(count_layers(resolve_model(deepseek, {1, 128, 0}), "moe"), 0);
}

// The fuzz seeds with per-layer tables (fuzz/seeds/hf_config/: layer_types, max_window_layers, mlp_only_layers,
// moe_layer_freq, num_experts 0) import, so the fuzzer starts from configs that reach those tables.
TEST(HfConfigLimits, PerLayerTableSeedsImport) {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(PRENET_SOURCE_DIR "/fuzz/seeds/hf_config/")) {
        ++count;
        json config = prenet::testing::source_json("fuzz/seeds/hf_config/" + entry.path().filename().string());
        EXPECT_EQ(import_error(config), "") << entry.path();
    }
    EXPECT_GE(count, 5);
}

namespace {

// Attention layers (executions) whose attribute `key` is set, and whose `position` is none.
std::int64_t attention_with(const Model& m, const std::string& key) {
    std::int64_t n = 0;
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention" && l.attrs.contains(key)) n += b.repeat;
    return n;
}

std::int64_t nope_attention(const Model& m) {
    std::int64_t n = 0;
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention" && l.attrs.value("position", "") == "none") n += b.repeat;
    return n;
}

}  // namespace

// meta-llama/Llama-4-Scout-17B-16E (Llama4ForConditionalGeneration; its language model): untied 202048 x 5120; per
// layer q and o 5120 x 5120, k and v 5120 x 1024 (GQA 40/8 heads of 128), 16 experts and a shared expert of
// 3 x 5120 x 8192, router 5120 x 16, two norms; the L2 QK-norm has no weights. 107,769,861,120: the Hub's
// 108,641,793,536 for the whole checkpoint less its vision tower and projector (871,932,416), "109B" in the card.
TEST(HfConfigNewFamilies, Llama4Scout) {
    std::int64_t d = 5120, expert = 3 * d * 8192;
    std::int64_t layer = 2 * d * d + 2 * d * 1024 + 17 * expert + d * 16 + 2 * d;
    EXPECT_EQ(fixture_params("llama-4-scout-17b-16e.json"), 2 * 202048LL * d + 48 * layer + d);
    EXPECT_EQ(fixture_params("llama-4-scout-17b-16e.json"), 108641793536LL - 871932416LL);
    Model m = resolve_model(fixture("llama-4-scout-17b-16e.json"), {1, 16384, 0});
    EXPECT_EQ(count_layers(m, "moe"), 48);
    EXPECT_EQ(count_layers(m, "mlp"), 0);
    // no_rope_layers: three chunked RoPE layers (with QK-norm) per global NoPE layer (3, 7, ..., 47).
    EXPECT_EQ(attention_with(m, "chunked"), 36);
    EXPECT_EQ(attention_with(m, "qk_norm"), 36);
    EXPECT_EQ(nope_attention(m), 12);
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention" && l.attrs.contains("chunked")) EXPECT_EQ(l.attrs.value("window", 0), 8192);
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].find("vision tower"), std::string::npos);
    EXPECT_EQ(document_dtype(fixture("llama-4-scout-17b-16e.json")), "bf16");
    // The rule without the per-layer lists (interleave_moe_layer_step, no_rope_layer_interval) builds the same model.
    json rule = fixture("llama-4-scout-17b-16e.json");
    rule["text_config"].erase("moe_layers"), rule["text_config"].erase("no_rope_layers");
    Model by_rule = resolve_model(rule, {1, 16384, 0});
    EXPECT_EQ(compute_features(by_rule, Precision::bf16).forward_flops, compute_features(m, Precision::bf16).forward_flops);
    // Chunked attention costs less than full attention over the same tokens.
    json unchunked = rule;
    unchunked["text_config"]["attention_chunk_size"] = 1 << 20;
    auto flops = [](const json& c) {
        return compute_features(resolve_model(c, {1, 16384, 0, true}), Precision::bf16).forward_flops;
    };
    EXPECT_LT(flops(rule), flops(unchunked));
}

// meta-llama/Llama-4-Maverick-17B-128E's language model (llama4_text): MoE layers 1, 3, ..., 47 with 128 experts and
// the shared one, dense layers of 3 x 5120 x 16384 between them, no QK-norm. 400,711,848,960: the Hub's
// 401,583,781,376 less the vision tower and projector (871,932,416); "400B" in Meta's card.
TEST(HfConfigNewFamilies, Llama4MaverickInterleavesDenseAndMoeLayers) {
    std::int64_t d = 5120, attention = 2 * d * d + 2 * d * 1024;
    std::int64_t moe = attention + 129 * 3 * d * 8192 + d * 128 + 2 * d, dense = attention + 3 * d * 16384 + 2 * d;
    EXPECT_EQ(fixture_params("llama-4-maverick-17b-128e-text.json"), 2 * 202048LL * d + 24 * moe + 24 * dense + d);
    EXPECT_EQ(fixture_params("llama-4-maverick-17b-128e-text.json"), 401583781376LL - 871932416LL);
    Model m = resolve_model(fixture("llama-4-maverick-17b-128e-text.json"), {1, 128, 0});
    EXPECT_EQ(count_layers(m, "moe"), 24);
    EXPECT_EQ(count_layers(m, "mlp"), 24);
    EXPECT_EQ(attention_with(m, "qk_norm"), 0);
    EXPECT_EQ(attention_with(m, "chunked"), 36);
    // The odd layers are the sparse ones: the first block's first layer is dense.
    ASSERT_FALSE(m.blocks.empty());
    bool first_is_dense = false;
    for (const auto& l : m.blocks[1].layers)
        if (l.kind == "mlp" || l.kind == "moe") { first_is_dense = l.kind == "mlp"; break; }
    EXPECT_TRUE(first_is_dense);
    // layer_types (transformers >= 4.54) names the chunked layers where a config has it.
    json typed = fixture("llama-4-maverick-17b-128e-text.json");
    typed["layer_types"] = json::array();
    for (int i = 0; i < 48; ++i) typed["layer_types"].push_back(i < 8 ? "chunked_attention" : "full_attention");
    EXPECT_EQ(attention_with(resolve_model(typed, {1, 128, 0}), "chunked"), 8);
    // attention_chunk_size null: no chunks, the RoPE layers still rotary and the others NoPE.
    json unchunked = fixture("llama-4-maverick-17b-128e-text.json");
    unchunked["attention_chunk_size"] = nullptr;
    Model full = resolve_model(unchunked, {1, 128, 0});
    EXPECT_EQ(attention_with(full, "chunked"), 0);
    EXPECT_EQ(attention_with(full, "window"), 0);
    EXPECT_EQ(nope_attention(full), 12);
    // A moe_layers list off the interleave rule is followed as it is.
    json c = fixture("llama-4-maverick-17b-128e-text.json");
    c["moe_layers"] = json::array({0, 1, 2});
    Model listed = resolve_model(c, {1, 128, 0});
    EXPECT_EQ(count_layers(listed, "moe"), 3);
    EXPECT_EQ(count_layers(listed, "mlp"), 45);
}

TEST(HfConfigNewFamilies, Llama4BadConfigsNameTheField) {
    json base = fixture("llama-4-maverick-17b-128e-text.json");
    auto error_with = [&](const char* key, const json& value) {
        json c = base;
        c[key] = value;
        return import_error(c);
    };
    EXPECT_NE(error_with("moe_layers", json::array({48})).find("'moe_layers' holds 48"), std::string::npos);
    EXPECT_NE(error_with("moe_layers", 3).find("'moe_layers' must be a list"), std::string::npos);
    EXPECT_NE(error_with("no_rope_layers", json::array({1, 0})).find("'no_rope_layers' must list"), std::string::npos);
    json two(48, 1);
    two[5] = 2;
    EXPECT_NE(error_with("no_rope_layers", two).find("'no_rope_layers' holds 2"), std::string::npos);
    EXPECT_NE(error_with("interleave_moe_layer_step", 0).find("'interleave_moe_layer_step'"), std::string::npos);
    EXPECT_NE(error_with("attention_chunk_size", 0).find("'attention_chunk_size'"), std::string::npos);
    EXPECT_NE(error_with("no_rope_layer_interval", 0).find("'no_rope_layer_interval'"), std::string::npos);
    EXPECT_NE(error_with("layer_types", json::array({"sliding_attention"})).find("'layer_types'"), std::string::npos);
    EXPECT_NE(error_with("num_experts_per_tok", 200).find("experts per token (200)"), std::string::npos);
    json no_text = {{"model_type", "llama4"}};
    EXPECT_NE(import_error(no_text).find("text_config"), std::string::npos);
    json huge = base;
    huge["num_hidden_layers"] = (std::int64_t{1} << 31) - 1;
    EXPECT_NE(import_error(huge).find("'num_hidden_layers' is 2147483647"), std::string::npos);
}

// allenai/OLMo-2-1124-7B: untied 100352 x 4096; per layer q, k, v, o 4096 x 4096, QK-norm weights over the whole
// query and key projections (2 x 4096), MLP 3 x 4096 x 11008, and its two norms after the attention and the MLP
// (none before them). 7,298,617,344: the Hub's safetensors total.
TEST(HfConfigNewFamilies, Olmo2NormsEachSublayersOutput) {
    std::int64_t d = 4096;
    EXPECT_EQ(fixture_params("olmo-2-1124-7b.json"), 2 * 100352LL * d + 32 * (4 * d * d + 2 * d + 3 * d * 11008 + 2 * d) + d);
    EXPECT_EQ(fixture_params("olmo-2-1124-7b.json"), 7298617344LL);
    Model m = resolve_model(fixture("olmo-2-1124-7b.json"), {1, 128, 0});
    EXPECT_EQ(count_layers(m, "rmsnorm"), 2 * 32 + 1);
    // Each layer: attention, its norm, the residual add, then the MLP, its norm, the residual add.
    std::vector<std::string> kinds;
    for (const auto& l : m.blocks[1].layers) kinds.push_back(l.kind);
    EXPECT_EQ(kinds, (std::vector<std::string>{"attention", "rmsnorm", "residual_add", "mlp", "rmsnorm", "residual_add"}));
}

// BLOOM's released configs say hidden_dropout 0.0 (no dropout layer); a training config's 0.1 (Megatron-DeepSpeed's
// default, as BLOOM was trained) adds them, with the same parameters.
TEST(HfConfigNewFamilies, BloomReadsItsDropout) {
    json config = fixture("bloom-560m.json");
    EXPECT_EQ(count_layers(resolve_model(config, {1, 128, 0}), "dropout"), 0);
    config["hidden_dropout"] = 0.1;
    Model trained = resolve_model(config, {1, 128, 0});
    EXPECT_GE(count_layers(trained, "dropout"), 2 * 24);  // after attention and after the MLP of each of 24 layers
    EXPECT_EQ(params_of(config), 559214592);
    config["hidden_dropout"] = 1.5;
    EXPECT_NE(import_error(config).find("dropout"), std::string::npos);
}
