// Transformer architectures of the zoo, with the published hyper-parameters (papers and the models' Hugging Face
// config.json files). Parameter counts of most are checked exactly in tests/importers-zoo-transformer-test.cpp.
#include <cctype>
#include <string>
#include <tuple>

#include "importers/transformer.hpp"
#include "importers/zoo.hpp"

namespace prenet {
namespace {

TransformerSpec gpt2_like(std::string name, std::int64_t hidden, std::int64_t layers, std::int64_t heads) {
    TransformerSpec s;
    s.name = std::move(name);
    s.vocab = 50257, s.hidden = hidden, s.layers = layers, s.heads = heads, s.intermediate = 4 * hidden;
    s.activation = "gelu_new", s.max_positions = 1024, s.dropout = 0.1, s.default_seq = 1024;
    return s;
}

TransformerSpec llama_like(std::string name, std::int64_t vocab, std::int64_t hidden, std::int64_t layers,
                           std::int64_t heads, std::int64_t kv_heads, std::int64_t ffn, bool tied,
                           std::int64_t seq) {
    TransformerSpec s;
    s.name = std::move(name);
    s.vocab = vocab, s.hidden = hidden, s.layers = layers, s.heads = heads, s.kv_heads = kv_heads;
    s.intermediate = ffn, s.activation = "silu", s.gated = true, s.norm = "rmsnorm", s.norm_bias = false;
    s.attention_bias = s.attention_out_bias = s.mlp_bias = false;
    s.position = "rotary", s.tied_embeddings = tied, s.default_seq = seq, s.separate_qkv = true;
    return s;
}

TransformerSpec opt_like(std::string name, std::int64_t hidden, std::int64_t layers, std::int64_t heads) {
    TransformerSpec s;
    s.name = std::move(name);
    s.vocab = 50272, s.hidden = hidden, s.layers = layers, s.heads = heads, s.intermediate = 4 * hidden;
    s.activation = "relu", s.max_positions = 2048 + 2, s.dropout = 0.1, s.default_seq = 2048;
    s.separate_qkv = true;
    return s;
}

TransformerSpec bert_like(std::string name, std::int64_t hidden, std::int64_t layers, std::int64_t heads) {
    TransformerSpec s;
    s.name = std::move(name);
    s.arch = "encoder";
    s.vocab = 30522, s.hidden = hidden, s.layers = layers, s.heads = heads, s.intermediate = 4 * hidden;
    s.max_positions = 512, s.type_vocab = 2, s.embedding_norm = true, s.post_norm = true, s.final_norm = false;
    s.pooler = true, s.dropout = 0.1, s.default_seq = 512, s.separate_qkv = true;
    return s;
}

TransformerSpec t5_like(std::string name, std::int64_t hidden, std::int64_t layers, std::int64_t heads,
                        std::int64_t ffn) {
    TransformerSpec s;
    s.name = std::move(name);
    s.arch = "encoder_decoder";
    s.vocab = 32128, s.hidden = hidden, s.layers = layers, s.decoder_layers = layers, s.heads = heads;
    s.head_dim = 64, s.intermediate = ffn, s.activation = "relu", s.norm = "rmsnorm", s.norm_bias = false;
    s.attention_bias = s.attention_out_bias = s.mlp_bias = false, s.position = "relative", s.dropout = 0.1;
    s.default_seq = 512, s.separate_qkv = true;
    return s;
}

// The size in an id's tail as model cards write it: "0.6b" -> "0.6B".
std::string size_label(const char* tail) {
    std::string label = tail;
    for (char& ch : label) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    return label;
}

ZooEntry entry(TransformerSpec spec, std::string description) {
    ZooEntry e;
    e.id = spec.name;
    e.domain = spec.arch == "vit" ? "vision" : "language";
    e.description = std::move(description);
    e.default_seq = spec.arch == "vit" ? 0 : spec.default_seq;
    e.default_image = spec.arch == "vit" ? spec.image : 0;
    e.build = [spec](const ModelInputs& in) { return build_transformer(spec, in); };
    return e;
}

}  // namespace

std::vector<ZooEntry> transformer_zoo() {
    std::vector<ZooEntry> z;

    TransformerSpec vit;
    vit.name = "vit-b16", vit.arch = "vit", vit.hidden = 768, vit.layers = 12, vit.heads = 12;
    vit.intermediate = 3072;
    z.push_back(entry(vit, "ViT-B/16 image classifier (Dosovitskiy et al. 2021; torchvision vit_b_16)"));

    z.push_back(entry(bert_like("bert-base", 768, 12, 12), "BERT-base encoder with pooler (Devlin et al. 2019)"));
    z.push_back(entry(bert_like("bert-large", 1024, 24, 16), "BERT-large encoder with pooler (Devlin et al. 2019)"));
    // The pre-training task as published benchmarks run it: the masked-LM head (vocabulary logits at every
    // position, as Hugging Face's BertForPreTraining and NVIDIA's 2019 recipe compute them) and the NSP head.
    for (auto [name, hidden, layers, heads] : {std::tuple{"bert-base-pretraining", 768, 12, 12},
                                               std::tuple{"bert-large-pretraining", 1024, 24, 16}}) {
        TransformerSpec s = bert_like(name, hidden, layers, heads);
        s.mlm_head = s.nsp_head = true;
        z.push_back(entry(s, "BERT encoder with the masked-LM and next-sentence pre-training heads (BertForPreTraining)"));
    }
    z.push_back(entry(t5_like("t5-base", 768, 12, 12, 3072), "T5-base encoder-decoder (Raffel et al. 2020)"));

    z.push_back(entry(gpt2_like("gpt2", 768, 12, 12), "GPT-2 small, 124M (Radford et al. 2019)"));
    z.push_back(entry(gpt2_like("gpt2-medium", 1024, 24, 16), "GPT-2 medium, 355M"));
    z.push_back(entry(gpt2_like("gpt2-large", 1280, 36, 20), "GPT-2 large, 774M"));
    z.push_back(entry(gpt2_like("gpt2-xl", 1600, 48, 25), "GPT-2 XL, 1.5B"));

    TransformerSpec gpt3 = gpt2_like("gpt3-175b", 12288, 96, 96);
    gpt3.activation = "gelu", gpt3.max_positions = 2048, gpt3.default_seq = 2048;
    z.push_back(entry(gpt3, "GPT-3 175B (Brown et al. 2020): 96 layers, d_model 12288, dense attention"));

    z.push_back(entry(opt_like("opt-1.3b", 2048, 24, 32), "OPT-1.3B (Zhang et al. 2022)"));
    z.push_back(entry(opt_like("opt-175b", 12288, 96, 96), "OPT-175B (Zhang et al. 2022)"));

    TransformerSpec bloom;
    bloom.name = "bloom-176b", bloom.vocab = 250880, bloom.hidden = 14336, bloom.layers = 70, bloom.heads = 112;
    bloom.intermediate = 4 * 14336, bloom.activation = "gelu_tanh", bloom.position = "alibi";
    // Dropout 0.1 as trained: "The default Megatron-LM dropout settings are inherited" (bigscience tr11 README).
    bloom.embedding_norm = true, bloom.default_seq = 2048, bloom.dropout = 0.1;
    z.push_back(entry(bloom, "BLOOM 176B (BigScience 2022): ALiBi, embedding LayerNorm"));

    TransformerSpec pythia;
    pythia.name = "pythia-12b", pythia.vocab = 50688, pythia.hidden = 5120, pythia.layers = 36, pythia.heads = 40;
    pythia.intermediate = 20480, pythia.position = "rotary", pythia.parallel_block = true;
    pythia.parallel_two_norms = true, pythia.tied_embeddings = false, pythia.default_seq = 2048;
    z.push_back(entry(pythia, "Pythia-12B (Biderman et al. 2023; GPT-NeoX architecture, parallel residual)"));

    z.push_back(entry(llama_like("tinyllama-1.1b", 32000, 2048, 22, 32, 4, 5632, false, 2048),
                      "TinyLlama 1.1B (Zhang et al. 2024)"));
    // LLaMA (Touvron et al. 2023, arXiv:2302.13971, table 2): the models QLoRA fine-tuned (Guanaco).
    z.push_back(entry(llama_like("llama-7b", 32000, 4096, 32, 32, 32, 11008, false, 2048), "LLaMA 7B (Touvron et al. 2023)"));
    z.push_back(entry(llama_like("llama-13b", 32000, 5120, 40, 40, 40, 13824, false, 2048), "LLaMA 13B"));
    z.push_back(entry(llama_like("llama-33b", 32000, 6656, 60, 52, 52, 17920, false, 2048), "LLaMA 33B (30B)"));
    z.push_back(entry(llama_like("llama-65b", 32000, 8192, 80, 64, 64, 22016, false, 2048), "LLaMA 65B"));
    z.push_back(entry(llama_like("llama2-7b", 32000, 4096, 32, 32, 32, 11008, false, 4096), "Llama 2 7B (Touvron et al. 2023)"));
    z.push_back(entry(llama_like("llama2-13b", 32000, 5120, 40, 40, 40, 13824, false, 4096), "Llama 2 13B"));
    z.push_back(entry(llama_like("llama2-70b", 32000, 8192, 80, 64, 8, 28672, false, 4096), "Llama 2 70B (GQA)"));
    z.push_back(entry(llama_like("llama3-8b", 128256, 4096, 32, 32, 8, 14336, false, 8192), "Llama 3 8B (Meta 2024)"));
    z.push_back(entry(llama_like("llama3-70b", 128256, 8192, 80, 64, 8, 28672, false, 8192), "Llama 3 70B"));
    z.push_back(entry(llama_like("llama3.1-405b", 128256, 16384, 126, 128, 8, 53248, false, 8192),
                      "Llama 3.1 405B (Dubey et al. 2024)"));
    TransformerSpec l32_1 = llama_like("llama3.2-1b", 128256, 2048, 16, 32, 8, 8192, true, 8192);
    l32_1.head_dim = 64;
    z.push_back(entry(l32_1, "Llama 3.2 1B (tied embeddings)"));
    TransformerSpec l32_3 = llama_like("llama3.2-3b", 128256, 3072, 28, 24, 8, 8192, true, 8192);
    l32_3.head_dim = 128;
    z.push_back(entry(l32_3, "Llama 3.2 3B (tied embeddings)"));
    z.push_back(entry(llama_like("mistral-7b", 32000, 4096, 32, 32, 8, 14336, false, 4096), "Mistral 7B v0.1 (Jiang et al. 2023)"));
    // Qwen2.5 (Qwen team 2024; the models' config.json): GQA, biases on the query, key and value projections only,
    // tied embeddings up to 3B.
    for (auto [name, vocab, hidden, layers, heads, kv, ffn, tied] :
         {std::tuple{"qwen2.5-0.5b", 151936, 896, 24, 14, 2, 4864, true},
          std::tuple{"qwen2.5-1.5b", 151936, 1536, 28, 12, 2, 8960, true},
          std::tuple{"qwen2.5-3b", 151936, 2048, 36, 16, 2, 11008, true},
          std::tuple{"qwen2.5-7b", 152064, 3584, 28, 28, 4, 18944, false}}) {
        TransformerSpec q = llama_like(name, vocab, hidden, layers, heads, kv, ffn, tied, 4096);
        q.attention_bias = true, q.attention_out_bias = false;
        z.push_back(entry(q, std::string("Qwen2.5 ") + (name + 6) + " (Qwen team 2024; q/k/v biases" +
                                 (tied ? ", tied embeddings)" : ")")));
    }
    TransformerSpec mixtral = llama_like("mixtral-8x7b", 32000, 4096, 32, 32, 8, 14336, false, 4096);
    mixtral.experts = 8, mixtral.top_k = 2, mixtral.moe_intermediate = 14336;
    z.push_back(entry(mixtral, "Mixtral 8x7B: 8 experts, top-2 routing (Jiang et al. 2024)"));

    TransformerSpec falcon = llama_like("falcon-40b", 65024, 8192, 60, 128, 8, 32768, true, 2048);
    falcon.activation = "gelu", falcon.gated = false, falcon.norm = "layernorm", falcon.norm_bias = true;
    falcon.parallel_block = true, falcon.parallel_two_norms = true, falcon.separate_qkv = false;
    z.push_back(entry(falcon, "Falcon-40B (TII 2023): parallel attention/MLP, 8 KV groups"));

    TransformerSpec starcoder = gpt2_like("starcoder-15b", 6144, 40, 48);
    starcoder.vocab = 49152, starcoder.kv_heads = 1, starcoder.activation = "gelu_tanh";
    starcoder.max_positions = 8192, starcoder.dropout = 0.1, starcoder.default_seq = 8192;
    z.push_back(entry(starcoder, "StarCoder 15.5B (Li et al. 2023): multi-query attention, 8K context"));

    TransformerSpec gopher = llama_like("gopher-280b", 32000, 16384, 80, 128, 128, 4 * 16384, false, 2048);
    gopher.activation = "gelu", gopher.gated = false, gopher.position = "relative", gopher.separate_qkv = false;
    z.push_back(entry(gopher, "Gopher 280B (Rae et al. 2021): 80 layers, d_model 16384, 128 heads; relative "
                              "positions modelled as a T5-style bias"));

    TransformerSpec palm = llama_like("palm-540b", 256000, 18432, 118, 48, 1, 73728, true, 2048);
    palm.head_dim = 256, palm.parallel_block = true, palm.norm = "layernorm", palm.norm_bias = false;
    palm.separate_qkv = false;  // JAX on TPUs: one projection, as for Gopher
    z.push_back(entry(palm, "PaLM 540B (Chowdhery et al. 2022): parallel blocks, multi-query, SwiGLU"));

    TransformerSpec deepseek = llama_like("deepseek-v3", 129280, 7168, 61, 128, 128, 18432, false, 4096);
    deepseek.mla = true, deepseek.q_lora_rank = 1536, deepseek.kv_lora_rank = 512;
    deepseek.qk_nope_head_dim = 128, deepseek.qk_rope_head_dim = 64, deepseek.v_head_dim = 128;
    deepseek.experts = 256, deepseek.top_k = 8, deepseek.moe_intermediate = 2048, deepseek.moe_first_dense = 3;
    deepseek.shared_experts = 1, deepseek.shared_intermediate = 2048;
    deepseek.expert_groups = 8, deepseek.groups_per_token = 4;  // config.json's n_group, topk_group
    z.push_back(entry(deepseek, "DeepSeek-V3 671B (DeepSeek-AI 2024): MLA, 256 routed + 1 shared expert, top-8; "
                                "multi-token-prediction module not included"));

    // --- Models people train now (issue #30). Each one's hyper-parameters are its Hugging Face config.json's; the
    // parameter counts are checked in tests/importers-zoo-transformer-test.cpp against the published totals.
    // Qwen3 (Qwen team 2025): GQA with head_dim 128, QK-norm, tied embeddings up to 4B.
    for (auto [name, hidden, layers, heads, ffn, tied] :
         {std::tuple{"qwen3-0.6b", 1024, 28, 16, 3072, true}, std::tuple{"qwen3-1.7b", 2048, 28, 16, 6144, true},
          std::tuple{"qwen3-4b", 2560, 36, 32, 9728, true}, std::tuple{"qwen3-8b", 4096, 36, 32, 12288, false},
          std::tuple{"qwen3-14b", 5120, 40, 40, 17408, false}, std::tuple{"qwen3-32b", 5120, 64, 64, 25600, false}}) {
        TransformerSpec q = llama_like(name, 151936, hidden, layers, heads, 8, ffn, tied, 4096);
        q.head_dim = 128, q.qk_norm = true;
        z.push_back(entry(q, "Qwen3 " + size_label(name + 6) + " (Qwen team 2025): GQA, QK-norm" +
                                 (tied ? ", tied embeddings" : "")));
    }
    // Qwen3 MoE: 128 experts, 8 per token, every layer sparse, no shared expert.
    for (auto [name, hidden, layers, heads, expert_ffn, what] :
         {std::tuple{"qwen3-30b-a3b", 2048, 48, 32, 768, "30.5B total, 3.3B active"},
          std::tuple{"qwen3-235b-a22b", 4096, 94, 64, 1536, "235B total, 22B active"}}) {
        TransformerSpec q = llama_like(name, 151936, hidden, layers, heads, 4, expert_ffn, false, 4096);
        q.head_dim = 128, q.qk_norm = true;
        q.experts = 128, q.top_k = 8, q.moe_intermediate = expert_ffn;
        z.push_back(entry(q, std::string("Qwen3 MoE (Qwen team 2025): 128 experts, top-8; ") + what));
    }
    // Gemma 2 (Google 2024): local (4096-token sliding window) and global layers alternating, norms before and after
    // each sublayer, logit soft-capping (attention 50, final 30), GeGLU (tanh GELU), tied embeddings.
    for (auto [name, hidden, layers, heads, kv, head_dim, ffn] :
         {std::tuple{"gemma2-2b", 2304, 26, 8, 4, 256, 9216}, std::tuple{"gemma2-9b", 3584, 42, 16, 8, 256, 14336},
          std::tuple{"gemma2-27b", 4608, 46, 32, 16, 128, 36864}}) {
        TransformerSpec g = llama_like(name, 256000, hidden, layers, heads, kv, ffn, true, 8192);
        g.head_dim = head_dim, g.activation = "gelu_tanh", g.sandwich_norm = true;
        g.attn_softcap = 50, g.final_softcap = 30, g.sliding_window = 4096, g.window_pattern = 2;
        z.push_back(entry(g, "Gemma 2 " + size_label(name + 7) +
                                 " (Google 2024): local/global attention alternating, logit soft-capping"));
    }
    // Gemma 3 text models (Google 2025): five local layers (sliding window) per global one, QK-norm, no soft-capping.
    // 4B and up are multimodal checkpoints: their language model, whose table has 262,208 rows (64 of them image
    // tokens); the vision tower is left out. 1B is text-only (262,144 rows).
    for (auto [name, vocab, hidden, layers, heads, kv, head_dim, ffn, window] :
         {std::tuple{"gemma3-1b", 262144, 1152, 26, 4, 1, 256, 6912, 512},
          std::tuple{"gemma3-4b", 262208, 2560, 34, 8, 4, 256, 10240, 1024},
          std::tuple{"gemma3-12b", 262208, 3840, 48, 16, 8, 256, 15360, 1024},
          std::tuple{"gemma3-27b", 262208, 5376, 62, 32, 16, 128, 21504, 1024}}) {
        TransformerSpec g = llama_like(name, vocab, hidden, layers, heads, kv, ffn, true, 8192);
        g.head_dim = head_dim, g.activation = "gelu_tanh", g.sandwich_norm = true, g.qk_norm = true;
        g.sliding_window = window, g.window_pattern = 6;
        z.push_back(entry(g, "Gemma 3 " + size_label(name + 7) + " (Google 2025), language model: 5 local (" +
                                 std::to_string(window) + "-token window) layers per global one, QK-norm"));
    }
    // Llama 4 (Meta 2025): 17B active. Every MoE layer routes each token to 1 of its experts and through a shared
    // expert (both 8192 wide); Maverick alternates them with dense layers (MLP 16384). Three chunked local layers
    // (8192-token chunks, RoPE, weightless L2 QK-norm on Scout) per global NoPE layer. The language model only.
    for (auto [name, experts, moe_every, qk_norm, what] :
         {std::tuple{"llama4-scout", 16, 1, true, "Llama 4 Scout 17B-16E: 16 experts in every layer, 109B total"},
          std::tuple{"llama4-maverick", 128, 2, false,
                     "Llama 4 Maverick 17B-128E: 128 experts in every other layer, 400B total"}}) {
        TransformerSpec l = llama_like(name, 202048, 5120, 48, 40, 8, 16384, false, 8192);
        l.head_dim = 128, l.experts = experts, l.top_k = 1, l.moe_every = moe_every;
        l.moe_intermediate = l.shared_intermediate = 8192, l.shared_experts = 1;
        l.sliding_window = 8192, l.window_pattern = 4, l.chunked_local_rope = true;
        l.qk_norm = qk_norm, l.qk_norm_weights = "none";
        z.push_back(entry(l, std::string(what) + " (Meta 2025); chunked local and global NoPE attention; language "
                                                 "model only"));
    }
    TransformerSpec v2lite = llama_like("deepseek-v2-lite", 102400, 2048, 27, 16, 16, 10944, false, 4096);
    v2lite.mla = true, v2lite.kv_lora_rank = 512;  // q_lora_rank null: one full-rank query projection
    v2lite.qk_nope_head_dim = 128, v2lite.qk_rope_head_dim = 64, v2lite.v_head_dim = 128;
    v2lite.experts = 64, v2lite.top_k = 6, v2lite.moe_intermediate = 1408, v2lite.moe_first_dense = 1;
    v2lite.shared_experts = 1, v2lite.shared_intermediate = 2 * 1408;  // n_shared_experts 2, as one MLP
    z.push_back(entry(v2lite, "DeepSeek-V2-Lite 15.7B (DeepSeek-AI 2024): MLA, 64 routed + 2 shared experts, top-6; "
                              "2.4B active"));
    TransformerSpec mixtral22 = llama_like("mixtral-8x22b", 32000, 6144, 56, 48, 8, 16384, false, 4096);
    mixtral22.experts = 8, mixtral22.top_k = 2, mixtral22.moe_intermediate = 16384;
    z.push_back(entry(mixtral22, "Mixtral 8x22B v0.1 (Mistral AI 2024): 8 experts, top-2; 141B total, 39B active"));
    // OLMo 2 (Groeneveld et al., arXiv:2501.00656): each sublayer's output normed before the residual add (no input
    // norms) and QK-norm over the whole query and key projections.
    for (auto [name, hidden, layers, ffn] :
         {std::tuple{"olmo2-7b", 4096, 32, 11008}, std::tuple{"olmo2-13b", 5120, 40, 13824}}) {
        TransformerSpec o = llama_like(name, 100352, hidden, layers, hidden / 128, hidden / 128, ffn, false, 4096);
        o.output_norm_only = true, o.qk_norm = true, o.qk_norm_weights = "projection";
        z.push_back(entry(o, "OLMo 2 " + size_label(name + 6) + " (AI2 2024): norms after each sublayer, QK-norm"));
    }
    TransformerSpec phi4 = llama_like("phi-4", 100352, 5120, 40, 40, 10, 17920, false, 4096);
    phi4.separate_qkv = false;  // Phi-3's fused qkv_proj
    z.push_back(entry(phi4, "Phi-4 14B (Microsoft 2024): Phi-3 architecture, GQA"));

    TransformerSpec sw = t5_like("switch-xl-4", 1024, 24, 32, 16384);
    sw.head_dim = 128, sw.experts = 4, sw.top_k = 1, sw.moe_every = 2;
    z.push_back(entry(sw, "Switch Transformer, 4 experts in every other layer (Fedus et al. 2022; the NeuSight "
                          "switchxl4 configuration)"));
    return z;
}

}  // namespace prenet
