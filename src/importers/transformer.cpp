#include "importers/transformer.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "graph/builder.hpp"
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
             {s.q_lora_rank, "q_lora_rank"}, {s.kv_lora_rank, "kv_lora_rank"}, {s.qk_nope_head_dim, "qk_nope_head_dim"},
             {s.qk_rope_head_dim, "qk_rope_head_dim"}, {s.v_head_dim, "v_head_dim"},
             {s.relative_buckets, "relative attention buckets"}, {s.image, "image size"}, {s.patch, "patch size"},
             {s.channels, "channels"}, {s.classes, "classes"}, {s.default_seq, "default sequence length"}})
        bound(v, dim, field);
    if (s.moe_first_dense < -limits::layers || s.moe_first_dense > limits::layers)
        throw Error("model '" + s.name + "': first sparse layer " + std::to_string(s.moe_first_dense) +
                    " is out of the range +-" + std::to_string(limits::layers));
    if (!std::isfinite(s.dropout) || s.dropout < 0 || s.dropout >= 1)
        throw Error("model '" + s.name + "': dropout must be in [0, 1)");
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
    if (s.experts && (s.top_k <= 0 || s.top_k > s.experts))
        throw Error("model '" + s.name + "': experts per token must be between 1 and the number of experts");
}

json norm_attrs(const TransformerSpec& s) { return {{"bias", s.norm_bias}}; }

void add_norm(ModelBuilder& b, const TransformerSpec& s, const std::string& name) {
    b.add(s.norm, name, norm_attrs(s));
}

json attention_attrs(const TransformerSpec& s, bool causal) {
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
    return a;
}

// Which optional parts a given layer index has; identical signatures are stored once in a repeated block.
struct LayerSignature {
    bool moe = false;
    bool relative_bias = false;
    bool operator==(const LayerSignature& o) const { return moe == o.moe && relative_bias == o.relative_bias; }
};

LayerSignature signature(const TransformerSpec& s, std::int64_t i) {
    LayerSignature sig;
    if (s.experts > 0 && i >= s.moe_first_dense) sig.moe = (i - s.moe_first_dense) % s.moe_every == s.moe_every - 1;
    sig.relative_bias = s.position == "relative" && i == 0;
    return sig;
}

void add_ffn(ModelBuilder& b, const TransformerSpec& s, const LayerSignature& sig) {
    if (sig.moe) {
        b.add("moe", "moe", {{"experts", s.experts},
                             {"top_k", s.top_k},
                             {"intermediate", s.moe_intermediate ? s.moe_intermediate : s.intermediate},
                             {"activation", s.activation},
                             {"gated", s.gated},
                             {"bias", s.mlp_bias},
                             {"capacity_factor", s.capacity_factor},
                             {"shared_experts", s.shared_experts},
                             {"shared_intermediate", s.shared_intermediate ? s.shared_intermediate
                                                                          : s.moe_intermediate},
                             {"router_bias", s.router_bias}});
    } else {
        b.add("mlp", "mlp", {{"intermediate", s.intermediate},
                             {"activation", s.activation},
                             {"gated", s.gated},
                             {"bias", s.mlp_bias}});
    }
    if (s.dropout > 0) b.add("dropout", "mlp_dropout", {{"p", s.dropout}});
}

void add_attention(ModelBuilder& b, const TransformerSpec& s, const LayerSignature& sig, bool causal,
                   const std::string& name, std::int64_t kv_tokens = 0) {
    if (sig.relative_bias)
        b.add("relative_position_bias", name + "_relative_bias",
              {{"heads", s.heads}, {"buckets", s.relative_buckets}});
    json attrs = attention_attrs(s, causal);
    if (kv_tokens) attrs["kv_tokens"] = kv_tokens, attrs["cross"] = true;
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
    add_norm(b, s, "ln_attention");
    add_attention(b, s, sig, causal, "attention");
    b.add("residual_add", "residual_attention");
    if (cross_tokens) {
        add_norm(b, s, "ln_cross");
        add_attention(b, s, LayerSignature{}, false, "cross_attention", cross_tokens);
        b.add("residual_add", "residual_cross");
    }
    add_norm(b, s, "ln_mlp");
    add_ffn(b, s, sig);
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
        for (std::int64_t period : {std::int64_t{1}, s.moe_every}) {
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
    b.add("conv2d", "patch_embedding", {{"out_channels", s.hidden}, {"kernel_size", s.patch}, {"stride", s.patch}});
    b.add("reshape", "flatten_patches", {{"shape", {patches, s.hidden}}});
    b.add("cls_token", "class_token");
    b.add("positional_embedding", "position_embedding", {{"num_embeddings", patches + 1}});
    if (s.dropout > 0) b.add("dropout", "embedding_dropout", {{"p", s.dropout}});
    add_stack(b, s, "encoder", s.layers, false, 0);
    add_norm(b, s, "final_norm");
    b.add("select_token", "class_token_output");
    b.add("linear", "head", {{"out_features", s.classes}});
    b.add("cross_entropy", "loss");
    return b.finish("vision", 0);
}

}  // namespace

Model build_transformer(const TransformerSpec& base, const ModelInputs& inputs) {
    TransformerSpec spec = base;
    // The kernel asked for explicitly wins; otherwise the one the config names; otherwise the default.
    spec.flash = inputs.attention_given || !spec.config_flash ? inputs.flash_attention : *spec.config_flash;
    validate(spec);
    if (inputs.batch <= 0) throw Error("batch size must be positive");
    if (spec.arch == "vit") return build_vit(spec, inputs);
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
