// Vision-language configs (importers/vision_language.hpp): the parameter counts match the published totals (each
// also derived from its parts, so a wrong fixture and a wrong importer cannot agree by accident), the image tokens
// follow each model's patching, and bad configs and sizes are refused naming what is wrong.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "importers/resolve.hpp"
#include "importers/vision_language.hpp"
#include "ops/features.hpp"
#include "ops/finetune.hpp"
#include "test-helpers.hpp"

using namespace prenet;

namespace {

json fixture(const std::string& file) { return prenet::testing::source_json("tests/fixtures/hf/" + file); }

std::int64_t params_of(const json& config, ModelInputs inputs = {1, 4096, 0}) {
    return compute_features(resolve_model(config, inputs), Precision::fp32).params;
}

ImageTokens tokens_of(const std::string& file, std::int64_t image = 0) {
    return image_tokens(vision_language_spec_from_hf_config(fixture(file), file), image);
}

std::string error_of(const json& config, ModelInputs inputs = {1, 4096, 0}) {
    return prenet::testing::import_error(config, inputs);
}

// Llama-style decoder (RMSNorm, SwiGLU, no biases): per layer q d (h hd), k and v d (kv hd), o (h hd) d,
// gate/up/down 3 d f, two norms 2d; final norm d; embeddings V d (twice unless tied).
constexpr std::int64_t llama(std::int64_t d, std::int64_t L, std::int64_t h, std::int64_t kv, std::int64_t hd,
                             std::int64_t f, std::int64_t V, bool tied) {
    return L * (d * h * hd + 2 * d * kv * hd + h * hd * d + 3 * d * f + 2 * d) + d + V * d * (tied ? 1 : 2);
}
// Qwen2 adds biases on q, k and v.
constexpr std::int64_t qwen2(std::int64_t d, std::int64_t L, std::int64_t h, std::int64_t kv, std::int64_t f,
                             std::int64_t V, bool tied) {
    return llama(d, L, h, kv, d / h, f, V, tied) + L * (d + 2 * kv * (d / h));
}
// A ViT layer: q, k, v, o with biases 4 (d^2 + d), two LayerNorms 4d, MLP d f + f + f d + d.
constexpr std::int64_t vit_layer(std::int64_t d, std::int64_t f) { return 4 * (d * d + d) + 4 * d + 2 * d * f + f + d; }
// CLIP's tower at image s, patch p: bias-free patch conv 3 p^2 d, class token d, (s/p)^2 + 1 positions, the
// pre- and post-LayerNorms 4d.
constexpr std::int64_t clip(std::int64_t d, std::int64_t L, std::int64_t f, std::int64_t p, std::int64_t s) {
    return 3 * p * p * d + d + ((s / p) * (s / p) + 1) * d + 4 * d + L * vit_layer(d, f);
}
// SigLIP's tower without its head: patch conv with bias 3 p^2 d + d, (s/p)^2 positions, post-LayerNorm 2d.
constexpr std::int64_t siglip(std::int64_t d, std::int64_t L, std::int64_t f, std::int64_t p, std::int64_t s) {
    return 3 * p * p * d + d + (s / p) * (s / p) * d + 2 * d + L * vit_layer(d, f);
}
// Qwen's merger: a norm (n weights), linear 4d -> 4d with bias, linear 4d -> o with bias.
constexpr std::int64_t merger(std::int64_t d, std::int64_t n, std::int64_t o) {
    return n + 16 * d * d + 4 * d + 4 * d * o + o;
}

}  // namespace

TEST(VisionLanguage, Llava15ParamsMatchThePublishedCount) {
    // Vicuna-7B (Llama-2-7B at 32,064 tokens) + CLIP ViT-L/14-336 + the two-layer projector 1024 -> 4096 -> 4096.
    // 7,063,427,072: sum(p.numel()) of LlavaForConditionalGeneration(llava-hf/llava-1.5-7b-hf's config), as
    // public tests of it assert (the model card: 7.06B).
    constexpr std::int64_t expected = llama(4096, 32, 32, 32, 128, 11008, 32064, false) + clip(1024, 24, 4096, 14, 336) +
                                      (1024 * 4096 + 4096) + (4096 * 4096 + 4096);
    static_assert(expected == 7063427072);
    EXPECT_EQ(params_of(fixture("llava-1.5-7b-hf.json")), expected);
}

// FLOPs against the independent 2 N per token count (Kaplan et al. 2020): the weight multiply-accumulates of one
// LLaVA-1.5 sample are its tower's parameters once per patch token (576 + the class token), its projector's once
// per image token and the language model's (less the input table, a lookup) once per sequence token, within the
// norms' and biases' share (they are no products); the attention scores add 2 x seq^2 x width per layer (the causal
// half for the language model), a few percent of the forward FLOPs at 640 tokens.
TEST(VisionLanguage, Llava15ForwardFlopsAreTwoNPerToken) {
    ModelFeatures f = compute_features(resolve_model(fixture("llava-1.5-7b-hf.json"), {1, 640, 336, true}), Precision::bf16);
    const double lm = double(llama(4096, 32, 32, 32, 128, 11008, 32064, false)) - 32064.0 * 4096;
    const double tower = double(clip(1024, 24, 4096, 14, 336)) - 577.0 * 1024;  // less the position table (an add)
    const double projector = (1024.0 * 4096 + 4096) + (4096.0 * 4096 + 4096);
    const double linear = lm * 640 + tower * 577 + projector * 576;
    EXPECT_NEAR(f.macs / linear, 1.0, 0.001);
    const double scores = 32 * 640.0 * 640 * 4096 + 24 * 2 * 577.0 * 577 * 1024;  // LM causal, tower full
    EXPECT_NEAR(f.forward_flops / (2 * (linear + scores)), 1.0, 0.03);
}

TEST(VisionLanguage, LlavaNextParamsAddTheImageNewline) {
    // Mistral-7B at 32,064 tokens + the same tower and projector + image_newline (4096): 7.57B on the model card
    // of llava-hf/llava-v1.6-mistral-7b-hf.
    constexpr std::int64_t expected = llama(4096, 32, 32, 8, 128, 14336, 32064, false) + clip(1024, 24, 4096, 14, 336) +
                                      (1024 * 4096 + 4096) + (4096 * 4096 + 4096) + 4096;
    static_assert(expected == 7566747648);
    EXPECT_EQ(params_of(fixture("llava-v1.6-mistral-7b-hf.json")), expected);
}

TEST(VisionLanguage, PaliGemmaParamsMatchThePublishedCount) {
    // Gemma-2B (18 layers, one KV head of 256, 257,152 tokens, tied) + SigLIP So400m/14 at 224 px without its head
    // + the linear projector 1152 -> 2048. 2,923,335,408: Keras Hub's pali_gemma_3b_mix_224 preset ("params").
    constexpr std::int64_t expected = llama(2048, 18, 8, 1, 256, 16384, 257152, true) + siglip(1152, 27, 4304, 14, 224) +
                                      (1152 * 2048 + 2048);
    static_assert(expected == 2923335408);
    EXPECT_EQ(params_of(fixture("paligemma-3b-pt-224.json")), expected);
}

TEST(VisionLanguage, Qwen2VlParamsMatchThePublishedCount) {
    // Qwen2-1.5B (tied) + the 32-layer ViT (bias-free conv over 2 frames x 3 channels, fused qkv, GELU MLP 5120)
    // + the merger to 1536. 2,208,985,600: the parameter count a public VLM table lists for Qwen2-VL-2B-Instruct.
    constexpr std::int64_t tower = 6 * 14 * 14 * 1280 + 32 * vit_layer(1280, 5120) + merger(1280, 2 * 1280, 1536);
    constexpr std::int64_t expected = qwen2(1536, 28, 12, 2, 8960, 151936, true) + tower;
    static_assert(expected == 2208985600);
    EXPECT_EQ(params_of(fixture("qwen2-vl-2b-instruct.json")), expected);
}

TEST(VisionLanguage, Qwen25VlParamsMatchThePublishedCount) {
    // Qwen2-7B's decoder (7,615,616,512) + the ViT with RMSNorms and a SwiGLU MLP of 3420 (biases on all three)
    // + the merger with an RMSNorm. 8,292,166,656 (visual 676,550,144): sum(p.numel()) of Qwen2.5-VL-7B-Instruct
    // as public load logs and model registries print it.
    constexpr std::int64_t layer = 2 * 1280 + 3 * (1280 * 1280 + 1280) + (1280 * 1280 + 1280) + 3 * 1280 * 3420 + 2 * 3420 + 1280;
    constexpr std::int64_t tower = 6 * 14 * 14 * 1280 + 32 * layer + merger(1280, 1280, 3584);
    static_assert(tower == 676550144);
    static_assert(qwen2(3584, 28, 28, 4, 18944, 152064, false) + tower == 8292166656);
    EXPECT_EQ(params_of(fixture("qwen2.5-vl-7b-instruct.json")), 8292166656);
}

TEST(VisionLanguage, Idefics3ParamsAddUpFromItsParts) {
    // Llama-3.1-8B at 128,259 tokens + SigLIP So400m/14 at 364 px (676 positions) + the connector's bias-free
    // linear 4 x 1152 -> 4096 = 8,462,086,384; the model card gives 8.46B.
    constexpr std::int64_t expected = llama(4096, 32, 32, 8, 128, 14336, 128259, false) + siglip(1152, 27, 4304, 14, 364) +
                                      4 * 1152 * 4096;
    static_assert(expected == 8462086384);
    EXPECT_EQ(params_of(fixture("idefics3-8b-llama3.json")), expected);
}

TEST(VisionLanguage, ImageTokensFollowEachModelsPatching) {
    EXPECT_EQ(tokens_of("llava-1.5-7b-hf.json").total, 576);           // (336 / 14)^2
    EXPECT_EQ(tokens_of("paligemma-3b-pt-224.json").total, 256);       // (224 / 14)^2
    EXPECT_EQ(tokens_of("qwen2-vl-2b-instruct.json").total, 256);      // (448 / 14)^2 / 4
    EXPECT_EQ(tokens_of("qwen2-vl-2b-instruct.json", 896).total, 1024);  // (896 / 14)^2 / 4
    // Idefics3: 4 x 4 tiles of 364 px and the whole image, 169 tokens each ((364 / 14)^2 / 2^2).
    ImageTokens idefics = tokens_of("idefics3-8b-llama3.json");
    EXPECT_EQ(idefics.image, 1456);
    EXPECT_EQ(idefics.crops, 17);
    EXPECT_EQ(idefics.total, 17 * 169);
    EXPECT_EQ(tokens_of("idefics3-8b-llama3.json", 364).total, 169);           // one tile, no global image
    EXPECT_EQ(tokens_of("idefics3-8b-llama3.json", 700).total, (4 + 1) * 169);  // 2 x 2 tiles and the whole
    // LLaVA-NeXT at 672 px: the 672 x 672 grid (2 x 2 tiles) and the base image; 48 x 48 features, a newline per row.
    ImageTokens next = tokens_of("llava-v1.6-mistral-7b-hf.json");
    EXPECT_EQ(next.crops, 5);
    EXPECT_EQ(next.total, 576 + 48 * 49);
    // At 336 px the 336 x 672 grid fits best; the padding of the wide grid is cut back to 24 x 24 features.
    ImageTokens small = tokens_of("llava-v1.6-mistral-7b-hf.json", 336);
    EXPECT_EQ(small.crops, 3);
    EXPECT_EQ(small.total, 576 + 24 * 25);
}

TEST(VisionLanguage, TheSequenceHoldsTextAndImageTokens) {
    Model m = resolve_model(fixture("llava-1.5-7b-hf.json"), {2, 2048, 0});
    EXPECT_EQ(m.tokens_per_sample, 2048);
    EXPECT_EQ(m.batch, 2);
    EXPECT_EQ(m.domain, "language");
    // The tower runs on the batch's images; the language model on the whole sequence.
    EXPECT_EQ(m.blocks.front().layers.front().input, (Shape{2, 3, 336, 336}));
    EXPECT_EQ(m.blocks.back().layers.back().input[1], 2048);
    bool said = false;
    for (const auto& n : m.notes) said |= n.find("576 image tokens") != std::string::npos && n.find("1472 text tokens") != std::string::npos;
    EXPECT_TRUE(said);
    // Without --seq: the language model's default (Llama-2's 4096 positions).
    EXPECT_EQ(resolve_model(fixture("llava-1.5-7b-hf.json"), {1, 0, 0}).tokens_per_sample, 4096);
    // More image tokens, more compute at the same sequence length: Qwen2-VL at 896 px runs 4x the patches.
    ModelFeatures small = compute_features(resolve_model(fixture("qwen2-vl-2b-instruct.json"), {1, 4096, 448}), Precision::bf16);
    ModelFeatures large = compute_features(resolve_model(fixture("qwen2-vl-2b-instruct.json"), {1, 4096, 896}), Precision::bf16);
    EXPECT_EQ(small.params, large.params);
    EXPECT_GT(large.forward_flops, small.forward_flops * 1.1);
}

TEST(VisionLanguage, TilesRunThroughTheTowerAsABatch) {
    Model m = resolve_model(fixture("llava-v1.6-mistral-7b-hf.json"), {3, 4096, 0});
    EXPECT_EQ(m.blocks.front().layers.front().input, (Shape{15, 3, 336, 336}));  // 3 samples x 5 crops
    EXPECT_EQ(m.batch, 3);
}

TEST(VisionLanguage, FreezingTheTowerLeavesProjectorAndLanguageModelTraining) {
    json config = fixture("llava-1.5-7b-hf.json");
    Model m = resolve_model(config, {1, 2048, 0});
    FineTune ft;
    ft.mode = FineTuneMode::freeze;
    ft.freeze = parse_freeze("vision_tower");
    ModelFeatures f = compute_features(m, Precision::bf16, MixedRecipe::autocast, ft);
    EXPECT_EQ(f.params, 7063427072);
    EXPECT_EQ(f.trainable_params, 7063427072 - clip(1024, 24, 4096, 14, 336));
}

TEST(VisionLanguage, BadConfigsAreRefusedNamingTheField) {
    json llava = fixture("llava-1.5-7b-hf.json");
    json no_vision = llava;
    no_vision.erase("vision_config");
    EXPECT_NE(error_of(no_vision).find("missing object 'vision_config'"), std::string::npos);
    json no_text = llava;
    no_text.erase("text_config");
    EXPECT_NE(error_of(no_text).find("missing object 'text_config'"), std::string::npos);
    json bad_tower = llava;
    bad_tower["vision_config"]["model_type"] = "dinov2";
    EXPECT_NE(error_of(bad_tower).find("unsupported vision_config model_type 'dinov2'"), std::string::npos);
    json encoder_text = llava;
    encoder_text["text_config"] = {{"model_type", "bert"}, {"hidden_size", 768}, {"num_hidden_layers", 2},
                                   {"num_attention_heads", 12}, {"intermediate_size", 3072}, {"vocab_size", 100},
                                   {"max_position_embeddings", 512}};
    EXPECT_NE(error_of(encoder_text).find("not a decoder language model"), std::string::npos);
    json mismatch = fixture("paligemma-3b-pt-224.json");
    mismatch["projection_dim"] = 1024;
    EXPECT_NE(error_of(mismatch).find("differs from the language model's hidden_size"), std::string::npos);
    json grid = fixture("llava-v1.6-mistral-7b-hf.json");
    grid["image_grid_pinpoints"] = json::array({json::array({336, 500})});
    EXPECT_NE(error_of(grid).find("image_grid_pinpoints"), std::string::npos);
    json qwen = fixture("qwen2.5-vl-7b-instruct.json");
    qwen["vision_config"]["fullatt_block_indexes"] = json::array({40});
    EXPECT_NE(error_of(qwen).find("fullatt_block_indexes"), std::string::npos);
}

TEST(VisionLanguage, BadSizesAreRefused) {
    // LLaVA resizes every image to its tower's size; Qwen2-VL takes multiples of 28 px.
    EXPECT_NE(error_of(fixture("llava-1.5-7b-hf.json"), {1, 4096, 448}).find("resizes every image to its tower's 336 px"),
              std::string::npos);
    EXPECT_NE(error_of(fixture("qwen2-vl-2b-instruct.json"), {1, 4096, 450}).find("not a multiple of 28"), std::string::npos);
    // A sequence with no room for text beside the image tokens.
    EXPECT_NE(error_of(fixture("llava-1.5-7b-hf.json"), {1, 576, 0}).find("leaves no room for text"), std::string::npos);
    EXPECT_NE(error_of(fixture("idefics3-8b-llama3.json"), {1, 2048, 0}).find("2873 image tokens"), std::string::npos);
    EXPECT_NE(error_of(fixture("qwen2-vl-2b-instruct.json"), {1, 4096, 1LL << 40}).find("image size"), std::string::npos);
}

TEST(VisionLanguage, Qwen25WindowsAllButItsFullAttentionLayers) {
    // window_size 112 px = 8 x 8 patches of 14: costed as a bidirectional window of 32 each side (63 keys).
    Model m = resolve_model(fixture("qwen2.5-vl-7b-instruct.json"), {1, 4096, 448});
    std::int64_t windowed = 0, full = 0;
    for (const auto& b : m.blocks) {
        if (b.name.rfind("vision_tower", 0) != 0) continue;
        for (const auto& l : b.layers) {
            if (l.kind != "attention") continue;
            if (l.attrs.contains("window")) {
                EXPECT_EQ(l.attrs["window"], 32);
                windowed += b.repeat;
            } else {
                full += b.repeat;
            }
        }
    }
    EXPECT_EQ(windowed, 28);
    EXPECT_EQ(full, 4);  // fullatt_block_indexes 7, 15, 23, 31
}
