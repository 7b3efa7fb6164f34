#include "importers/hf_config.hpp"

#include <cmath>
#include <functional>
#include <map>

#include "core/error.hpp"
#include "core/checked.hpp"
#include "core/limits.hpp"
#include "importers/hf_fields.hpp"
#include "importers/state_space.hpp"

namespace prenet {
namespace hf {

std::string activation(const Config& c, const std::string& act) {
    // gelu_new runs as eight unfused PyTorch ops in Hugging Face; gelu_pytorch_tanh is one fused kernel.
    if (act == "gelu_new" || act == "gelu_fast") return "gelu_new";
    if (act == "gelu_pytorch_tanh" || act == "gelu_tanh") return "gelu_tanh";
    if (act == "gelu" || act == "gelu_python") return "gelu";
    if (act == "relu") return "relu";
    if (act == "silu" || act == "swish") return "silu";
    // CLIP's x * sigmoid(1.702 x): costed as GELU, the function it approximates (one elementwise kernel).
    if (act == "quick_gelu") return "gelu";
    c.fail("unsupported activation '" + act + "'");
}

// CLIP's and SigLIP's vision towers, from a *_vision_model config or the vision_config of a whole CLIP/SigLIP
// config (whose text tower is then left out, and said so). CLIP: a bias-free patch convolution, a class token,
// a LayerNorm before the encoder and one on the pooled class token. SigLIP: no class token, a biased patch
// convolution, a LayerNorm after the encoder and the attention-pooling (MAP) head (vision_use_head, default on).
TransformerSpec clip_vision_tower(const Config& c, bool siglip) {
    TransformerSpec s;
    s.separate_qkv = true;
    s.arch = "vit";
    s.hidden = c.integer("hidden_size", 768);
    s.layers = c.layers("num_hidden_layers", 12);
    s.heads = c.integer("num_attention_heads", 12);
    s.intermediate = c.integer("intermediate_size", 3072);
    s.image = c.integer("image_size", 224);
    s.patch = c.integer("patch_size", siglip ? 16 : 32);
    s.channels = c.integer("num_channels", 3);
    s.activation = activation(c, c.text("hidden_act", siglip ? "gelu_pytorch_tanh" : "quick_gelu"));
    s.vocab = 1, s.classes = 1;
    s.patch_bias = siglip, s.class_token = !siglip, s.pre_norm = !siglip, s.pooled_norm = !siglip;
    s.final_norm = siglip;  // SigLIP's post_layernorm over every token (CLIP's norms the pooled token only)
    s.vision_head = siglip ? (c.boolean("vision_use_head", true) ? "map" : "final_norm_only") : "none";
    if (s.vision_head == "final_norm_only") s.vision_head = "none", s.pooled_norm = false;
    return s;
}

}  // namespace hf

namespace {

using hf::Config;

// Sliding-window attention. `layer_types` (transformers >= 4.53: "sliding_attention" / "full_attention" per layer)
// wins; otherwise each family's own rule: Mistral and Phi-3 window every layer when `sliding_window` is set,
// Qwen2/Qwen3 only with `use_sliding_window`, from layer `max_window_layers` on; Gemma 2 alternates local and
// global layers (the even ones local), Gemma 3 has `sliding_window_pattern` - 1 local layers per global one.
void read_sliding_window(const Config& c, const std::string& type, TransformerSpec& s) {
    if (!c.has("sliding_window")) return;
    std::int64_t window = c.integer("sliding_window");
    if (window == 0) return;
    if (c.has("layer_types")) {
        const json& types = c.raw("layer_types");
        if (!types.is_array() || std::int64_t(types.size()) != s.layers)
            c.fail("field 'layer_types' must list one attention type per layer (" + std::to_string(s.layers) + ")");
        for (const auto& t : types) {
            if (!t.is_string() || (t != "sliding_attention" && t != "full_attention"))
                c.fail("field 'layer_types' holds " + t.dump() + " (supported: sliding_attention, full_attention)");
            s.local_layers.push_back(t == "sliding_attention");
        }
        s.sliding_window = window;
        return;
    }
    if (type == "qwen2" || type == "qwen3" || type == "qwen2_moe" || type == "qwen3_moe") {
        if (!c.boolean("use_sliding_window", false)) return;
        std::int64_t first = c.integer("max_window_layers", s.layers);
        for (std::int64_t i = 0; i < s.layers; ++i) s.local_layers.push_back(i >= first);
        if (first >= s.layers) return;
    } else if (type == "gemma2") {
        s.window_pattern = 2;
    } else if (type == "gemma3_text") {
        s.window_pattern = c.integer("sliding_window_pattern", 6);
    }
    s.sliding_window = window;
}

TransformerSpec llama_family(const Config& c, const std::string& type) {
    TransformerSpec s;
    s.separate_qkv = type != "phi3";  // Hugging Face's modelling code: query, key and value linears (Phi-3: qkv_proj)
    s.hidden = c.integer("hidden_size");
    s.layers = c.layers("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.kv_heads = c.integer("num_key_value_heads", s.heads);
    s.intermediate = c.integer("intermediate_size");
    s.vocab = c.integer("vocab_size");
    s.head_dim = c.integer("head_dim", 0);
    s.activation = hf::activation(c, c.text("hidden_act", c.text("hidden_activation", "silu")));
    s.gated = true, s.norm = "rmsnorm", s.norm_bias = false, s.position = "rotary";
    // Qwen2 and Qwen2-MoE: biases on query, key and value, none on the output projection.
    bool qkv_bias_only = type == "qwen2" || type == "qwen2_moe";
    bool bias = c.boolean("attention_bias", qkv_bias_only);
    s.attention_bias = bias, s.attention_out_bias = qkv_bias_only ? false : bias;
    s.mlp_bias = c.boolean("mlp_bias", false);
    bool gemma = type == "gemma" || type == "gemma2" || type == "gemma3_text";
    s.tied_embeddings = c.boolean("tie_word_embeddings", gemma);
    s.default_seq = std::min<std::int64_t>(c.integer("max_position_embeddings", 4096), 8192);
    // Gemma's (1 + w) norms and sqrt(hidden) embedding scale change no parameter count. Gemma 2 and 3 norm each
    // sublayer's output as well as its input; Qwen3 and Gemma 3 norm each query and key head.
    s.sandwich_norm = type == "gemma2" || type == "gemma3_text";
    s.qk_norm = type == "qwen3" || type == "qwen3_moe" || type == "gemma3_text";
    // OLMo 2 norms each sublayer's output (before the residual add) instead of its input, and its QK-norm is one
    // RMSNorm over the whole query projection and one over the key projection.
    if (type == "olmo2") s.output_norm_only = true, s.qk_norm = true, s.qk_norm_weights = "projection";
    if (type == "gemma2") {
        s.attn_softcap = c.number("attn_logit_softcapping", 50.0);
        s.final_softcap = c.number("final_logit_softcapping", 30.0);
    }
    if (type == "gemma3_text") {
        s.attn_softcap = c.number("attn_logit_softcapping", 0.0);
        s.final_softcap = c.number("final_logit_softcapping", 0.0);
    }
    if (type == "phi3") s.dropout = c.number("resid_pdrop", 0.0);
    read_sliding_window(c, type, s);
    if (type == "mixtral") {
        s.experts = c.integer("num_local_experts");
        s.top_k = c.integer("num_experts_per_tok");
        s.moe_intermediate = s.intermediate;
    }
    if (type == "qwen2_moe" || type == "qwen3_moe") {
        s.experts = c.integer("num_experts");
        s.top_k = c.integer("num_experts_per_tok");
        // Hugging Face's Qwen2-MoE and Qwen3-MoE code builds a sparse block only where num_experts > 0: with 0
        // every layer is the dense MLP of intermediate_size, and num_experts_per_tok is unused. A legitimate
        // config then, but rarely what was meant, so the import says so.
        if (s.experts == 0) {
            s.notes.push_back("num_experts is 0: every layer is a dense MLP of intermediate_size (as the " + type +
                              " modelling code builds it), no mixture of experts; num_experts_per_tok " +
                              std::to_string(s.top_k) + " is unused");
            s.top_k = 0;
            return s;
        }
        s.moe_intermediate = c.integer("moe_intermediate_size");
        // Layer i is sparse when (i + 1) % decoder_sparse_step == 0 and it is not in mlp_only_layers.
        std::int64_t step = c.integer("decoder_sparse_step", 1);
        if (step == 0) c.fail("field 'decoder_sparse_step' must be positive");
        s.moe_every = step, s.moe_first_dense = 0;
        if (c.has("mlp_only_layers")) {
            const json& dense = c.raw("mlp_only_layers");
            if (!dense.is_array()) c.fail("field 'mlp_only_layers' must be a list of layer indices");
            s.dense_layers.assign(size_t(s.layers), false);
            for (const auto& i : dense) {
                if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::int64_t>() >= s.layers)
                    c.fail("field 'mlp_only_layers' holds " + i.dump() + ", not a layer index below " +
                           std::to_string(s.layers));
                s.dense_layers[size_t(i.get<std::int64_t>())] = true;
            }
        }
        if (type == "qwen2_moe") {
            s.shared_intermediate = c.integer("shared_expert_intermediate_size", 0);
            s.shared_experts = s.shared_intermediate ? 1 : 0;
            s.shared_gate = s.shared_experts > 0;
        }
    }
    return s;
}

// DeepSeek-V2/V3: multi-head latent attention (queries through a q_lora_rank bottleneck, or one q_proj when it is
// null; keys and values from a kv_lora_rank latent plus a shared rotary key), the first first_k_dense_replace
// layers dense, the rest (every moe_layer_freq-th) with n_routed_experts routed experts, num_experts_per_tok per
// token within at most topk_group of n_group expert groups, and n_shared_experts always-on ones (one MLP
// n_shared_experts x moe_intermediate_size wide, as in the modelling code). The router has no bias; V3's e_score_correction_bias is a buffer (updated by the aux-loss-free
// balancing rule, not by gradients) and is not counted. The checkpoint's multi-token-prediction layer
// (num_nextn_predict_layers) is not part of the Hugging Face model and is not built.
TransformerSpec deepseek(const Config& c) {
    TransformerSpec s;
    s.mla = true;
    s.hidden = c.integer("hidden_size");
    s.layers = c.layers("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.kv_heads = s.heads;
    s.intermediate = c.integer("intermediate_size");
    s.vocab = c.integer("vocab_size");
    s.q_lora_rank = c.integer("q_lora_rank", 0);
    s.kv_lora_rank = c.integer("kv_lora_rank");
    s.qk_nope_head_dim = c.integer("qk_nope_head_dim");
    s.qk_rope_head_dim = c.integer("qk_rope_head_dim");
    s.v_head_dim = c.integer("v_head_dim");
    s.activation = hf::activation(c, c.text("hidden_act", "silu"));
    s.gated = true, s.norm = "rmsnorm", s.norm_bias = false, s.position = "rotary";
    s.attention_bias = s.attention_out_bias = s.mlp_bias = false;
    if (c.boolean("attention_bias", false)) c.fail("attention_bias true is not supported for MLA");
    s.tied_embeddings = c.boolean("tie_word_embeddings", false);
    s.default_seq = std::min<std::int64_t>(c.integer("max_position_embeddings", 4096), 8192);
    s.experts = c.integer("n_routed_experts", 0);
    // null (DeepSeek-V2's config class default) builds dense MLPs only; the modelling code makes a layer sparse
    // whenever n_routed_experts is not null, so 0 would be a mixture of no experts.
    if (c.has("n_routed_experts") && s.experts == 0)
        c.fail("field 'n_routed_experts' is 0: a mixture of experts needs at least one (null means a dense model)");
    if (s.experts) {
        s.top_k = c.integer("num_experts_per_tok");
        s.moe_intermediate = c.integer("moe_intermediate_size");
        std::int64_t shared = c.integer("n_shared_experts", 0);
        s.shared_experts = shared ? 1 : 0;
        s.shared_intermediate = checked_mul(shared, s.moe_intermediate, "shared expert intermediate size");
        // Group-limited routing (V2's group_limited_greedy, V3's noaux_tc): a token's experts in at most
        // topk_group of n_group groups; one group (V2-Lite) or all of them limits nothing.
        std::int64_t groups = c.integer("n_group", 1), per_token = c.integer("topk_group", groups);
        if (groups > 1 && per_token >= 1 && per_token < groups) s.expert_groups = groups, s.groups_per_token = per_token;
        s.moe_first_dense = c.integer("first_k_dense_replace", 0);
        if (s.moe_first_dense > s.layers) c.fail("field 'first_k_dense_replace' is past the last layer");
        std::int64_t freq = c.integer("moe_layer_freq", 1);
        if (freq == 0) c.fail("field 'moe_layer_freq' must be positive");
        if (freq > 1) {
            s.dense_layers.assign(size_t(s.layers), false);
            for (std::int64_t i = 0; i < s.layers; ++i) s.dense_layers[size_t(i)] = i % freq != 0;
        }
    }
    return s;
}

// Meta's Llama 4 text model (llama4_text; the text_config of a llama4 config). Mixture-of-experts layers (those in
// moe_layers, by default every interleave_moe_layer_step-th) route each token to num_experts_per_tok of
// num_local_experts experts of intermediate_size and always through one shared expert as wide; the other layers
// have a dense MLP of intermediate_size_mlp. The router has no bias. Attention interleaves chunked local layers
// (keys within the query's chunk of attention_chunk_size, with RoPE and, when use_qk_norm, a weightless L2 norm of
// queries and keys) with global NoPE layers: no_rope_layers[i] is 1 for a RoPE (chunked) layer, by default every
// layer but each no_rope_layer_interval-th; layer_types (transformers >= 4.54) says the same per layer.
TransformerSpec llama4_text(const Config& c) {
    TransformerSpec s;
    s.separate_qkv = true;  // Hugging Face's modelling code: q_proj, k_proj, v_proj
    s.hidden = c.integer("hidden_size");
    s.layers = c.layers("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.kv_heads = c.integer("num_key_value_heads", s.heads);
    s.head_dim = c.integer("head_dim", 0);
    s.vocab = c.integer("vocab_size");
    s.intermediate = c.integer("intermediate_size_mlp", 16384);
    s.moe_intermediate = s.shared_intermediate = c.integer("intermediate_size");
    s.experts = c.integer("num_local_experts", 16);
    s.top_k = c.integer("num_experts_per_tok", 1);
    s.shared_experts = 1;
    s.activation = hf::activation(c, c.text("hidden_act", "silu"));
    s.gated = true, s.norm = "rmsnorm", s.norm_bias = false, s.position = "rotary";
    s.attention_bias = s.attention_out_bias = c.boolean("attention_bias", false);
    s.mlp_bias = false;
    s.tied_embeddings = c.boolean("tie_word_embeddings", false);
    s.default_seq = std::min<std::int64_t>(c.integer("max_position_embeddings", 131072), 8192);
    s.qk_norm = c.boolean("use_qk_norm", true), s.qk_norm_weights = "none";

    // Which layers are sparse: the rule of interleave_moe_layer_step, or the moe_layers list where one is given.
    std::int64_t step = c.layers("interleave_moe_layer_step", 1);
    if (step == 0) c.fail("field 'interleave_moe_layer_step' must be positive");
    s.moe_every = step, s.moe_first_dense = 0;
    if (c.has("moe_layers")) {
        const json& moe = c.raw("moe_layers");
        if (!moe.is_array()) c.fail("field 'moe_layers' must be a list of layer indices");
        std::vector<bool> sparse(size_t(s.layers), false);
        for (const auto& i : moe) {
            if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::int64_t>() >= s.layers)
                c.fail("field 'moe_layers' holds " + i.dump() + ", not a layer index below " + std::to_string(s.layers));
            sparse[size_t(i.get<std::int64_t>())] = true;
        }
        // The spec marks dense exceptions to its rule; a list that differs from the rule by sparse layers the rule
        // leaves dense falls back to every layer sparse but those the list leaves out.
        bool within_rule = true;
        for (std::int64_t i = 0; i < s.layers; ++i)
            if (sparse[size_t(i)] && (i + 1) % step != 0) within_rule = false;
        if (!within_rule) s.moe_every = 1;
        s.dense_layers.assign(size_t(s.layers), false);
        for (std::int64_t i = 0; i < s.layers; ++i) s.dense_layers[size_t(i)] = !sparse[size_t(i)];
    }

    // Chunked local (RoPE) layers and global (NoPE) ones; attention_chunk_size null: the RoPE layers attend to every
    // earlier token too.
    std::int64_t chunk = c.null("attention_chunk_size") ? 0 : c.integer("attention_chunk_size", 8192);
    if (chunk == 0 && !c.null("attention_chunk_size"))
        c.fail("field 'attention_chunk_size' must be positive (null: no chunks)");
    std::int64_t interval = c.layers("no_rope_layer_interval", 4);
    if (interval == 0) c.fail("field 'no_rope_layer_interval' must be positive");
    s.sliding_window = chunk, s.chunked_local_rope = true;
    s.window_pattern = interval;  // the default rule, and the period the stack's repeated blocks are grouped by
    if (c.has("layer_types")) {
        const json& types = c.raw("layer_types");
        if (!types.is_array() || std::int64_t(types.size()) != s.layers)
            c.fail("field 'layer_types' must list one attention type per layer (" + std::to_string(s.layers) + ")");
        for (const auto& t : types) {
            if (!t.is_string() || (t != "chunked_attention" && t != "full_attention"))
                c.fail("field 'layer_types' holds " + t.dump() + " (supported: chunked_attention, full_attention)");
            s.local_layers.push_back(t == "chunked_attention");
        }
    } else if (c.has("no_rope_layers") && !c.raw("no_rope_layers").empty()) {  // [] means the default, as in transformers
        const json& rope = c.raw("no_rope_layers");
        if (!rope.is_array() || std::int64_t(rope.size()) != s.layers)
            c.fail("field 'no_rope_layers' must list 1 (RoPE, chunked) or 0 (NoPE, global) per layer (" +
                   std::to_string(s.layers) + ")");
        for (const auto& r : rope) {
            if (!r.is_number_integer() || (r != 0 && r != 1))
                c.fail("field 'no_rope_layers' holds " + r.dump() + ", not 1 (RoPE, chunked) or 0 (NoPE, global)");
            s.local_layers.push_back(r == 1);
        }
    }
    return s;
}

TransformerSpec gpt2(const Config& c);

// BigCode's GPT-BigCode (SantaCoder, StarCoder): GPT-2 with multi-query attention (one key/value head) when
// multi_query is true, the fused c_attn projecting to hidden + 2 x head_dim.
TransformerSpec gpt_bigcode(const Config& c) {
    TransformerSpec s = gpt2(c);
    s.kv_heads = c.boolean("multi_query", true) ? 1 : s.heads;
    s.activation = hf::activation(c, c.text("activation_function", "gelu_pytorch_tanh"));
    return s;
}

// OpenAI Whisper: a convolutional front-end over num_mel_bins log-mel channels, an encoder over
// max_source_positions frames and a decoder over at most max_target_positions tokens with cross-attention.
// Query and value projections have biases, the key projection none; the output projection is tied.
TransformerSpec whisper(const Config& c) {
    TransformerSpec s;
    s.arch = "whisper";
    s.separate_qkv = true;
    s.hidden = c.integer("d_model");
    s.layers = c.layers("encoder_layers");
    s.decoder_layers = c.layers("decoder_layers");
    s.heads = c.integer("encoder_attention_heads");
    if (c.integer("decoder_attention_heads", s.heads) != s.heads)
        c.fail("encoder and decoder with different numbers of heads are not supported");
    s.intermediate = c.integer("encoder_ffn_dim");
    if (c.integer("decoder_ffn_dim", s.intermediate) != s.intermediate)
        c.fail("encoder and decoder with different FFN sizes are not supported");
    s.vocab = c.integer("vocab_size");
    s.mel_bins = c.integer("num_mel_bins", 80);
    s.encoder_positions = c.integer("max_source_positions", 1500);
    s.max_positions = c.integer("max_target_positions", 448);
    s.activation = hf::activation(c, c.text("activation_function", "gelu"));
    s.position = "learned", s.key_bias = false;
    s.dropout = c.number("dropout", 0.0);
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = s.max_positions;
    return s;
}

TransformerSpec vision_tower_of(const Config& c, const json& config, bool siglip) {
    if (!config.contains("vision_config") || !config["vision_config"].is_object())
        c.fail("missing object 'vision_config' (the vision tower is what is imported)");
    Config vision(config["vision_config"], siglip ? "siglip vision_config" : "clip vision_config");
    TransformerSpec s = hf::clip_vision_tower(vision, siglip);
    s.notes.push_back(std::string("imported the vision tower of this ") + (siglip ? "SigLIP" : "CLIP") +
                      " config; its text tower and projections are left out");
    return s;
}

TransformerSpec gpt2(const Config& c) {
    TransformerSpec s;
    s.hidden = c.integer_any({"n_embd", "hidden_size"});
    s.layers = c.layers_any({"n_layer", "num_hidden_layers"});
    s.heads = c.integer_any({"n_head", "num_attention_heads"});
    s.intermediate = c.integer("n_inner", 4 * s.hidden);
    s.vocab = c.integer("vocab_size");
    s.max_positions = c.integer_any({"n_positions", "n_ctx"});
    s.activation = hf::activation(c, c.text("activation_function", "gelu_new"));
    s.dropout = c.number("resid_pdrop", 0.1);
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = s.max_positions;
    return s;
}

TransformerSpec gpt_neox(const Config& c) {
    TransformerSpec s;
    s.hidden = c.integer("hidden_size");
    s.layers = c.layers("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.intermediate = c.integer("intermediate_size");
    s.vocab = c.integer("vocab_size");
    s.activation = hf::activation(c, c.text("hidden_act", "gelu"));
    s.position = "rotary";
    s.parallel_block = c.boolean("use_parallel_residual", true);
    s.parallel_two_norms = true;
    s.tied_embeddings = c.boolean("tie_word_embeddings", false);
    s.default_seq = std::min<std::int64_t>(c.integer("max_position_embeddings", 2048), 8192);
    return s;
}

TransformerSpec opt(const Config& c) {
    TransformerSpec s;
    s.separate_qkv = true;  // Hugging Face's modelling code: query, key and value linears
    s.hidden = c.integer("hidden_size");
    s.layers = c.layers("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.intermediate = c.integer("ffn_dim");
    s.vocab = c.integer("vocab_size");
    s.max_positions = c.integer("max_position_embeddings") + 2;  // OPT offsets positions by 2
    s.activation = hf::activation(c, c.text("activation_function", "relu"));
    s.dropout = c.number("dropout", 0.1);
    s.post_norm = !c.boolean("do_layer_norm_before", true);
    s.final_norm = !s.post_norm;
    std::int64_t proj = c.integer("word_embed_proj_dim", s.hidden);
    if (proj != s.hidden) s.word_embed_proj_dim = proj;
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = s.max_positions - 2;
    return s;
}

TransformerSpec bloom(const Config& c) {
    TransformerSpec s;
    s.hidden = c.integer_any({"hidden_size", "n_embed"});
    s.layers = c.layers_any({"n_layer", "num_hidden_layers"});
    s.heads = c.integer_any({"n_head", "num_attention_heads"});
    s.intermediate = 4 * s.hidden;
    s.vocab = c.integer("vocab_size");
    s.activation = "gelu_tanh", s.position = "alibi", s.embedding_norm = true;
    // The released configs say 0.0 (inference); the training runs' Megatron-DeepSpeed kept its 0.1 defaults.
    s.dropout = c.number("hidden_dropout", 0.0);
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = 2048;
    return s;
}

TransformerSpec falcon(const Config& c) {
    TransformerSpec s;
    s.hidden = c.integer("hidden_size");
    s.layers = c.layers_any({"num_hidden_layers", "n_layer"});
    s.heads = c.integer_any({"num_attention_heads", "n_head"});
    bool new_arch = c.boolean("new_decoder_architecture", false);
    if (new_arch) s.kv_heads = c.has("num_kv_heads") || c.has("n_head_kv") ? c.integer_any({"num_kv_heads", "n_head_kv"})
                                                                           : s.heads;  // HF's default
    else s.kv_heads = c.boolean("multi_query", true) ? 1 : s.heads;
    s.intermediate = c.integer("ffn_hidden_size", 4 * s.hidden);
    s.vocab = c.integer("vocab_size");
    s.activation = "gelu";
    bool bias = c.boolean("bias", false);
    s.attention_bias = s.attention_out_bias = s.mlp_bias = bias;
    s.position = c.boolean("alibi", false) ? "alibi" : "rotary";
    s.parallel_block = c.boolean("parallel_attn", true);
    s.parallel_two_norms = new_arch;
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = 2048;
    return s;
}

TransformerSpec bert(const Config& c, bool roberta) {
    TransformerSpec s;
    s.separate_qkv = true;  // Hugging Face's modelling code: query, key and value linears
    s.arch = "encoder";
    s.hidden = c.integer("hidden_size");
    s.layers = c.layers("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.intermediate = c.integer("intermediate_size");
    s.vocab = c.integer("vocab_size");
    s.max_positions = c.integer("max_position_embeddings");
    s.type_vocab = c.integer("type_vocab_size", roberta ? 1 : 2);
    s.activation = hf::activation(c, c.text("hidden_act", "gelu"));
    s.dropout = c.number("hidden_dropout_prob", 0.1);
    s.embedding_norm = true, s.post_norm = true, s.final_norm = false, s.pooler = true;
    // The architecture named in the config decides the heads: pre-training adds masked-LM and next-sentence.
    if (c.has("architectures")) {
        std::string archs = c.raw("architectures").dump();
        s.mlm_head = archs.find("ForPreTraining") != std::string::npos || archs.find("ForMaskedLM") != std::string::npos ||
                     archs.find("LMHead") != std::string::npos;
        s.nsp_head = archs.find("ForPreTraining") != std::string::npos;
        s.pooler = !s.mlm_head || s.nsp_head;
    }
    // RoBERTa's position ids start after the padding index: usable length is the table minus 2.
    s.default_seq = roberta ? s.max_positions - 2 : s.max_positions;
    return s;
}

TransformerSpec t5(const Config& c, bool switch_moe) {
    TransformerSpec s;
    s.separate_qkv = true;  // Hugging Face's modelling code: query, key and value linears
    s.arch = "encoder_decoder";
    s.hidden = c.integer("d_model");
    s.head_dim = c.integer("d_kv");
    s.intermediate = c.integer("d_ff");
    s.layers = c.layers("num_layers");
    s.decoder_layers = c.layers("num_decoder_layers", s.layers);
    s.heads = c.integer("num_heads");
    s.vocab = c.integer("vocab_size");
    s.relative_buckets = c.integer("relative_attention_num_buckets", 32);
    std::string ff = c.text("feed_forward_proj", "relu");
    s.gated = ff.rfind("gated-", 0) == 0;
    s.activation = hf::activation(c, s.gated ? ff.substr(6) == "gelu" ? "gelu_new" : ff.substr(6) : ff);
    s.norm = "rmsnorm", s.norm_bias = false, s.position = "relative";
    s.attention_bias = s.attention_out_bias = s.mlp_bias = false;
    s.dropout = c.number("dropout_rate", 0.1);
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = 512;
    if (switch_moe) {
        s.experts = c.integer("num_experts");
        s.top_k = 1;
        // Hugging Face makes layer i sparse when i % step == 1 (every layer when step is 1, none when it is 0).
        // In the spec's rule, (i - moe_first_dense) % moe_every == moe_every - 1, that is moe_first_dense = 2 - step.
        // The spec has one pattern for both stacks: the encoder's step is used for the decoder too.
        std::int64_t step = c.integer("encoder_sparse_step", 1);
        if (step == 0) s.experts = 0, s.top_k = 0;
        else s.moe_every = step, s.moe_first_dense = step > 1 ? 2 - step : 0;
        s.router_bias = c.boolean("router_bias", false);
        s.capacity_factor = 1.0;
    }
    return s;
}

TransformerSpec vit(const Config& c) {
    TransformerSpec s;
    s.separate_qkv = true;  // Hugging Face's modelling code: query, key and value linears
    s.arch = "vit";
    s.hidden = c.integer("hidden_size");
    s.layers = c.layers("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.intermediate = c.integer("intermediate_size");
    s.image = c.integer("image_size", 224);
    s.patch = c.integer("patch_size", 16);
    s.channels = c.integer("num_channels", 3);
    s.activation = hf::activation(c, c.text("hidden_act", "gelu"));
    s.attention_bias = c.boolean("qkv_bias", true);
    s.attention_out_bias = true;
    s.vocab = 1;
    s.classes = c.has("id2label") ? 0 : 1000;
    return s;
}

// MosaicML MPT (llm-foundry's MPTConfig; its defaults where a field is absent). Fused Wqkv, one LayerNorm before
// attention and one before the MLP, GELU MLP of expansion_ratio x d_model, tied embeddings. `no_bias` removes
// every bias, the norms' included (MPTModel drops all `bias` parameters); positions are learned (a table of
// max_seq_len rows) unless attn_config turns on ALiBi or RoPE.
TransformerSpec mpt(const Config& c) {
    TransformerSpec s;
    s.hidden = c.integer("d_model");
    s.heads = c.integer("n_heads");
    s.layers = c.layers("n_layers");
    s.vocab = c.integer("vocab_size");
    std::int64_t max_seq = c.integer("max_seq_len", 2048);
    static const json empty = json::object();
    auto section = [&](const char* key) -> const json& {
        if (!c.has(key)) return empty;
        if (!c.raw(key).is_object()) c.fail(std::string("field '") + key + "' must be an object");
        return c.raw(key);
    };
    Config attn(section("attn_config"), "mpt attn_config"), ffn(section("ffn_config"), "mpt ffn_config");

    // llm-foundry's resolve_ffn_hidden_size: ffn_hidden_size if given, else int(d_model x expansion_ratio).
    double ratio = c.number("expansion_ratio", ffn.number("expansion_ratio", 4.0));
    double expanded = static_cast<double>(s.hidden) * ratio;
    if (!ffn.has("ffn_hidden_size") && !(expanded >= 1 && expanded <= double(limits::dimension)))
        c.fail("d_model x expansion_ratio is " + json(expanded).dump() +
               ", not between 1 and the limit of " + std::to_string(limits::dimension));
    s.intermediate = ffn.has("ffn_hidden_size") ? ffn.integer("ffn_hidden_size") : static_cast<std::int64_t>(expanded);
    std::string ffn_type = ffn.text("ffn_type", "mptmlp");
    // te_ln_mlp is Transformer Engine's fused LayerNorm + MLP: the same weights and work as mptmlp.
    if (ffn_type != "mptmlp" && ffn_type != "mptglu" && ffn_type != "te_ln_mlp")
        ffn.fail("unsupported ffn_type '" + ffn_type + "' (supported: mptmlp, mptglu, te_ln_mlp)");
    s.gated = ffn_type == "mptglu";
    s.activation = "gelu";  // llm-foundry's default ffn_act_fn: nn.GELU(approximate='none')
    if (ffn.has("ffn_act_fn")) {
        if (!ffn.raw("ffn_act_fn").is_object()) ffn.fail("field 'ffn_act_fn' must be an object such as {\"name\": \"gelu\"}");
        Config act(ffn.raw("ffn_act_fn"), "mpt ffn_act_fn");
        std::string name = act.text("name", "gelu");
        s.activation = name == "gelu" && act.text("approximate", "none") == "tanh" ? "gelu_tanh" : hf::activation(act, name);
    }

    bool bias = !c.boolean("no_bias", false);
    s.attention_bias = s.attention_out_bias = s.mlp_bias = bias;
    std::string norm = c.text("norm_type", "low_precision_layernorm");
    // The low-precision variants run the same norm in the autocast dtype: the same parameters and kernels.
    if (norm == "low_precision_layernorm" || norm == "layernorm") s.norm = "layernorm", s.norm_bias = bias;
    else if (norm == "rmsnorm" || norm == "low_precision_rmsnorm" || norm == "triton_rmsnorm") s.norm = "rmsnorm", s.norm_bias = false;
    else c.fail("unsupported norm_type '" + norm + "' (supported: low_precision_layernorm, layernorm, rmsnorm)");

    std::string attn_type = attn.text("attn_type", "multihead_attention");
    if (attn_type == "multihead_attention") s.kv_heads = s.heads;
    else if (attn_type == "multiquery_attention") s.kv_heads = 1;
    else if (attn_type == "grouped_query_attention") s.kv_heads = attn.integer("kv_n_heads", s.heads);
    else attn.fail("unsupported attn_type '" + attn_type + "'");
    // attn_impl names the kernel llm-foundry ran (flash and triton are both fused FlashAttention kernels, torch
    // materialises the scores). It wins over the default attention kernel, not over an explicit --attention
    // (build_transformer); the settings echoed with a result say which kernel the model ran.
    std::string impl = attn.text("attn_impl", "flash");
    if (impl != "flash" && impl != "triton" && impl != "torch")
        attn.fail("unsupported attn_impl '" + impl + "' (supported: flash, triton, torch)");
    s.config_flash = impl != "torch";
    // triton is Tri Dao's Triton FlashAttention of 2022 (llm-foundry's flash_attn_triton.py), a first-generation
    // kernel; flash is whichever flash-attn is installed (1.0.9 in llm-foundry's `gpu` extra, 2.x in `gpu-flash2`),
    // left at the default generation.
    if (impl == "triton") s.config_flash_generation = 1;
    if (attn.boolean("alibi", false)) s.position = "alibi";
    else if (attn.boolean("rope", false)) s.position = "rotary";
    else if (c.boolean("learned_pos_emb", true)) s.position = "learned", s.max_positions = max_seq;
    else s.position = "none";
    s.dropout = c.number("resid_pdrop", 0.0);
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = max_seq;
    return s;
}

}  // namespace

bool looks_like_hf_config(const json& document) { return document.is_object() && document.contains("model_type"); }

std::string document_dtype(const json& config) {
    if (!config.is_object()) return "";
    // transformers 5 writes `dtype`, earlier versions `torch_dtype`.
    for (const char* key : {"dtype", "torch_dtype"}) {
        auto it = config.find(key);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_string())
            throw Error(std::string("config.json: field '") + key + "' must be a string such as \"bfloat16\"");
        const std::string& d = it->get_ref<const std::string&>();
        if (d == "bfloat16") return "bf16";
        if (d == "float16") return "fp16";
        if (d == "float32") return "fp32";
        if (d == "auto") return "";
        throw Error(std::string("config.json: unsupported ") + key + " '" + d +
                    "' (supported: bfloat16, float16, float32, auto)");
    }
    return "";
}

TransformerSpec spec_from_hf_config(const json& config, const std::string& name) {
    if (!config.is_object()) throw Error("config.json must be a JSON object");
    if (!config.contains("model_type") || !config["model_type"].is_string())
        throw Error("config.json: missing field 'model_type' (a string such as \"llama\" or \"gpt2\")");
    const std::string type = config["model_type"];
    Config c(config, type);
    static const std::map<std::string, std::function<TransformerSpec(const Config&)>> importers = {
        {"llama", [](const Config& c) { return llama_family(c, "llama"); }},
        {"mistral", [](const Config& c) { return llama_family(c, "mistral"); }},
        {"mixtral", [](const Config& c) { return llama_family(c, "mixtral"); }},
        {"qwen2", [](const Config& c) { return llama_family(c, "qwen2"); }},
        {"gemma", [](const Config& c) { return llama_family(c, "gemma"); }},
        {"gpt2", gpt2},
        {"gpt_neox", gpt_neox},
        {"opt", opt},
        {"bloom", bloom},
        {"falcon", falcon},
        {"RefinedWeb", falcon},
        {"RefinedWebModel", falcon},
        {"bert", [](const Config& c) { return bert(c, false); }},
        {"roberta", [](const Config& c) { return bert(c, true); }},
        {"t5", [](const Config& c) { return t5(c, false); }},
        {"switch_transformers", [](const Config& c) { return t5(c, true); }},
        {"vit", vit},
        {"mpt", mpt},
        {"gemma2", [](const Config& c) { return llama_family(c, "gemma2"); }},
        {"gemma3_text", [](const Config& c) { return llama_family(c, "gemma3_text"); }},
        {"phi3", [](const Config& c) { return llama_family(c, "phi3"); }},
        {"qwen3", [](const Config& c) { return llama_family(c, "qwen3"); }},
        {"qwen2_moe", [](const Config& c) { return llama_family(c, "qwen2_moe"); }},
        {"qwen3_moe", [](const Config& c) { return llama_family(c, "qwen3_moe"); }},
        {"deepseek_v2", deepseek},
        {"deepseek_v3", deepseek},
        {"gpt_bigcode", gpt_bigcode},
        {"whisper", whisper},
        {"clip_vision_model", [](const Config& c) { return hf::clip_vision_tower(c, false); }},
        {"siglip_vision_model", [](const Config& c) { return hf::clip_vision_tower(c, true); }},
        {"llama4_text", llama4_text},
        {"olmo2", [](const Config& c) { return llama_family(c, "olmo2"); }},
        // State-space and hybrid models (importers/hf_state_space.cpp).
        {"mamba", [](const Config& c) { return state_space_spec_from_hf(c, "mamba"); }},
        {"falcon_mamba", [](const Config& c) { return state_space_spec_from_hf(c, "falcon_mamba"); }},
        {"mamba2", [](const Config& c) { return state_space_spec_from_hf(c, "mamba2"); }},
        {"jamba", [](const Config& c) { return state_space_spec_from_hf(c, "jamba"); }},
        {"zamba2", [](const Config& c) { return state_space_spec_from_hf(c, "zamba2"); }},
        {"falcon_h1", [](const Config& c) { return state_space_spec_from_hf(c, "falcon_h1"); }},
        {"bamba", [](const Config& c) { return state_space_spec_from_hf(c, "bamba"); }},
    };
    // Multimodal configs whose part we import: Gemma 3's text model (text_config), CLIP's and SigLIP's vision towers.
    if (type == "gemma3") {
        if (!config.contains("text_config") || !config["text_config"].is_object())
            c.fail("missing object 'text_config' (Gemma 3's language model is what is imported)");
        json text = config["text_config"];
        text["model_type"] = "gemma3_text";
        // A multimodal config's text_config lists only what differs from Gemma3TextConfig's defaults (4B-sized).
        const json defaults = {{"vocab_size", 262208}, {"hidden_size", 2304}, {"intermediate_size", 9216},
                               {"num_hidden_layers", 26}, {"num_attention_heads", 8}, {"num_key_value_heads", 4},
                               {"head_dim", 256}, {"max_position_embeddings", 131072}, {"sliding_window", 4096},
                               {"sliding_window_pattern", 6}, {"hidden_activation", "gelu_pytorch_tanh"}};
        for (const auto& [k, v] : defaults.items())
            if (!text.contains(k)) text[k] = v;
        // The text config leaves out what it has by default; the multimodal config's torch_dtype applies to it.
        for (const char* key : {"torch_dtype", "dtype"})
            if (config.contains(key) && !text.contains(key)) text[key] = config[key];
        TransformerSpec spec = spec_from_hf_config(text, name);
        spec.notes.push_back("imported the language model of this Gemma 3 config; its vision tower and projector are left out");
        return spec;
    }
    // Llama 4's multimodal config: its language model, as Gemma 3's.
    if (type == "llama4") {
        if (!config.contains("text_config") || !config["text_config"].is_object())
            c.fail("missing object 'text_config' (Llama 4's language model is what is imported)");
        json text = config["text_config"];
        text["model_type"] = "llama4_text";
        for (const char* key : {"torch_dtype", "dtype"})
            if (config.contains(key) && !text.contains(key)) text[key] = config[key];
        TransformerSpec spec = spec_from_hf_config(text, name);
        spec.notes.push_back("imported the language model of this Llama 4 config; its vision tower and projector are left out");
        return spec;
    }
    if (type == "clip" || type == "siglip") {
        TransformerSpec spec = vision_tower_of(c, config, type == "siglip");
        spec.dtype = document_dtype(config);
        spec.name = name;
        return spec;
    }
    auto it = importers.find(type);
    if (it == importers.end()) {
        std::string known;
        for (const auto& [k, v] : importers) known += (known.empty() ? "" : ", ") + k;
        known += ", gemma3, llama4, clip, siglip, and the vision-language llava, llava_next, qwen2_vl, qwen2_5_vl, idefics3, paligemma";
        throw Error("config.json: unsupported model_type '" + type + "' (supported: " + known + ")");
    }
    TransformerSpec spec = it->second(c);
    // The attention kernel transformers was told to run (from_pretrained's attn_implementation, kept in a saved
    // config as _attn_implementation): eager materialises the scores; sdpa, flash_attention_2/3 and flex
    // attention are fused kernels. It wins over the default, not over an explicit --attention.
    for (const char* key : {"attn_implementation", "_attn_implementation"}) {
        if (!c.has(key) || config[key].is_null()) continue;
        std::string impl = c.text(key, "");
        if (impl == "eager") spec.config_flash = false;
        else if (impl == "sdpa" || impl == "flash_attention_2" || impl == "flash_attention_3" || impl == "flex_attention")
            spec.config_flash = true;
        else
            c.fail("unsupported " + std::string(key) + " '" + impl +
                   "' (supported: eager, sdpa, flash_attention_2, flash_attention_3, flex_attention)");
    }
    spec.dtype = document_dtype(config);
    if (spec.arch == "vit" && spec.classes == 0 && c.has("id2label")) spec.classes = static_cast<std::int64_t>(config["id2label"].size());
    if (type == "gemma") spec.activation = "gelu_tanh";
    spec.name = name;
    return spec;
}

}  // namespace prenet
