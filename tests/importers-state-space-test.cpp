// importers/state_space.hpp: the state-space and hybrid Hugging Face types (mamba, mamba2, falcon_mamba, jamba,
// zamba2, falcon_h1, bamba). Parameter counts against the published totals (each also derived from the config in
// a comment, so a wrong fixture and a wrong importer cannot agree by accident), the layer patterns the configs
// describe, and the bad configs they refuse.
#include "importers/state_space.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "importers/resolve.hpp"
#include "importers/zoo.hpp"
#include "ops/features.hpp"
#include "ops/finetune.hpp"
#include "parallel/layout.hpp"
#include "parallel/tensor_parallel.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

json fixture(const std::string& file) { return prenet::testing::source_json("tests/fixtures/hf/" + file); }

std::int64_t params_of(const json& config) {
    return compute_features(resolve_model(config, {1, 512, 0}), Precision::fp32).params;
}

// Executions of layers of `kind` (a repeated block counts its repeat).
std::int64_t executions(const Model& m, const std::string& kind) {
    std::int64_t n = 0;
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == kind) n += b.repeat;
    return n;
}

std::string refusal(json config) { return prenet::testing::import_error(config, {1, 512, 0}); }

// Mamba-1 layer: in_proj d x 2di, conv di x (k + 1), x_proj di x (R + 2N), dt_proj R x di + di, A di x N, D di,
// out_proj di x d, its RMS norm d.
constexpr std::int64_t mamba_layer(std::int64_t d, std::int64_t di, std::int64_t n, std::int64_t r) {
    return d * 2 * di + di * 5 + di * (r + 2 * n) + r * di + di + di * n + di + di * d + d;
}
// Mamba-2 mixer: in_proj d x (2di + 2GN + H), conv (di + 2GN) x (k + 1), A, D, dt bias per head, gated norm di
// (when present), out_proj di x d.
constexpr std::int64_t mamba2_mixer(std::int64_t d, std::int64_t di, std::int64_t h, std::int64_t n, std::int64_t g,
                                    bool norm) {
    return d * (2 * di + 2 * g * n + h) + (di + 2 * g * n) * 5 + 3 * h + (norm ? di : 0) + di * d;
}
// GQA attention without biases and a gated MLP of f.
constexpr std::int64_t attention(std::int64_t d, std::int64_t heads, std::int64_t kv, std::int64_t hd) {
    return d * heads * hd + 2 * d * kv * hd + heads * hd * d;
}
constexpr std::int64_t gated_mlp(std::int64_t d, std::int64_t f) { return 3 * d * f; }

TEST(StateSpace, MambaCountsMatchPublished) {
    // state-spaces/mamba-2.8b: "Number of parameters: 2768345600", printed by mamba_ssm's loader (ROCm blogs,
    // "Mamba on AMD GPUs with ROCm"); d 2560, di 5120, N 16, R 160, 64 layers, V 50280 tied, final norm.
    static_assert(64 * mamba_layer(2560, 5120, 16, 160) + 50280LL * 2560 + 2560 == 2768345600);
    EXPECT_EQ(params_of(fixture("mamba-2.8b-hf.json")), 2768345600);
    // Falcon-Mamba 7B: d 4096, di 8192, N 16, R 256, 64 layers, V 65024 untied; its dt/B/C norms have no weights.
    // The Hub shows 7.27B (the bf16 shards, 5.31 + 5.33 + 3.90 GB, agree to that precision); no exact total found.
    constexpr std::int64_t falcon_mamba = 64 * mamba_layer(4096, 8192, 16, 256) + 2 * 65024LL * 4096 + 4096;
    static_assert(falcon_mamba == 7272665088);
    EXPECT_EQ(params_of(fixture("falcon-mamba-7b.json")), falcon_mamba);
}

TEST(StateSpace, Mamba2CountMatchesPublished) {
    // Mamba-Codestral-7B: "an instructed model, with 7,285,403,648 parameters" (Mistral AI's announcement).
    // d 4096, di 8192, 128 heads of 64, N 128, 8 groups, 64 layers, V 32768 untied.
    static_assert(64 * (mamba2_mixer(4096, 8192, 128, 128, 8, true) + 4096) + 2 * 32768LL * 4096 + 4096 ==
                  7285403648);
    EXPECT_EQ(params_of(fixture("mamba-codestral-7b-v0.1.json")), 7285403648);
}

TEST(StateSpace, JambaCountMatchesPublished) {
    // ai21labs/Jamba-v0.1: model.safetensors.index.json total_size 103140646656 bytes of bf16 = 51570323328.
    // 32 layers: attention at i % 8 == 4 (4 layers), Mamba elsewhere (28, with dt/B/C norms: R + 2N weights);
    // 16 experts of a gated MLP (top 2) at odd layers, a dense MLP at even ones; V 65536 untied.
    constexpr std::int64_t d = 4096;
    constexpr std::int64_t jamba = 28 * (mamba_layer(d, 8192, 16, 256) - d + 256 + 32) +
                                   4 * attention(d, 32, 8, 128) + 16 * gated_mlp(d, 14336) +
                                   16 * (16 * gated_mlp(d, 14336) + d * 16) + 32 * 2 * d + d + 2 * 65536LL * d;
    static_assert(jamba * 2 == 103140646656);
    EXPECT_EQ(params_of(fixture("jamba-v0.1.json")), jamba);
}

TEST(StateSpace, BambaCountMatchesPublished) {
    // ibm-fms/Bamba-9B: 9.78B (its model card and transformers' BambaConfig table); the exact total follows from
    // the config: Mamba-2 (di 8192, 128 heads of 64, N 128, one group) except attention at 9, 18, 27; a gated MLP
    // of 14336 and two norms in every layer; V 128256 untied.
    constexpr std::int64_t d = 4096;
    constexpr std::int64_t bamba = 29 * mamba2_mixer(d, 8192, 128, 128, 1, true) + 3 * attention(d, 32, 8, 128) +
                                   32 * (gated_mlp(d, 14336) + 2 * d) + d + 2 * 128256LL * d;
    static_assert(bamba == 9780235392);
    EXPECT_EQ(params_of(fixture("bamba-9b.json")), bamba);
}

TEST(StateSpace, FalconH1FollowsFromItsConfig) {
    // Falcon-H1-0.5B ("0.5B"; no exact published total found): every layer runs attention (8 heads of 64, 2 KV
    // heads) beside Mamba-2 (d_ssm 1536 = 24 heads of 64, N 128, no gated norm), then a gated MLP of 2048.
    constexpr std::int64_t d = 1024;
    constexpr std::int64_t h1 = 36 * (mamba2_mixer(d, 1536, 24, 128, 1, false) + attention(d, 8, 2, 64) +
                                      gated_mlp(d, 2048) + 2 * d) + d + 2 * 32784LL * d;
    static_assert(h1 == 521411104);
    Model m = resolve_model(fixture("falcon-h1-0.5b-base.json"), {1, 512, 0});
    EXPECT_EQ(compute_features(m, Precision::fp32).params, h1);
    EXPECT_EQ(executions(m, "attention"), 36);
    EXPECT_EQ(executions(m, "mamba2"), 36);
    EXPECT_EQ(m.blocks.size(), 3u);  // embedding, one block of 36 layers, head
}

TEST(StateSpace, Zamba2SharesItsTransformerBlocks) {
    // Zamba2-2.7B ("2.7B"; approximated, see docs/importers.md): 54 Mamba-2 layers (di 5120, 80 heads of 64,
    // N 64); two shared blocks (norm over 2d, attention 2d -> 32 heads of 160 -> d, norm, gated GELU MLP of
    // 10240) run in turn before the 9 hybrid layers, each of which adds its own LoRA (d x 128 + 128 x 2f) and
    // d x d linear; V 32000 tied.
    constexpr std::int64_t d = 2560;
    constexpr std::int64_t shared = 2 * d + (2 * d * 3 * 5120 + 5120 * d) + d + gated_mlp(d, 10240);
    constexpr std::int64_t zamba = 54 * (mamba2_mixer(d, 5120, 80, 64, 1, true) + d) + 2 * shared +
                                   9 * (d * 128 + 128 * 2 * 10240 + d * d) + 32000LL * d + d;
    Model m = resolve_model(fixture("zamba2-2.7b.json"), {1, 512, 0});
    EXPECT_EQ(compute_features(m, Precision::fp32).params, zamba);
    EXPECT_EQ(executions(m, "attention"), 9);  // every invocation is costed...
    std::int64_t owners = 0;
    for (const auto& b : m.blocks)
        for (const auto& l : b.layers)
            if (l.kind == "attention" && !l.attrs.value("shares_weights", false)) owners += b.repeat;
    EXPECT_EQ(owners, 2);  // ...the weights belong to each block's first
    EXPECT_FALSE(m.notes.empty());
}

TEST(StateSpace, SharedBlocksCarryOneAdapterAndOneQuantisedCopy) {
    Model m = resolve_model(fixture("zamba2-2.7b.json"), {1, 512, 0});
    FineTune ft;
    ft.mode = FineTuneMode::lora;  // PEFT's default targets q and v, rank 8: on the shared attention only
    ModelFeatures lora = compute_features(m, Precision::bf16, MixedRecipe::half_model, ft);
    // PEFT wraps each of the two shared attention modules once: q and v, 5120 -> 5120, r (5120 + 5120) each.
    EXPECT_EQ(lora.adapter_params, 2 * 2 * 8 * (5120 + 5120));
    ft.mode = FineTuneMode::qlora;
    ft.quantization = Quantization::nf4;
    ModelFeatures qlora = compute_features(m, Precision::bf16, MixedRecipe::half_model, ft);
    // Nine invocations, two stored copies: the quantised weights are at most the model's parameters.
    EXPECT_GT(qlora.quantized_params, 0);
    EXPECT_LT(qlora.quantized_params, double(qlora.params));
}

TEST(StateSpace, JambaLayersFollowItsPeriods) {
    Model m = resolve_model(fixture("jamba-v0.1.json"), {1, 512, 0});
    EXPECT_EQ(executions(m, "attention"), 4);
    EXPECT_EQ(executions(m, "mamba"), 28);
    EXPECT_EQ(executions(m, "moe"), 16);
    EXPECT_EQ(executions(m, "mlp"), 16);
    // The 8-layer period is stored once and repeated 4 times.
    bool repeated = false;
    for (const auto& b : m.blocks) repeated |= b.repeat == 4;
    EXPECT_TRUE(repeated);
}

TEST(StateSpace, IdenticalLayersAreStoredOnce) {
    Model m = resolve_model(fixture("mamba-2.8b-hf.json"), {1, 512, 0});
    ASSERT_EQ(m.blocks.size(), 3u);
    EXPECT_EQ(m.blocks[1].repeat, 64);
    EXPECT_EQ(executions(m, "mamba"), 64);
    EXPECT_EQ(m.tokens_per_sample, 512);
    // Its scan has no measured kernel family, and the model says so.
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].find("no measured kernel family"), std::string::npos);
}

TEST(StateSpace, TensorParallelismSplitsTheMixers) {
    Model m = resolve_model(fixture("mamba-codestral-7b-v0.1.json"), {1, 512, 0});
    ParallelLayout l;
    l.tp = 4;
    Model shard = shard_model(m, l);
    for (const auto& b : shard.blocks)
        for (const auto& layer : b.layers)
            if (layer.kind == "mamba2") {
                EXPECT_EQ(layer.attrs["intermediate"], 8192 / 4);
                EXPECT_EQ(layer.attrs["ssm_groups"], 8 / 4);
            }
    EXPECT_LT(compute_features(shard, Precision::bf16).params, compute_features(m, Precision::bf16).params);
    // A layout may split its 128 SSM heads without any attention layer, but only evenly.
    ModelShape shape = model_shape(m);
    EXPECT_EQ(shape.heads, 0);
    EXPECT_EQ(shape.ssm_heads, 128);
    l.dp = 2;
    EXPECT_NO_THROW(check_layout(l, shape, 8));
    l.tp = 3;
    try {
        check_layout(l, shape, 6);
        ADD_FAILURE() << "tp 3 accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("128 SSM heads"), std::string::npos) << e.what();
    }
}

TEST(StateSpace, ZooEntriesAreTheirConfigs) {
    auto zoo_params = [](const char* id) {
        return compute_features(build_zoo_model(id, {1, 0, 0}), Precision::fp32).params;
    };
    EXPECT_EQ(zoo_params("mamba-2.8b"), 2768345600);   // as the mamba-2.8b-hf config above
    EXPECT_EQ(zoo_params("jamba-v0.1"), 51570323328);  // as the Jamba-v0.1 config above
    // state-spaces/mamba2-2.7b ("2.7B"): 64 Mamba-2 layers of d 2560 (80 heads of 64, N 128), V 50277 padded to
    // a multiple of 16 (50288), tied.
    EXPECT_EQ(zoo_params("mamba2-2.7b"), 64 * (mamba2_mixer(2560, 5120, 80, 128, 1, true) + 2560) + 50288LL * 2560 + 2560);
    EXPECT_EQ(find_zoo_entry("mamba-2.8b").default_seq, 2048);
}

TEST(StateSpace, BadConfigsNameTheField) {
    json c = fixture("mamba-2.8b-hf.json");
    c.erase("state_size");
    EXPECT_NE(refusal(c).find("state_size"), std::string::npos);
    c = fixture("mamba-2.8b-hf.json");
    c["time_step_rank"] = "wide";
    EXPECT_NE(refusal(c).find("time_step_rank"), std::string::npos);
    c = fixture("mamba-codestral-7b-v0.1.json");
    c["num_heads"] = 100;
    EXPECT_NE(refusal(c).find("num_heads"), std::string::npos);
    c = fixture("mamba-codestral-7b-v0.1.json");
    c["n_groups"] = 3;
    EXPECT_NE(refusal(c).find("n_groups"), std::string::npos);
    c = fixture("falcon-mamba-7b.json");
    c["conv_kernel"] = 0;
    EXPECT_NE(refusal(c).find("conv_kernel"), std::string::npos);
    c = fixture("jamba-v0.1.json");
    c["attn_layer_offset"] = 8;
    EXPECT_NE(refusal(c).find("attn_layer_offset"), std::string::npos);
    c = fixture("jamba-v0.1.json");
    c["num_experts_per_tok"] = 17;
    EXPECT_NE(refusal(c).find("num_experts_per_tok"), std::string::npos);
    c = fixture("bamba-9b.json");
    c["attn_layer_indices"] = {9, 32};
    EXPECT_NE(refusal(c).find("attn_layer_indices"), std::string::npos);
    c = fixture("falcon-h1-0.5b-base.json");
    c["mamba_d_head"] = 100;
    EXPECT_NE(refusal(c).find("mamba_d_head"), std::string::npos);
    c = fixture("zamba2-2.7b.json");
    c["layers_block_type"][3] = "attention";
    EXPECT_NE(refusal(c).find("layers_block_type"), std::string::npos);
    c = fixture("zamba2-2.7b.json");
    c["num_mem_blocks"] = 1000000;
    EXPECT_NE(refusal(c).find("num_mem_blocks"), std::string::npos);
    c = fixture("zamba2-2.7b.json");
    c["attention_hidden_size"] = 2560;
    EXPECT_NE(refusal(c).find("attention_hidden_size"), std::string::npos);
}

}  // namespace
}  // namespace prenet
