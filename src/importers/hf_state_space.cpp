// Hugging Face config.json readers of the state-space and hybrid types (importers/state_space.hpp), each after the
// transformers modelling code of its type: which mixer and feed-forward every layer has, and their sizes.
// Scaling multipliers (Falcon-H1's muP multipliers, Zamba2's and Jamba's residual settings) change no cost and are
// not read.
#include <cmath>

#include "importers/hf_fields.hpp"
#include "importers/state_space.hpp"

namespace prenet {
namespace {

using hf::Config;

// Fields every type shares with a Llama-style decoder: RMS norms without bias, no position table, the LM head
// tied as tie_word_embeddings says (`tied` its default for the type).
TransformerSpec decoder_base(const Config& c, bool tied) {
    TransformerSpec s;
    s.arch = "state_space";
    s.norm = "rmsnorm", s.norm_bias = false, s.position = "none";
    s.attention_bias = s.attention_out_bias = s.mlp_bias = false;
    s.separate_qkv = true, s.gated = true, s.activation = "silu";
    s.vocab = c.integer("vocab_size");
    s.tied_embeddings = c.boolean("tie_word_embeddings", tied);
    s.default_seq = 2048;
    return s;
}

// An integer field that may also be "auto" (Mamba's time_step_rank, Bamba's mamba_d_head): `automatic` then.
std::int64_t integer_or_auto(const Config& c, const char* key, std::int64_t automatic) {
    if (c.has(key) && c.raw(key).is_string()) {
        if (c.raw(key) != "auto") c.fail(std::string("field '") + key + "' must be an integer or \"auto\"");
        return automatic;
    }
    std::int64_t v = c.integer(key, automatic);
    if (v <= 0) c.fail(std::string("field '") + key + "' must be positive");
    return v;
}

std::int64_t positive(const Config& c, const char* key, std::int64_t fallback) {
    std::int64_t v = c.integer(key, fallback);
    if (v <= 0) c.fail(std::string("field '") + key + "' must be positive, got " + std::to_string(v));
    return v;
}

std::int64_t positive(const Config& c, const char* key) {
    std::int64_t v = c.integer(key);
    if (v <= 0) c.fail(std::string("field '") + key + "' must be positive, got " + std::to_string(v));
    return v;
}

// Mamba-2's heads: heads x head_dim must be the inner size (the modelling code splits d_inner into them), and the
// groups must divide the heads.
void check_mamba2_heads(const Config& c, const SsmSpec& m, std::int64_t heads, const char* heads_key,
                        const char* head_dim_key, const char* groups_key) {
    if (heads * m.head_dim != m.d_inner)
        c.fail(std::string("fields '") + heads_key + "' (" + std::to_string(heads) + ") x '" + head_dim_key + "' (" +
               std::to_string(m.head_dim) + ") must equal the SSM inner size " + std::to_string(m.d_inner));
    if (heads % m.groups)
        c.fail(std::string("field '") + groups_key + "' (" + std::to_string(m.groups) + ") must divide the " +
               std::to_string(heads) + " SSM heads");
}

// The Mamba-2 mixer's fields as Bamba and Falcon-H1 name them (mamba_*), for the inner size the caller read.
void read_prefixed_mamba2(const Config& c, SsmSpec& m, std::int64_t d_inner) {
    m.version = 2;
    m.d_inner = d_inner;
    std::int64_t heads = positive(c, "mamba_n_heads", 128);
    m.head_dim = integer_or_auto(c, "mamba_d_head", m.d_inner / heads);
    m.d_state = positive(c, "mamba_d_state", 256);
    m.groups = positive(c, "mamba_n_groups", 1);
    m.chunk = positive(c, "mamba_chunk_size", 256);
    m.d_conv = positive(c, "mamba_d_conv", 4);
    m.conv_bias = c.boolean("mamba_conv_bias", true);
    m.bias = c.boolean("mamba_proj_bias", false);
    check_mamba2_heads(c, m, heads, "mamba_n_heads", "mamba_d_head", "mamba_n_groups");
}

std::vector<HybridLayer> uniform_layers(std::int64_t layers, HybridLayer l) {
    return std::vector<HybridLayer>(size_t(layers), l);
}

// A list of layer indices (Bamba's attn_layer_indices), each below `layers`.
std::vector<bool> layer_set(const Config& c, const char* key, std::int64_t layers) {
    std::vector<bool> in(size_t(layers), false);
    if (!c.has(key)) return in;
    const json& list = c.raw(key);
    if (!list.is_array()) c.fail(std::string("field '") + key + "' must be a list of layer indices");
    for (const auto& i : list) {
        if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::int64_t>() >= layers)
            c.fail(std::string("field '") + key + "' holds " + i.dump() + ", not a layer index below " +
                   std::to_string(layers));
        in[size_t(i.get<std::int64_t>())] = true;
    }
    return in;
}

// Mamba (state-spaces/mamba-*-hf) and Falcon-Mamba: Mamba-1 mixers only, each behind an RMS norm; Falcon-Mamba
// adds parameter-free RMS norms of dt, B and C (mixer_rms_eps).
TransformerSpec mamba(const Config& c, bool falcon) {
    TransformerSpec s = decoder_base(c, true);
    s.hidden = positive(c, "hidden_size");
    s.layers = c.layers_any({"num_hidden_layers", "n_layer"});
    SsmSpec& m = s.ssm;
    m.version = 1;
    m.d_inner = positive(c, "intermediate_size", positive(c, "expand", 2) * s.hidden);
    m.d_state = positive(c, "state_size");
    m.d_conv = positive(c, "conv_kernel", 4);
    m.dt_rank = integer_or_auto(c, "time_step_rank", (s.hidden + 15) / 16);
    m.conv_bias = c.boolean("use_conv_bias", true);
    m.bias = c.boolean("use_bias", false);
    m.inner_norms = falcon ? "unweighted" : "none";
    HybridLayer l;
    l.ssm = true;
    s.hybrid_layers = uniform_layers(s.layers, l);
    return s;
}

// Mamba-2 (Mamba2ForCausalLM, e.g. Mamba-Codestral-7B): Mamba-2 mixers only.
TransformerSpec mamba2(const Config& c) {
    TransformerSpec s = decoder_base(c, false);
    s.hidden = positive(c, "hidden_size");
    s.layers = c.layers("num_hidden_layers");
    SsmSpec& m = s.ssm;
    m.version = 2;
    m.d_inner = positive(c, "expand", 2) * s.hidden;
    m.head_dim = positive(c, "head_dim", 64);
    m.d_state = positive(c, "state_size", 128);
    m.groups = positive(c, "n_groups", 1);
    m.chunk = positive(c, "chunk_size", 256);
    m.d_conv = positive(c, "conv_kernel", 4);
    m.conv_bias = c.boolean("use_conv_bias", true);
    m.bias = c.boolean("use_bias", false);
    m.gated_norm = c.boolean("rms_norm", true);
    check_mamba2_heads(c, m, positive(c, "num_heads", m.d_inner / m.head_dim), "num_heads", "head_dim", "n_groups");
    HybridLayer l;
    l.ssm = true;
    s.hybrid_layers = uniform_layers(s.layers, l);
    return s;
}

// The attention and feed-forward fields of the hybrids (Llama-style: GQA, gated SiLU MLP, no biases).
void read_attention_and_mlp(const Config& c, TransformerSpec& s) {
    s.heads = positive(c, "num_attention_heads");
    s.kv_heads = positive(c, "num_key_value_heads", s.heads);
    s.intermediate = positive(c, "intermediate_size");
    s.activation = hf::activation(c, c.text("hidden_act", "silu"));
}

// Jamba: Mamba-1 mixers (with weighted RMS norms of dt, B and C) except every attn_layer_period-th layer from
// attn_layer_offset, which is attention (no positional encoding); every expert_layer_period-th feed-forward from
// expert_layer_offset is a mixture of num_experts experts (a dense MLP when there is one expert).
TransformerSpec jamba(const Config& c) {
    TransformerSpec s = decoder_base(c, true);
    s.hidden = positive(c, "hidden_size");
    s.layers = c.layers("num_hidden_layers");
    read_attention_and_mlp(c, s);
    SsmSpec& m = s.ssm;
    m.version = 1;
    m.d_inner = positive(c, "mamba_expand", 2) * s.hidden;
    m.d_state = positive(c, "mamba_d_state", 16);
    m.d_conv = positive(c, "mamba_d_conv", 4);
    m.dt_rank = integer_or_auto(c, "mamba_dt_rank", (s.hidden + 15) / 16);
    m.conv_bias = c.boolean("mamba_conv_bias", true);
    m.bias = c.boolean("mamba_proj_bias", false);
    m.inner_norms = "weighted";
    std::int64_t attn_period = positive(c, "attn_layer_period", 8), attn_offset = c.integer("attn_layer_offset", 4);
    std::int64_t expert_period = positive(c, "expert_layer_period", 2), expert_offset = c.integer("expert_layer_offset", 1);
    if (attn_offset >= attn_period) c.fail("field 'attn_layer_offset' must be below 'attn_layer_period'");
    if (expert_offset >= expert_period) c.fail("field 'expert_layer_offset' must be below 'expert_layer_period'");
    s.experts = positive(c, "num_experts", 16);
    s.top_k = positive(c, "num_experts_per_tok", 2);
    if (s.top_k > s.experts)
        c.fail("field 'num_experts_per_tok' (" + std::to_string(s.top_k) + ") must not exceed 'num_experts' (" +
               std::to_string(s.experts) + ")");
    s.moe_intermediate = s.intermediate;
    for (std::int64_t i = 0; i < s.layers; ++i) {
        HybridLayer l;
        l.attention = i % attn_period == attn_offset;
        l.ssm = !l.attention;
        l.ffn = s.experts > 1 && i % expert_period == expert_offset ? "moe" : "mlp";
        s.hybrid_layers.push_back(l);
    }
    if (s.experts == 1) s.experts = s.top_k = 0;
    return s;
}

// Bamba: Mamba-2 mixers except attention (rotary) at attn_layer_indices; a gated MLP in every layer.
TransformerSpec bamba(const Config& c) {
    TransformerSpec s = decoder_base(c, false);
    s.hidden = positive(c, "hidden_size");
    s.layers = c.layers("num_hidden_layers");
    read_attention_and_mlp(c, s);
    s.position = "rotary";
    read_prefixed_mamba2(c, s.ssm, positive(c, "mamba_expand", 2) * s.hidden);
    std::vector<bool> attention = layer_set(c, "attn_layer_indices", s.layers);
    for (std::int64_t i = 0; i < s.layers; ++i) {
        HybridLayer l;
        l.attention = attention[size_t(i)];
        l.ssm = !l.attention;
        l.ffn = "mlp";
        s.hybrid_layers.push_back(l);
    }
    return s;
}

// Falcon-H1: in every layer attention (rotary) and Mamba-2 side by side on the same normed input, their outputs
// summed, then a gated MLP. The muP multipliers scale activations and change no cost.
TransformerSpec falcon_h1(const Config& c) {
    TransformerSpec s = decoder_base(c, false);
    s.hidden = positive(c, "hidden_size");
    s.layers = c.layers("num_hidden_layers");
    read_attention_and_mlp(c, s);
    s.head_dim = positive(c, "head_dim", s.hidden / s.heads);
    s.position = "rotary";
    s.attention_bias = s.attention_out_bias = c.boolean("attention_bias", false);
    s.mlp_bias = c.boolean("mlp_bias", false);
    read_prefixed_mamba2(c, s.ssm, positive(c, "mamba_d_ssm", positive(c, "mamba_expand", 2) * s.hidden));
    s.ssm.gated_norm = c.boolean("mamba_rms_norm", false);
    if (c.has("attn_layer_indices") && !c.raw("attn_layer_indices").is_null())
        c.fail("field 'attn_layer_indices' is not supported: Falcon-H1 runs attention in every layer");
    HybridLayer l;
    l.attention = l.ssm = true;
    l.ffn = c.boolean("mamba_use_mlp", true) ? "mlp" : "none";
    s.hybrid_layers = uniform_layers(s.layers, l);
    return s;
}

// Zamba2: Mamba-2 layers; before each "hybrid" layer of layers_block_type one of num_mem_blocks shared transformer
// blocks (in turn), whose attention reads the hidden states concatenated with the embeddings, with a LoRA adapter
// of adapter_rank per invocation on its MLP (and on q, k, v with use_shared_attention_adapter).
TransformerSpec zamba2(const Config& c) {
    TransformerSpec s = decoder_base(c, true);
    s.hidden = positive(c, "hidden_size");
    s.layers = c.layers("num_hidden_layers");
    s.heads = positive(c, "num_attention_heads");
    s.kv_heads = positive(c, "num_key_value_heads", s.heads);
    std::int64_t attention_width = positive(c, "attention_hidden_size", 2 * s.hidden);
    if (attention_width != 2 * s.hidden)
        c.fail("field 'attention_hidden_size' must be twice 'hidden_size' (the shared block reads the hidden states "
               "concatenated with the embeddings), got " + std::to_string(attention_width));
    s.head_dim = positive(c, "attention_head_dim", attention_width / s.heads);
    s.intermediate = positive(c, "intermediate_size", 4 * s.hidden);
    s.activation = hf::activation(c, c.text("hidden_act", "gelu"));
    s.attention_bias = s.attention_out_bias = s.mlp_bias = c.boolean("add_bias_linear", false);
    if (c.boolean("use_mem_rope", false)) s.position = "rotary";
    s.shared_blocks = positive(c, "num_mem_blocks", 1);
    if (s.shared_blocks > s.layers)
        c.fail("field 'num_mem_blocks' (" + std::to_string(s.shared_blocks) + ") must not exceed the " +
               std::to_string(s.layers) + " layers");
    s.shared_adapter_rank = c.integer("adapter_rank", 128);
    s.shared_attention_adapter = c.boolean("use_shared_attention_adapter", false);
    SsmSpec& m = s.ssm;
    m.version = 2;
    m.d_inner = positive(c, "mamba_expand", 2) * s.hidden;
    m.head_dim = positive(c, "mamba_headdim", 64);
    m.d_state = positive(c, "mamba_d_state", 64);
    m.groups = positive(c, "mamba_ngroups", 1);
    m.chunk = positive(c, "chunk_size", 256);
    m.d_conv = positive(c, "mamba_d_conv", 4);
    m.conv_bias = c.boolean("use_conv_bias", true);
    m.bias = c.boolean("add_bias_linear", false);
    check_mamba2_heads(c, m, positive(c, "n_mamba_heads", m.d_inner / m.head_dim), "n_mamba_heads", "mamba_headdim",
                       "mamba_ngroups");
    if (!c.has("layers_block_type")) c.fail("missing field 'layers_block_type' (\"mamba\" or \"hybrid\" per layer)");
    const json& types = c.raw("layers_block_type");
    if (!types.is_array() || std::int64_t(types.size()) != s.layers)
        c.fail("field 'layers_block_type' must list one block type per layer (" + std::to_string(s.layers) + ")");
    std::int64_t hybrids = 0;
    for (const auto& t : types) {
        if (!t.is_string() || (t != "mamba" && t != "hybrid"))
            c.fail("field 'layers_block_type' holds " + t.dump() + " (supported: mamba, hybrid)");
        HybridLayer l;
        l.ssm = true;
        if (t == "hybrid") l.shared_block = hybrids++ % s.shared_blocks;
        s.hybrid_layers.push_back(l);
    }
    s.notes.push_back("Zamba2's shared blocks are costed at every invocation and their weights counted once; the "
                      "concatenation with the embeddings and the adapters' sums into their projections are left out");
    return s;
}

}  // namespace

TransformerSpec state_space_spec_from_hf(const hf::Config& c, const std::string& type) {
    if (type == "mamba") return mamba(c, false);
    if (type == "falcon_mamba") return mamba(c, true);
    if (type == "mamba2") return mamba2(c);
    if (type == "jamba") return jamba(c);
    if (type == "bamba") return bamba(c);
    if (type == "falcon_h1") return falcon_h1(c);
    if (type == "zamba2") return zamba2(c);
    c.fail("not a state-space model type");
}

}  // namespace prenet
