#include "importers/hf_config.hpp"

#include <cmath>
#include <functional>
#include <map>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace prenet {
namespace {

// Typed access to a config with errors that say which model type and field are at fault.
class Config {
public:
    Config(const json& j, std::string type) : j_(j), type_(std::move(type)) {}

    std::int64_t integer(const char* key) const {
        const json* v = find(key);
        if (!v) fail(std::string("missing field '") + key + "'");
        return to_int(key, *v);
    }
    std::int64_t integer(const char* key, std::int64_t fallback) const {
        const json* v = find(key);
        return v ? to_int(key, *v) : fallback;
    }
    // First present of several synonyms (e.g. n_embd / hidden_size).
    std::int64_t integer_any(std::initializer_list<const char*> keys) const {
        for (const char* k : keys)
            if (find(k)) return integer(k);
        std::string names;
        for (const char* k : keys) names += std::string(names.empty() ? "'" : " or '") + k + "'";
        fail("missing field " + names);
    }
    bool boolean(const char* key, bool fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) fail(std::string("field '") + key + "' must be true or false");
        return v->get<bool>();
    }
    double number(const char* key, double fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_number()) fail(std::string("field '") + key + "' must be a number");
        double x = v->get<double>();
        if (!std::isfinite(x) || std::fabs(x) > double(limits::dimension))
            fail(std::string("field '") + key + "' is " + v->dump() + ", out of the range +-" +
                 std::to_string(limits::dimension));
        return x;
    }
    std::string text(const char* key, const std::string& fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_string()) fail(std::string("field '") + key + "' must be a string");
        return v->get<std::string>();
    }
    bool has(const char* key) const { return find(key) != nullptr; }
    const json& raw(const char* key) const { return *find(key); }
    [[noreturn]] void fail(const std::string& message) const {
        throw Error("config.json (model_type '" + type_ + "'): " + message);
    }

private:
    const json* find(const char* key) const {
        auto it = j_.find(key);
        return (it == j_.end() || it->is_null()) ? nullptr : &*it;
    }
    std::int64_t to_int(const char* key, const json& v) const {
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(limits::dimension))
            fail(std::string("field '") + key + "' is " + v.dump() + ", over the limit of " +
                 std::to_string(limits::dimension) + " on any dimension");
        if (v.is_number_integer()) {
            std::int64_t x = v.get<std::int64_t>();
            if (x < 0) fail(std::string("field '") + key + "' must not be negative");
            if (x > limits::dimension)
                fail(std::string("field '") + key + "' is " + std::to_string(x) + ", over the limit of " +
                     std::to_string(limits::dimension) + " on any dimension");
            return x;
        }
        fail(std::string("field '") + key + "' must be an integer, got " + v.dump());
    }
    const json& j_;
    std::string type_;
};

std::string hf_activation(const Config& c, const std::string& act) {
    // gelu_new runs as eight unfused PyTorch ops in Hugging Face; gelu_pytorch_tanh is one fused kernel.
    if (act == "gelu_new" || act == "gelu_fast") return "gelu_new";
    if (act == "gelu_pytorch_tanh" || act == "gelu_tanh") return "gelu_tanh";
    if (act == "gelu" || act == "gelu_python") return "gelu";
    if (act == "relu") return "relu";
    if (act == "silu" || act == "swish") return "silu";
    c.fail("unsupported activation '" + act + "'");
}

TransformerSpec llama_family(const Config& c, const std::string& type) {
    TransformerSpec s;
    s.separate_qkv = true;  // Hugging Face's modelling code: query, key and value linears
    s.hidden = c.integer("hidden_size");
    s.layers = c.integer("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.kv_heads = c.integer("num_key_value_heads", s.heads);
    s.intermediate = c.integer("intermediate_size");
    s.vocab = c.integer("vocab_size");
    s.head_dim = c.integer("head_dim", 0);
    s.activation = hf_activation(c, c.text("hidden_act", c.text("hidden_activation", "silu")));
    s.gated = true, s.norm = "rmsnorm", s.norm_bias = false, s.position = "rotary";
    bool bias = c.boolean("attention_bias", type == "qwen2");
    s.attention_bias = bias, s.attention_out_bias = type == "qwen2" ? false : bias;
    s.mlp_bias = c.boolean("mlp_bias", false);
    s.tied_embeddings = c.boolean("tie_word_embeddings", type == "gemma");
    s.default_seq = std::min<std::int64_t>(c.integer("max_position_embeddings", 4096), 8192);
    if (type == "mixtral") {
        s.experts = c.integer("num_local_experts");
        s.top_k = c.integer("num_experts_per_tok");
        s.moe_intermediate = s.intermediate;
    }
    return s;
}

TransformerSpec gpt2(const Config& c) {
    TransformerSpec s;
    s.hidden = c.integer_any({"n_embd", "hidden_size"});
    s.layers = c.integer_any({"n_layer", "num_hidden_layers"});
    s.heads = c.integer_any({"n_head", "num_attention_heads"});
    s.intermediate = c.integer("n_inner", 4 * s.hidden);
    s.vocab = c.integer("vocab_size");
    s.max_positions = c.integer_any({"n_positions", "n_ctx"});
    s.activation = hf_activation(c, c.text("activation_function", "gelu_new"));
    s.dropout = c.number("resid_pdrop", 0.1);
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = s.max_positions;
    return s;
}

TransformerSpec gpt_neox(const Config& c) {
    TransformerSpec s;
    s.hidden = c.integer("hidden_size");
    s.layers = c.integer("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.intermediate = c.integer("intermediate_size");
    s.vocab = c.integer("vocab_size");
    s.activation = hf_activation(c, c.text("hidden_act", "gelu"));
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
    s.layers = c.integer("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.intermediate = c.integer("ffn_dim");
    s.vocab = c.integer("vocab_size");
    s.max_positions = c.integer("max_position_embeddings") + 2;  // OPT offsets positions by 2
    s.activation = hf_activation(c, c.text("activation_function", "relu"));
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
    s.layers = c.integer_any({"n_layer", "num_hidden_layers"});
    s.heads = c.integer_any({"n_head", "num_attention_heads"});
    s.intermediate = 4 * s.hidden;
    s.vocab = c.integer("vocab_size");
    s.activation = "gelu_tanh", s.position = "alibi", s.embedding_norm = true;
    s.tied_embeddings = c.boolean("tie_word_embeddings", true);
    s.default_seq = 2048;
    return s;
}

TransformerSpec falcon(const Config& c) {
    TransformerSpec s;
    s.hidden = c.integer("hidden_size");
    s.layers = c.integer_any({"num_hidden_layers", "n_layer"});
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
    s.layers = c.integer("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.intermediate = c.integer("intermediate_size");
    s.vocab = c.integer("vocab_size");
    s.max_positions = c.integer("max_position_embeddings");
    s.type_vocab = c.integer("type_vocab_size", roberta ? 1 : 2);
    s.activation = hf_activation(c, c.text("hidden_act", "gelu"));
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
    s.layers = c.integer("num_layers");
    s.decoder_layers = c.integer("num_decoder_layers", s.layers);
    s.heads = c.integer("num_heads");
    s.vocab = c.integer("vocab_size");
    s.relative_buckets = c.integer("relative_attention_num_buckets", 32);
    std::string ff = c.text("feed_forward_proj", "relu");
    s.gated = ff.rfind("gated-", 0) == 0;
    s.activation = hf_activation(c, s.gated ? ff.substr(6) == "gelu" ? "gelu_new" : ff.substr(6) : ff);
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
        if (step == 0) s.experts = 0;
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
    s.layers = c.integer("num_hidden_layers");
    s.heads = c.integer("num_attention_heads");
    s.intermediate = c.integer("intermediate_size");
    s.image = c.integer("image_size", 224);
    s.patch = c.integer("patch_size", 16);
    s.channels = c.integer("num_channels", 3);
    s.activation = hf_activation(c, c.text("hidden_act", "gelu"));
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
    s.layers = c.integer("n_layers");
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
        s.activation = name == "gelu" && act.text("approximate", "none") == "tanh" ? "gelu_tanh" : hf_activation(act, name);
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
    };
    auto it = importers.find(type);
    if (it == importers.end()) {
        std::string known;
        for (const auto& [k, v] : importers) known += (known.empty() ? "" : ", ") + k;
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
    if (spec.arch == "vit" && spec.classes == 0) spec.classes = static_cast<std::int64_t>(config["id2label"].size());
    if (type == "gemma") spec.activation = "gelu_tanh";
    spec.name = name;
    return spec;
}

}  // namespace prenet
