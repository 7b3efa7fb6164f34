// Fine-tuning (ops/finetune.hpp): trainable parameters exactly as PEFT's print_trainable_parameters() counts
// them, frozen layers without their weight-gradient kernels, the no-backward prefix, NF4 and int8 storage, the
// dequantisation kernels and the LoRA kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "importers/resolve.hpp"
#include "ops/features.hpp"
#include "ops/finetune.hpp"
#include "test-helpers.hpp"

using namespace prenet;

namespace {

ModelFeatures features_of(const std::string& id, const FineTune& ft, std::int64_t seq = 512,
                          Precision p = Precision::bf16) {
    ModelInputs in;
    in.batch = 1;
    in.seq = seq;
    in.flash_attention = true;
    Model m = resolve_model(json(id), in);
    return compute_features(m, p, MixedRecipe::half_model, ft);
}

FineTune lora(std::int64_t rank, const std::string& targets, FineTuneMode mode = FineTuneMode::lora) {
    FineTune ft;
    ft.mode = mode;
    ft.rank = rank;
    ft.targets = parse_lora_targets(targets);
    if (mode == FineTuneMode::qlora) ft.quantization = Quantization::nf4;
    return ft;
}

// A decoder's projections, as its config.json gives them: hidden, intermediate, query heads x head dim and
// key/value heads x head dim.
struct Dims {
    std::int64_t layers, hidden, intermediate, q_out, kv_out;
};

// LoRA's parameters, independently of the op catalogue: r x (in + out) per adapted projection per layer.
std::int64_t expected_lora(const Dims& d, std::int64_t r, bool all) {
    std::int64_t per_layer = (d.hidden + d.q_out) + (d.hidden + d.kv_out);  // q_proj, v_proj
    if (all)
        per_layer += (d.hidden + d.kv_out) + (d.q_out + d.hidden) +  // k_proj, o_proj
                     2 * (d.hidden + d.intermediate) + (d.intermediate + d.hidden);  // gate, up, down
    return d.layers * r * per_layer;
}

}  // namespace

// PEFT's own printouts: "trainable params: 4,194,304 || all params: 6,742,609,920" (Llama-2-7B, r 8, q_proj and
// v_proj), "3,407,872 || 7,245,139,968" (Mistral-7B, r 8, q and v), and PEFT's README for Qwen2.5-3B-Instruct
// (r 16, the default targets): "3,686,400 || all params: 3,089,625,088".
TEST(FineTune, TrainableParametersMatchPeftsPrintouts) {
    ModelFeatures llama = features_of("llama2-7b", lora(8, "q,v"));
    EXPECT_EQ(llama.trainable_params, 4194304);
    EXPECT_EQ(llama.params, 6742609920);
    EXPECT_EQ(llama.adapter_params, llama.trainable_params);
    ModelFeatures mistral = features_of("mistral-7b", lora(8, "q,v"));
    EXPECT_EQ(mistral.trainable_params, 3407872);
    EXPECT_EQ(mistral.params, 7245139968);
    ModelFeatures qwen = features_of("qwen2.5-3b", lora(16, "q,v"));
    EXPECT_EQ(qwen.trainable_params, 3686400);
    EXPECT_EQ(qwen.params, 3089625088);
    // Llama-2-7B on every linear layer at rank 16: "trainable params: 39,976,960".
    EXPECT_EQ(features_of("llama2-7b", lora(16, "all")).trainable_params, 39976960);
}

// Every zoo Llama, Mistral and Qwen model at ranks 8, 16 and 64, on q and v and on every projection, against
// the count from its config's dimensions. Qwen's query, key and value biases change no LoRA count (LoRA adds no
// bias), and GQA's narrower key and value projections are counted at their own width.
TEST(FineTune, TrainableParametersExactAtRanks8_16_64) {
    const std::map<std::string, Dims> models = {
        {"llama2-7b", {32, 4096, 11008, 4096, 4096}},  {"llama2-13b", {40, 5120, 13824, 5120, 5120}},
        {"llama-65b", {80, 8192, 22016, 8192, 8192}},  {"mistral-7b", {32, 4096, 14336, 4096, 1024}},
        {"qwen2.5-0.5b", {24, 896, 4864, 896, 128}},   {"qwen2.5-1.5b", {28, 1536, 8960, 1536, 256}},
        {"qwen2.5-3b", {36, 2048, 11008, 2048, 256}},  {"qwen2.5-7b", {28, 3584, 18944, 3584, 512}},
    };
    for (const auto& [id, dims] : models)
        for (std::int64_t r : {8, 16, 64})
            for (bool all : {false, true}) {
                SCOPED_TRACE(id + " r " + std::to_string(r) + (all ? " all" : " q,v"));
                ModelFeatures f = features_of(id, lora(r, all ? "all" : "q,v"), 128);
                EXPECT_EQ(f.trainable_params, expected_lora(dims, r, all));
                EXPECT_EQ(f.params, features_of(id, FineTune{}, 128).params + f.trainable_params);
            }
    // The QLoRA paper's Guanaco 65B: r 64 on every linear layer.
    EXPECT_EQ(features_of("llama-65b", lora(64, "all", FineTuneMode::qlora), 128).trainable_params, 799539200);
}

// mt0-large (mT5) with r 8 on PEFT's T5 default targets q and v: the README's "trainable params: 2359296 ||
// all params: 1231940608" — q and v of the encoder's and decoder's self-attention and the decoder's
// cross-attention, 72 attention layers of 2 x 8 x (1024 + 1024).
TEST(FineTune, CrossAttentionAdaptsItsQueryAndValue) {
    // mT5 is T5 v1.1: the t5 importer reads its config.
    json config = {{"model_type", "t5"},           {"d_model", 1024},         {"d_kv", 64},
                   {"d_ff", 2816},                 {"num_heads", 16},         {"num_layers", 24},
                   {"num_decoder_layers", 24},     {"vocab_size", 250112},    {"feed_forward_proj", "gated-gelu"},
                   {"tie_word_embeddings", false}, {"relative_attention_num_buckets", 32}};
    ModelInputs in;
    in.seq = 64;
    Model m = resolve_model(config, in);
    ModelFeatures f = compute_features(m, Precision::fp32, MixedRecipe::autocast, lora(8, "q,v"));
    EXPECT_EQ(f.trainable_params, 2359296);
    EXPECT_EQ(f.params, 1231940608);
}

TEST(FineTune, AdapterDefaultsArePeftsLoraConfig) {
    const FineTune ft;
    EXPECT_EQ(ft.mode, FineTuneMode::none);
    EXPECT_EQ(ft.rank, 8);
    EXPECT_EQ(ft.alpha, 8.0);
    EXPECT_EQ(ft.dropout, 0.0);
    EXPECT_EQ(targets_text(ft.targets), "q,v");
    EXPECT_GT(advised_lora_rank, 0);
}

TEST(FineTune, TargetsAndFreezeRulesParse) {
    EXPECT_EQ(targets_text(parse_lora_targets("v_proj, q_proj")), "q,v");
    EXPECT_EQ(targets_text(parse_lora_targets("all")), "all");
    EXPECT_EQ(targets_text(parse_lora_targets("q,k,v,o,gate,up,down")), "q,k,v,o,gate,up,down");
    EXPECT_EQ(targets_text(parse_lora_targets("q,k,v,o,gate,up,down,in,x,dt,out")), "all");
    EXPECT_EQ(targets_text(parse_lora_targets("out_proj,x_proj,in_proj")), "in,x,out");  // PEFT's Mamba names
    EXPECT_EQ(freeze_text(parse_freeze("embeddings,layers:0-11,layers:14")), "embeddings,layers:0-11,layers:14");
    for (const char* bad : {"", "qq", "q,lm_head"}) {
        try {
            parse_lora_targets(bad);
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.field(), "lora_targets");
        }
    }
    for (const char* bad : {"", "layers:5-2", "layers:x", "embeddings:0-3", ":3"}) {
        try {
            parse_freeze(bad);
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.field(), "freeze");
        }
    }
}

// A frozen layer runs exactly its trained kernels less the weight-gradient ones; trained layers are unchanged.
TEST(FineTune, FrozenLayersLoseExactlyTheirWeightGradientKernels) {
    FineTune ft;
    ft.mode = FineTuneMode::freeze;
    ft.freeze = parse_freeze("layers:3-5");
    for (Precision p : {Precision::fp32, Precision::bf16}) {
        ModelInputs in;
        in.seq = 128;
        Model m = resolve_model(json("gpt2"), in);
        ModelFeatures full = compute_features(m, p, MixedRecipe::autocast);
        ModelFeatures part = compute_features(m, p, MixedRecipe::autocast, ft);
        // gpt2's one block of 12 copies becomes three: 0-2, 3-5 (frozen), 6-11.
        std::map<std::string, std::vector<const LayerFeatures*>> blocks;
        for (const auto& lf : part.layers) blocks[lf.block].push_back(&lf);
        ASSERT_EQ(blocks.count("layers.3-5"), 1u);
        ASSERT_EQ(blocks.count("layers.0-2"), 1u);
        ASSERT_EQ(blocks.count("layers.6-11"), 1u);
        std::vector<const LayerFeatures*> reference;
        for (const auto& lf : full.layers)
            if (lf.block == "layers.0-11") reference.push_back(&lf);
        for (const auto& [name, layers] : blocks) {
            if (name.rfind("layers.", 0) != 0) continue;
            ASSERT_EQ(layers.size(), reference.size());
            bool frozen = name == "layers.3-5";
            for (size_t i = 0; i < layers.size(); ++i) {
                SCOPED_TRACE(name + " " + layers[i]->layer.name);
                EXPECT_EQ(layers[i]->frozen, frozen);
                std::vector<std::string> expected, got;
                for (const auto& k : reference[i]->cost.kernels)
                    if (!frozen || k.phase != Phase::backward_weight) expected.push_back(k.op);
                for (const auto& k : layers[i]->cost.kernels) got.push_back(k.op);
                EXPECT_EQ(got, expected);
                EXPECT_EQ(layers[i]->trainable_params, frozen ? 0 : reference[i]->cost.params);
                if (frozen) EXPECT_EQ(layers[i]->cost.backward_weight_flops, 0.0);
            }
        }
        EXPECT_EQ(part.params, full.params);
        std::int64_t frozen_params = 0;
        for (const auto* lf : blocks["layers.3-5"]) frozen_params += 3 * lf->cost.params;
        EXPECT_EQ(part.trainable_params, full.params - frozen_params);
        EXPECT_DOUBLE_EQ(part.frozen_params, double(frozen_params));
    }
}

// Layers before the first one that trains run forward only: no backward kernels, nothing kept, no recompute.
TEST(FineTune, LayersBeforeAnythingTrainableRunForwardOnly) {
    FineTune ft;
    ft.mode = FineTuneMode::freeze;
    ft.freeze = parse_freeze("embeddings,layers:0-5");
    ModelFeatures f = features_of("gpt2", ft, 128, Precision::fp32);
    bool seen_trainable = false;
    for (const auto& lf : f.layers) {
        SCOPED_TRACE(lf.block + " " + lf.layer.name);
        if (!seen_trainable && lf.trainable_params == 0) {
            EXPECT_FALSE(lf.runs_backward);
            EXPECT_EQ(lf.cost.saved_activation_bytes, 0.0);
            for (const auto& k : lf.cost.kernels) EXPECT_EQ(k.phase, Phase::forward) << k.op;
        } else {
            EXPECT_TRUE(lf.runs_backward);
            if (!seen_trainable) EXPECT_FALSE(lf.layer.needs_input_grad);  // the first trained layer owes no dX
            seen_trainable = true;
        }
    }
    EXPECT_TRUE(seen_trainable);
    // LoRA: the embeddings and the first norm run forward only; the first attention layer computes no gradient
    // of its input (its q_proj has neither the base's nor the adapter's input-gradient GEMM).
    ModelFeatures l = features_of("llama2-7b", lora(8, "q,v"));
    EXPECT_FALSE(l.layers[0].runs_backward);
    const LayerFeatures& attention = l.layers[2];
    ASSERT_EQ(attention.layer.kind, "attention");
    for (const auto& k : attention.cost.kernels) {
        EXPECT_NE(k.op, "q_proj_grad_input");
        EXPECT_NE(k.op, "q_lora_a_grad_input");
    }
}

// NF4 with double quantisation: 4 bits, an 8-bit absmax per 64 values and an fp32 constant per 256 absmaxes:
// 4 + 8/64 + 32/(64 x 256) = 4.127 bits per parameter (QLoRA, section 3: "0.127 bits per parameter" for the
// constants, from 0.5 without double quantisation). int8: a byte and an fp32 scale per row.
TEST(FineTune, QuantisedBytesPerParameterIncludeTheScales) {
    double n = 4096.0 * 11008.0;
    EXPECT_DOUBLE_EQ(quantized_bytes(Quantization::nf4, n, 4096) / n, 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0));
    EXPECT_NEAR(8.0 * quantized_bytes(Quantization::nf4, n, 4096) / n, 4.127, 5e-4);
    EXPECT_DOUBLE_EQ(quantized_bytes(Quantization::int8, n, 4096), n + 4.0 * 4096);
    EXPECT_DOUBLE_EQ(quantized_bytes(Quantization::none, n, 4096), 0.0);
    // Partial blocks round up, per tensor.
    EXPECT_DOUBLE_EQ(quantized_bytes(Quantization::nf4, 65, 1), 33.0 + 2.0 + 4.0);

    // Llama-2-7B under QLoRA: every projection of the blocks is NF4; embeddings, norms and the LM head (the
    // output layer bitsandbytes skips) stay in bf16.
    ModelFeatures f = features_of("llama2-7b", lora(8, "q,v", FineTuneMode::qlora));
    double per_layer = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008;
    EXPECT_DOUBLE_EQ(f.quantized_params, 32 * per_layer);
    double bytes = 32 * (4 * quantized_bytes(Quantization::nf4, 4096.0 * 4096, 4096) +
                         quantized_bytes(Quantization::nf4, 2.0 * 11008 * 4096, 2 * 11008) +  // gate and up, fused
                         quantized_bytes(Quantization::nf4, 4096.0 * 11008, 4096));
    EXPECT_NEAR(f.quantized_weight_bytes, bytes, 1e-6 * bytes);
    EXPECT_DOUBLE_EQ(f.frozen_params, 6738415616.0 - 32 * per_layer);
    // The largest weight dequantised at once: the fused gate and up projection, in bf16.
    EXPECT_DOUBLE_EQ(f.largest_dequantized_bytes, 2.0 * 11008 * 4096 * 2.0);
}

// Each quantised weight is dequantised before its forward GEMM and before its input-gradient GEMM: memory-bound
// kernels reading the stored bytes and writing the bf16 weight. The adapters' GEMMs are not quantised.
TEST(FineTune, DequantisationKernelsPrecedeEachBaseMatmul) {
    ModelFeatures q = features_of("llama2-7b", lora(8, "q,v", FineTuneMode::qlora));
    ModelFeatures plain = features_of("llama2-7b", lora(8, "q,v"));
    ASSERT_EQ(q.layers.size(), plain.layers.size());
    for (size_t i = 0; i < q.layers.size(); ++i) {
        const auto& kq = q.layers[i].cost.kernels;
        std::vector<std::string> without;
        size_t dequantised = 0, base_gemms = 0;
        for (size_t j = 0; j < kq.size(); ++j) {
            if (kq[j].op == "nf4_dequantize") {
                ++dequantised;
                ASSERT_LT(j + 1, kq.size());
                const Kernel& next = kq[j + 1];
                EXPECT_EQ(next.family, Family::gemm);
                EXPECT_EQ(next.op.find("lora"), std::string::npos) << next.op;
                EXPECT_DOUBLE_EQ(double(kq[j].elements), double(next.batch) * next.n * next.k);
                EXPECT_EQ(kq[j].family, Family::elementwise);
                double weight = double(next.n) * double(next.k);
                EXPECT_DOUBLE_EQ(kq[j].bytes, double(next.batch) * (quantized_bytes(Quantization::nf4, weight, 0) + 2.0 * weight));
                continue;
            }
            without.push_back(kq[j].op);
            bool lora_gemm = kq[j].op.find("lora") != std::string::npos;
            if (kq[j].family == Family::gemm && !lora_gemm && kq[j].phase != Phase::backward_weight &&
                kq[j].op.find("_grad_other") == std::string::npos && kq[j].op.rfind("attention_", 0) != 0)
                ++base_gemms;
        }
        std::vector<std::string> expected;
        for (const auto& k : plain.layers[i].cost.kernels) expected.push_back(k.op);
        EXPECT_EQ(without, expected) << q.layers[i].layer.name;
        if (q.layers[i].layer.name != "lm_head") EXPECT_EQ(dequantised, base_gemms) << q.layers[i].layer.name;
    }
}

// LoRA's kernels on one adapted projection: x A^T and (x A^T) B^T with their weight and input gradients, the
// scaling (and its gradient), the add, the sum of x's two gradients; with dropout, the dropout and its copy.
TEST(FineTune, LoraKernelsOfOneProjection) {
    ModelFeatures f = features_of("llama2-7b", lora(16, "o"));
    const LayerFeatures* attention = nullptr;
    for (const auto& lf : f.layers)
        if (lf.layer.kind == "attention") attention = &lf;
    ASSERT_NE(attention, nullptr);
    std::map<std::string, const Kernel*> by_op;
    for (const auto& k : attention->cost.kernels) by_op[k.op] = &k;
    const std::int64_t rows = 512, r = 16;
    ASSERT_TRUE(by_op.count("o_lora_a"));
    EXPECT_EQ(by_op["o_lora_a"]->m, rows);
    EXPECT_EQ(by_op["o_lora_a"]->n, r);
    EXPECT_EQ(by_op["o_lora_a"]->k, 4096);
    EXPECT_EQ(by_op["o_lora_b"]->n, 4096);
    EXPECT_EQ(by_op["o_lora_b"]->k, r);
    for (const char* op : {"o_lora_a_grad_weight", "o_lora_b_grad_weight"})
        EXPECT_EQ(by_op.at(op)->phase, Phase::backward_weight) << op;
    for (const char* op : {"o_lora_a_grad_input", "o_lora_b_grad_input", "o_lora_scale_backward",
                           "o_lora_input_gradient_sum"})
        EXPECT_EQ(by_op.at(op)->phase, Phase::backward_input) << op;
    EXPECT_EQ(by_op.count("o_lora_add"), 1u);
    EXPECT_EQ(by_op.count("o_lora_dropout"), 0u);
    EXPECT_EQ(attention->trainable_params, r * (4096 + 4096));

    FineTune dropped = lora(16, "o");
    dropped.dropout = 0.1;
    ModelFeatures g = features_of("llama2-7b", dropped);
    double extra = g.saved_activation_bytes - f.saved_activation_bytes;
    EXPECT_DOUBLE_EQ(extra, 32.0 * rows * 4096 * (2.0 + 1.0));  // the dropped-out bf16 copy and its mask
}

TEST(FineTune, ErrorsNameTheirField) {
    // A rank above a projection's smaller side: Qwen2.5-0.5B's value projection is 896 to 128.
    try {
        features_of("qwen2.5-0.5b", lora(256, "v"), 64);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "lora_rank");
    }
    EXPECT_NO_THROW(features_of("qwen2.5-0.5b", lora(256, "q"), 64));
    FineTune ft;
    ft.mode = FineTuneMode::freeze;
    ft.freeze = parse_freeze("decoder:0-3");
    try {
        features_of("gpt2", ft, 64);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "freeze");
    }
    ft.freeze = parse_freeze("layers:10-20");  // overlaps the 12 copies: what exists is frozen
    EXPECT_NO_THROW(features_of("gpt2", ft, 64));
}

// DeepSeek-V2-Lite has no query bottleneck (q_lora_rank null): LoRA on "q" adapts its one q_proj, 2048 -> 16 x 192,
// and on "k" (or "v": one latent feeds both) kv_a_proj 2048 -> 576 and kv_b_proj 512 -> 16 x 256, in each of its 27 layers.
TEST(FineTune, LoraOnMlaWithoutAQueryBottleneck) {
    Model m = resolve_model(prenet::testing::source_json("tests/fixtures/hf/deepseek-v2-lite.json"), {1, 128, 0});
    ModelFeatures q = compute_features(m, Precision::bf16, MixedRecipe::half_model, lora(8, "q"));
    EXPECT_EQ(q.adapter_params, 27 * 8 * (2048 + 16 * 192));
    ModelFeatures kv = compute_features(m, Precision::bf16, MixedRecipe::half_model, lora(8, "k"));
    EXPECT_EQ(kv.adapter_params, 27 * 8 * ((2048 + 576) + (512 + 16 * 256)));
}

// LoRA on a Mamba model adapts its mixers' projections (PEFT's in_proj, x_proj, dt_proj, out_proj; the Hugging
// Face Mamba docs' example targets x_proj, in_proj and out_proj): r x (in + out) each, per layer. mamba-2.8b:
// 64 layers, d 2560, d_inner 5120, dt_rank 160, N 16.
TEST(FineTune, LoraOnMambaMixersProjections) {
    ModelFeatures f = features_of("mamba-2.8b", lora(8, "in_proj,x_proj,out_proj"));
    EXPECT_EQ(f.adapter_params, 64 * 8 * ((2560 + 2 * 5120) + (5120 + 160 + 2 * 16) + (5120 + 2560)));
    ModelFeatures dt = features_of("mamba-2.8b", lora(8, "dt"));
    EXPECT_EQ(dt.adapter_params, 64 * 8 * (160 + 5120));
    // Attention's targets find nothing in a pure Mamba model; all (PEFT's all-linear) takes every projection.
    EXPECT_EQ(features_of("mamba-2.8b", lora(8, "q,v")).adapter_params, 0);
    EXPECT_EQ(features_of("mamba-2.8b", lora(8, "all")).adapter_params, f.adapter_params + dt.adapter_params);
}
