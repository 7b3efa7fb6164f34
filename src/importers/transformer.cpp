#include "importers/transformer.hpp"

#include <algorithm>
#include <cmath>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "graph/builder.hpp"
#include "importers/state_space.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

void require_positive(const TransformerSpec& s, std::int64_t v, const char* field) {
    if (v <= 0) throw Error("model '" + s.name + "': " + field + " must be positive, got " + std::to_string(v));
}

// Every count of the spec within the limits (core/limits.hpp) before anything multiplies or loops over it.
void check_bounds(const TransformerSpec& s) {
    auto bound = [&](std::int64_t v, std::int64_t hi, const char* field) {
        if (v < 0 || v > hi)
            throw Error("model '" + s.name + "': " + field + " is " + std::to_string(v) + ", out of the range 0 to " +
                        std::to_string(hi) + (hi == limits::layers ? " (the limit on layers)" : " (the limit on any dimension)"));
    };
    const std::int64_t dim = limits::dimension;
    bound(s.layers, limits::layers, "number of layers");
    bound(s.decoder_layers, limits::layers, "number of decoder layers");
    bound(s.moe_every, limits::layers, "sparse layer step");
    if (s.moe_every < 1) throw Error("model '" + s.name + "': sparse layer step must be positive");
    for (auto [v, field] : std::initializer_list<std::pair<std::int64_t, const char*>>{
             {s.vocab, "vocabulary size"}, {s.hidden, "hidden size"}, {s.heads, "number of attention heads"},
             {s.kv_heads, "key/value heads"}, {s.head_dim, "head dimension"}, {s.intermediate, "intermediate size"},
             {s.max_positions, "max position embeddings"}, {s.type_vocab, "token type vocabulary"},
             {s.word_embed_proj_dim, "word embedding projection"}, {s.experts, "number of experts"},
             {s.top_k, "experts per token"}, {s.moe_intermediate, "expert intermediate size"},
             {s.shared_experts, "shared experts"}, {s.shared_intermediate, "shared expert intermediate size"},
             {s.expert_groups, "expert groups"}, {s.groups_per_token, "expert groups per token"},
             {s.q_lora_rank, "q_lora_rank"}, {s.kv_lora_rank, "kv_lora_rank"}, {s.qk_nope_head_dim, "qk_nope_head_dim"},
             {s.qk_rope_head_dim, "qk_rope_head_dim"}, {s.v_head_dim, "v_head_dim"},
             {s.relative_buckets, "relative attention buckets"}, {s.image, "image size"}, {s.patch, "patch size"},
             {s.channels, "channels"}, {s.classes, "classes"}, {s.default_seq, "default sequence length"},
             {s.sliding_window, "sliding window"}, {s.window_pattern, "sliding window pattern"},
             {s.mel_bins, "mel bins"}, {s.encoder_positions, "encoder positions"}})
        bound(v, dim, field);
    if (s.moe_first_dense < -limits::layers || s.moe_first_dense > limits::layers)
        throw Error("model '" + s.name + "': first sparse layer " + std::to_string(s.moe_first_dense) +
                    " is out of the range +-" + std::to_string(limits::layers));
    if (!std::isfinite(s.dropout) || s.dropout < 0 || s.dropout >= 1)
        throw Error("model '" + s.name + "': dropout must be in [0, 1)");
    for (double cap : {s.attn_softcap, s.final_softcap})
        if (!std::isfinite(cap) || cap < 0) throw Error("model '" + s.name + "': logit soft-capping must be a non-negative number");
    if (s.local_layers.size() > size_t(limits::layers) || s.dense_layers.size() > size_t(limits::layers))
        throw Error("model '" + s.name + "': more per-layer entries than the limit of " + std::to_string(limits::layers));
    if (!std::isfinite(s.capacity_factor) || s.capacity_factor <= 0 || s.capacity_factor > 1e6)
        throw Error("model '" + s.name + "': capacity factor must be positive and at most 1e6");
}

void validate(const TransformerSpec& s) {
    check_bounds(s);
    require_positive(s, s.hidden, "hidden size");
    require_positive(s, s.layers, "number of layers");
    require_positive(s, s.heads, "number of attention heads");
    if (s.arch != "vit") require_positive(s, s.vocab, "vocabulary size");
    if (!s.mla && s.head_dim == 0 && s.hidden % s.heads)
        throw Error("model '" + s.name + "': hidden size " + std::to_string(s.hidden) +
                    " is not divisible by the number of heads " + std::to_string(s.heads));
    if (s.kv_heads && s.heads % s.kv_heads)
        throw Error("model '" + s.name + "': key/value heads " + std::to_string(s.kv_heads) + " must divide heads " +
                    std::to_string(s.heads));
    // Also with no experts: a config asking for 8 experts per token among 0 (num_local_experts 0) is not quietly a
    // dense model. Importers whose family means dense by 0 experts clear top_k and say so in a note.
    if ((s.experts || s.top_k) && (s.top_k <= 0 || s.top_k > s.experts))
        throw Error("model '" + s.name + "': experts per token (" + std::to_string(s.top_k) +
                    ") must be between 1 and the number of experts (" + std::to_string(s.experts) + ")");
}

json norm_attrs(const TransformerSpec& s) { return {{"bias", s.norm_bias}}; }

// `extra`: attributes added to the layer's (a shared layer's shares_weights, an attention's out_features).
void add_norm(ModelBuilder& b, const TransformerSpec& s, const std::string& name, const json& extra = json::object()) {
    json attrs = norm_attrs(s);
    attrs.update(extra);
    b.add(s.norm, name, std::move(attrs));
}

json attention_kernel_attrs(const TransformerSpec& s, bool causal);

// A block's attention layer: its shape and kernel, and the generation of a fused kernel other than the second.
json attention_attrs(const TransformerSpec& s, bool causal) {
    json a = attention_kernel_attrs(s, causal);
    if (s.flash && s.flash_generation != 2) a["flash_generation"] = s.flash_generation;
    return a;
}

json attention_kernel_attrs(const TransformerSpec& s, bool causal) {
    if (s.mla)
        return {{"heads", s.heads},
                {"q_lora_rank", s.q_lora_rank},
                {"kv_lora_rank", s.kv_lora_rank},
                {"qk_nope_head_dim", s.qk_nope_head_dim},
                {"qk_rope_head_dim", s.qk_rope_head_dim},
                {"v_head_dim", s.v_head_dim},
                {"causal", causal},
                {"flash", s.flash}};
    json a = {{"heads", s.heads},
              {"kv_heads", s.kv_heads ? s.kv_heads : s.heads},
              {"causal", causal},
              {"flash", s.flash},
              {"bias", s.attention_bias},
              {"out_bias", s.attention_out_bias},
              {"position", s.position == "learned" ? "none" : s.position},
              {"dropout", s.dropout}};
    if (s.head_dim) a["head_dim"] = s.head_dim;
    if (s.separate_qkv) a["projections"] = "separate";
    if (s.qk_norm) a["qk_norm"] = true;
    if (s.qk_norm && s.qk_norm_weights != "head") a["qk_norm_weights"] = s.qk_norm_weights;
    if (!s.key_bias) a["key_bias"] = false;
    if (s.attn_softcap > 0) a["softcap"] = s.attn_softcap;
    return a;
}

// Which optional parts a given layer index has; identical signatures are stored once in a repeated block.
struct LayerSignature {
    bool moe = false;
    bool relative_bias = false;
    bool local = false;  // sliding-window attention
    bool operator==(const LayerSignature& o) const {
        return moe == o.moe && relative_bias == o.relative_bias && local == o.local;
    }
};

LayerSignature signature(const TransformerSpec& s, std::int64_t i) {
    LayerSignature sig;
    if (s.experts > 0 && i >= s.moe_first_dense) sig.moe = (i - s.moe_first_dense) % s.moe_every == s.moe_every - 1;
    if (sig.moe && i < std::int64_t(s.dense_layers.size()) && s.dense_layers[size_t(i)]) sig.moe = false;
    sig.relative_bias = s.position == "relative" && i == 0;
    if (s.sliding_window > 0 || s.chunked_local_rope) {
        if (!s.local_layers.empty()) sig.local = i < std::int64_t(s.local_layers.size()) && s.local_layers[size_t(i)];
        else sig.local = s.window_pattern <= 1 || (i + 1) % s.window_pattern != 0;
    }
    return sig;
}

void add_ffn(ModelBuilder& b, const TransformerSpec& s, const LayerSignature& sig, const json& extra = json::object()) {
    if (sig.moe) {
        json moe = {{"experts", s.experts},
                    {"top_k", s.top_k},
                    {"intermediate", s.moe_intermediate ? s.moe_intermediate : s.intermediate},
                    {"activation", s.activation},
                    {"gated", s.gated},
                    {"bias", s.mlp_bias},
                    {"capacity_factor", s.capacity_factor},
                    {"shared_experts", s.shared_experts},
                    {"shared_intermediate", s.shared_intermediate ? s.shared_intermediate : s.moe_intermediate},
                    {"router_bias", s.router_bias},
                    {"shared_gate", s.shared_gate}};
        if (s.groups_per_token > 0) {
            moe["expert_groups"] = s.expert_groups;
            moe["groups_per_token"] = s.groups_per_token;
        }
        moe.update(extra);
        b.add("moe", "moe", std::move(moe));
    } else {
        json mlp = {{"intermediate", s.intermediate}, {"activation", s.activation}, {"gated", s.gated}, {"bias", s.mlp_bias}};
        mlp.update(extra);
        b.add("mlp", "mlp", std::move(mlp));
    }
    if (s.dropout > 0) b.add("dropout", "mlp_dropout", {{"p", s.dropout}});
}

void add_attention(ModelBuilder& b, const TransformerSpec& s, const LayerSignature& sig, bool causal,
                   const std::string& name, std::int64_t kv_tokens = 0, const json& extra = json::object()) {
    if (sig.relative_bias)
        b.add("relative_position_bias", name + "_relative_bias",
              {{"heads", s.heads}, {"buckets", s.relative_buckets}});
    json attrs = attention_attrs(s, causal);
    if (kv_tokens) attrs["kv_tokens"] = kv_tokens, attrs["cross"] = true;
    if (sig.local && !s.mla && s.sliding_window > 0) attrs["window"] = s.sliding_window;
    if (s.chunked_local_rope) {
        if (sig.local) {
            if (s.sliding_window > 0) attrs["chunked"] = true;
        } else attrs["position"] = "none", attrs.erase("qk_norm"), attrs.erase("qk_norm_weights");
    }
    attrs.update(extra);
    b.add(s.mla ? "mla_attention" : "attention", name, attrs);
    if (s.dropout > 0) b.add("dropout", name + "_dropout", {{"p", s.dropout}});
}

// One transformer layer; `cross_tokens` > 0 adds cross-attention to an encoder output of that length.
void add_layer(ModelBuilder& b, const TransformerSpec& s, const LayerSignature& sig, bool causal,
               std::int64_t cross_tokens) {
    if (s.parallel_block) {
        add_norm(b, s, "ln_attn");
        add_attention(b, s, sig, causal, "attention");
        if (s.parallel_two_norms) add_norm(b, s, "ln_mlp");
        add_ffn(b, s, sig);
        b.add("residual_add", "add_attention_mlp");
        b.add("residual_add", "residual");
        return;
    }
    if (s.post_norm) {
        add_attention(b, s, sig, causal, "attention");
        b.add("residual_add", "residual_attention");
        add_norm(b, s, "ln_attention");
        add_ffn(b, s, sig);
        b.add("residual_add", "residual_mlp");
        add_norm(b, s, "ln_mlp");
        return;
    }
    if (!s.output_norm_only) add_norm(b, s, "ln_attention");
    add_attention(b, s, sig, causal, "attention");
    if (s.sandwich_norm || s.output_norm_only) add_norm(b, s, "post_attention_norm");
    b.add("residual_add", "residual_attention");
    if (cross_tokens) {
        add_norm(b, s, "ln_cross");
        add_attention(b, s, LayerSignature{}, false, "cross_attention", cross_tokens);
        b.add("residual_add", "residual_cross");
    }
    if (!s.output_norm_only) add_norm(b, s, "ln_mlp");
    add_ffn(b, s, sig);
    if (s.sandwich_norm || s.output_norm_only) add_norm(b, s, "post_mlp_norm");
    b.add("residual_add", "residual_mlp");
}

// Emits `count` layers, grouping runs of identical layers (or of an identical repeating pattern, e.g.
// Switch's dense/sparse alternation) into repeated blocks.
void add_stack(ModelBuilder& b, const TransformerSpec& s, const std::string& prefix, std::int64_t count, bool causal,
               std::int64_t cross_tokens) {
    std::vector<LayerSignature> sigs;
    for (std::int64_t i = 0; i < count; ++i) sigs.push_back(signature(s, i));
    std::int64_t i = 0;
    while (i < count) {
        std::int64_t best_period = 1, best_reps = 1;
        for (std::int64_t period : {std::int64_t{1}, s.moe_every, s.window_pattern}) {
            if (period < 1 || i + period > count) continue;
            std::int64_t reps = 1;
            while (i + (reps + 1) * period <= count &&
                   std::equal(sigs.begin() + i, sigs.begin() + i + period, sigs.begin() + i + reps * period))
                ++reps;
            if (reps * period > best_reps * best_period) best_period = period, best_reps = reps;
        }
        std::string name = prefix + "." + std::to_string(i) +
                           (best_reps * best_period > 1 ? "-" + std::to_string(i + best_reps * best_period - 1) : "");
        b.begin_block(name, best_reps);
        for (std::int64_t j = 0; j < best_period; ++j) add_layer(b, s, sigs[i + j], causal, cross_tokens);
        b.end_block();
        i += best_reps * best_period;
    }
}

void add_embeddings(ModelBuilder& b, const TransformerSpec& s, bool tied_table, const std::string& prefix) {
    std::int64_t embed_dim = s.word_embed_proj_dim ? s.word_embed_proj_dim : s.hidden;
    b.add("embedding", prefix + "token_embedding",
          {{"num_embeddings", s.vocab}, {"embedding_dim", embed_dim}, {"tied", tied_table}});
    if (embed_dim != s.hidden) b.add("linear", prefix + "project_in", {{"out_features", s.hidden}, {"bias", false}});
    if (s.position == "learned")
        b.add("positional_embedding", prefix + "position_embedding", {{"num_embeddings", s.max_positions}});
    if (s.type_vocab) b.add("token_type_embedding", prefix + "token_type_embedding", {{"num_embeddings", s.type_vocab}});
    if (s.embedding_norm) add_norm(b, s, prefix + "embedding_norm");
    if (s.dropout > 0) b.add("dropout", prefix + "embedding_dropout", {{"p", s.dropout}});
}

void add_lm_head(ModelBuilder& b, const TransformerSpec& s) {
    if (s.final_norm) add_norm(b, s, "final_norm");
    if (s.word_embed_proj_dim && s.word_embed_proj_dim != s.hidden)
        b.add("linear", "project_out", {{"out_features", s.word_embed_proj_dim}, {"bias", false}});
    b.add("linear", "lm_head", {{"out_features", s.vocab}, {"bias", false}, {"tied", s.tied_embeddings}});
    // Gemma 2's final logit soft-capping, cap x tanh(logits / cap), over the logits.
    if (s.final_softcap > 0) b.add("activation", "final_logit_softcap", {{"function", "tanh"}});
    b.add("cross_entropy", "loss");
}

Model build_vit(const TransformerSpec& s, const ModelInputs& in) {
    std::int64_t image = in.image ? in.image : s.image;
    require_positive(s, s.patch, "patch size");
    require_positive(s, image, "image size");
    require_positive(s, s.channels, "number of channels");
    check_range(image, 1, limits::dimension, "image size");
    if (image % s.patch)
        throw Error("model '" + s.name + "': image size " + std::to_string(image) + " is not a multiple of the patch size " +
                    std::to_string(s.patch));
    std::int64_t patches = (image / s.patch) * (image / s.patch);
    ModelBuilder b(s.name, {in.batch, s.channels, image, image}, infer_shape);
    b.add("conv2d", "patch_embedding",
          {{"out_channels", s.hidden}, {"kernel_size", s.patch}, {"stride", s.patch}, {"bias", s.patch_bias}});
    b.add("reshape", "flatten_patches", {{"shape", {patches, s.hidden}}});
    if (s.class_token) b.add("cls_token", "class_token");
    // Rotary towers (Qwen2-VL's 2D RoPE) have no position table.
    if (s.position == "learned")
        b.add("positional_embedding", "position_embedding", {{"num_embeddings", patches + (s.class_token ? 1 : 0)}});
    if (s.dropout > 0) b.add("dropout", "embedding_dropout", {{"p", s.dropout}});
    if (s.pre_norm) add_norm(b, s, "pre_layernorm");
    add_stack(b, s, "encoder", s.layers, false, 0);
    if (s.vision_head == "tokens") {
        // CLIP still computes its pooled output (the normed class token), as Hugging Face's CLIPVisionModel does
        // inside a LLaVA; the patch tokens without the class token (LLaVA's "default" feature selection) go on.
        Shape tokens = b.shape();
        if (s.class_token) {
            b.add("select_token", "class_token_output");
            if (s.pooled_norm) add_norm(b, s, "post_layernorm");
            b.set_shape({tokens[0], patches, tokens[2]});
        } else if (s.final_norm) {
            add_norm(b, s, "post_layernorm");
        }
        return b.finish("vision", 0);
    }
    if (s.vision_head == "none") {  // CLIP's vision tower: the class token, normed, is the pooled output
        // SigLIP without its head (vision_use_head false) still norms every token (post_layernorm).
        if (s.final_norm && !s.class_token) add_norm(b, s, "post_layernorm");
        b.add("select_token", "class_token_output");
        if (s.pooled_norm) add_norm(b, s, "post_layernorm");
        return b.finish("vision", 0);
    }
    add_norm(b, s, s.vision_head == "map" ? "post_layernorm" : "final_norm");
    if (s.vision_head == "map") {
        // SigLIP's multihead attention-pooling head: one learned probe query attends over the patch tokens, then
        // a norm and an MLP with a residual; the probe's output is the pooled embedding.
        Shape tokens = b.shape();
        b.set_shape({tokens[0], 1, tokens[2]});
        b.add("positional_embedding", "head.probe", {{"num_embeddings", 1}});
        json attrs = attention_attrs(s, false);
        attrs["kv_tokens"] = tokens[1], attrs["cross"] = true, attrs.erase("projections");
        b.add("attention", "head.attention", attrs);
        add_norm(b, s, "head.layernorm");
        add_ffn(b, s, LayerSignature{});
        b.add("residual_add", "head.residual");
        b.add("select_token", "pooled_output");
        return b.finish("vision", 0);
    }
    b.add("select_token", "class_token_output");
    b.add("linear", "head", {{"out_features", s.classes}});
    b.add("cross_entropy", "loss");
    return b.finish("vision", 0);
}

// Whisper: log-mel frames -> two convolutions (GELU after each, the second with stride 2) -> the encoder with
// fixed sinusoidal positions (a frozen table in Hugging Face: added, not trained) -> the decoder, with learned
// positions and cross-attention to the encoder's output, and an output projection tied to its embedding.
Model build_whisper(const TransformerSpec& s, const ModelInputs& in) {
    require_positive(s, s.mel_bins, "number of mel bins");
    require_positive(s, s.encoder_positions, "encoder positions");
    std::int64_t frames = checked_mul(2, s.encoder_positions, "mel frames");
    std::int64_t seq = in.seq ? in.seq : s.default_seq;
    if (seq > s.max_positions)
        throw Error("model '" + s.name + "': sequence length " + std::to_string(seq) +
                    " exceeds its learned position table of " + std::to_string(s.max_positions));
    ModelBuilder b(s.name, {in.batch, s.mel_bins, frames}, infer_shape);
    b.add("conv1d", "encoder.conv1", {{"out_channels", s.hidden}, {"kernel_size", 3}, {"padding", 1}});
    b.add("activation", "encoder.conv1_gelu", {{"function", "gelu"}});
    b.add("conv1d", "encoder.conv2", {{"out_channels", s.hidden}, {"kernel_size", 3}, {"stride", 2}, {"padding", 1}});
    b.add("activation", "encoder.conv2_gelu", {{"function", "gelu"}});
    b.add("reshape", "encoder.to_tokens", {{"shape", {s.encoder_positions, s.hidden}}});
    b.add("residual_add", "encoder.add_positions");
    if (s.dropout > 0) b.add("dropout", "encoder.dropout", {{"p", s.dropout}});
    add_stack(b, s, "encoder", s.layers, false, 0);
    add_norm(b, s, "encoder.final_norm");
    b.set_shape({in.batch, seq});
    add_embeddings(b, s, false, "decoder.");
    add_stack(b, s, "decoder", s.decoder_layers ? s.decoder_layers : s.layers, true, s.encoder_positions);
    add_lm_head(b, s);
    return b.finish("speech", 0);
}

}  // namespace

namespace transformer_parts {
void check_bounds(const TransformerSpec& s) { prenet::check_bounds(s); }
void add_norm(ModelBuilder& b, const TransformerSpec& s, const std::string& name, const json& extra) {
    prenet::add_norm(b, s, name, extra);
}
void add_attention(ModelBuilder& b, const TransformerSpec& s, bool causal, const std::string& name, const json& extra) {
    prenet::add_attention(b, s, LayerSignature{}, causal, name, 0, extra);
}
void add_ffn(ModelBuilder& b, const TransformerSpec& s, bool moe, const json& extra) {
    LayerSignature sig;
    sig.moe = moe;
    prenet::add_ffn(b, s, sig, extra);
}
void add_embeddings(ModelBuilder& b, const TransformerSpec& s, bool tied_table, const std::string& prefix) {
    prenet::add_embeddings(b, s, tied_table, prefix);
}
void add_lm_head(ModelBuilder& b, const TransformerSpec& s) { prenet::add_lm_head(b, s); }
}  // namespace transformer_parts

static Model build_transformer_model(const TransformerSpec& base, const ModelInputs& inputs);

Model build_transformer(const TransformerSpec& base, const ModelInputs& inputs) {
    Model m = build_transformer_model(base, inputs);
    m.notes.insert(m.notes.end(), base.notes.begin(), base.notes.end());
    return m;
}

static Model build_transformer_model(const TransformerSpec& base, const ModelInputs& inputs) {
    TransformerSpec spec = base;
    // The kernel asked for explicitly wins; otherwise the one the config names; otherwise the default.
    spec.flash = inputs.attention_given || !spec.config_flash ? inputs.flash_attention : *spec.config_flash;
    // The config's kernel generation, unless a kernel was asked for (api/request_context.cpp applies an explicit
    // --attention flash1 to every importer's attention layers).
    spec.flash_generation = !inputs.attention_given && spec.config_flash_generation ? *spec.config_flash_generation : 2;
    if (spec.arch == "state_space") return build_state_space(spec, inputs);
    validate(spec);
    if (inputs.batch <= 0) throw Error("batch size must be positive");
    if (spec.arch == "vit") return build_vit(spec, inputs);
    if (spec.arch == "whisper") return build_whisper(spec, inputs);
    std::int64_t seq = inputs.seq ? inputs.seq : spec.default_seq;
    if (seq <= 0) throw Error("sequence length must be positive");
    if (spec.position == "learned" && seq > spec.max_positions)
        throw Error("model '" + spec.name + "': sequence length " + std::to_string(seq) +
                    " exceeds its learned position table of " + std::to_string(spec.max_positions));
    ModelBuilder b(spec.name, {inputs.batch, seq}, infer_shape);
    if (spec.arch == "encoder_decoder") {
        add_embeddings(b, spec, false, "encoder.");
        add_stack(b, spec, "encoder", spec.layers, false, 0);
        add_norm(b, spec, "encoder.final_norm");
        // The decoder reads target tokens of the same length; its embedding table is shared with the encoder's.
        b.set_shape({inputs.batch, seq});
        add_embeddings(b, spec, true, "decoder.");
        add_stack(b, spec, "decoder", spec.decoder_layers ? spec.decoder_layers : spec.layers, true, seq);
        add_lm_head(b, spec);
        return b.finish("language", seq);
    }
    add_embeddings(b, spec, false, "");
    add_stack(b, spec, "layers", spec.layers, spec.arch == "decoder", 0);
    if (spec.arch == "decoder") {
        add_lm_head(b, spec);
    } else {
        if (spec.final_norm && !spec.post_norm) add_norm(b, spec, "final_norm");
        Shape sequence = b.shape();
        if (spec.mlm_head) {
            b.add("linear", "mlm_transform", {{"out_features", spec.hidden}});
            b.add("activation", "mlm_activation", {{"function", spec.activation}});
            add_norm(b, spec, "mlm_norm");
            b.add("linear", "mlm_decoder", {{"out_features", spec.vocab}, {"bias", true}, {"tied", true}});
            b.add("cross_entropy", "mlm_loss");
            b.set_shape(sequence);
        }
        if (spec.pooler) {
            b.add("select_token", "pooler_first_token");
            b.add("linear", "pooler", {{"out_features", spec.hidden}});
            b.add("activation", "pooler_tanh", {{"function", "tanh"}});
            if (spec.nsp_head) b.add("linear", "nsp_head", {{"out_features", 2}});
        }
    }
    return b.finish("language", seq);
}

}  // namespace prenet
