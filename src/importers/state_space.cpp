#include "importers/state_space.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "graph/builder.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

[[noreturn]] void refuse(const TransformerSpec& s, const std::string& message) {
    throw Error("model '" + s.name + "': " + message);
}

void validate(const TransformerSpec& s) {
    transformer_parts::check_bounds(s);
    const SsmSpec& m = s.ssm;
    for (auto [v, field] : std::initializer_list<std::pair<std::int64_t, const char*>>{
             {m.d_inner, "SSM inner size"}, {m.d_state, "SSM state size"}, {m.d_conv, "SSM convolution width"},
             {m.dt_rank, "SSM time-step rank"}, {m.head_dim, "SSM head dimension"}, {m.groups, "SSM groups"},
             {m.chunk, "SSM chunk size"}, {s.shared_blocks, "shared blocks"}, {s.shared_adapter_rank, "adapter rank"}})
        if (v < 0 || v > limits::dimension)
            refuse(s, std::string(field) + " is " + std::to_string(v) + ", out of the range 0 to " +
                          std::to_string(limits::dimension));
    if (s.hidden <= 0) refuse(s, "hidden size must be positive");
    if (s.vocab <= 0) refuse(s, "vocabulary size must be positive");
    if (s.layers <= 0) refuse(s, "number of layers must be positive");
    if (std::int64_t(s.hybrid_layers.size()) != s.layers)
        refuse(s, "the layer pattern lists " + std::to_string(s.hybrid_layers.size()) + " layers, not " +
                      std::to_string(s.layers));
    bool ssm = false, attention = false, moe = false;
    for (const auto& l : s.hybrid_layers) {
        if (!l.ssm && !l.attention) refuse(s, "every layer needs a mixer (attention or SSM)");
        ssm |= l.ssm, attention |= l.attention || l.shared_block >= 0, moe |= l.ffn == "moe";
        if (l.shared_block >= s.shared_blocks) refuse(s, "a layer uses shared block " + std::to_string(l.shared_block) +
                                                            " of " + std::to_string(s.shared_blocks));
    }
    if (ssm) {
        if (m.version != 1 && m.version != 2) refuse(s, "SSM version must be 1 (Mamba) or 2 (Mamba-2)");
        if (m.d_inner <= 0 || m.d_state <= 0) refuse(s, "SSM inner and state sizes must be positive");
        if (m.d_conv < 1 || m.d_conv > 64) refuse(s, "SSM convolution width must be between 1 and 64");
        if (m.version == 1 && m.dt_rank <= 0) refuse(s, "SSM time-step rank must be positive");
        if (m.version == 2 && (m.head_dim <= 0 || m.d_inner % m.head_dim))
            refuse(s, "SSM head dimension " + std::to_string(m.head_dim) + " must divide the inner size " +
                          std::to_string(m.d_inner));
        if (m.version == 2 && (m.groups <= 0 || (m.d_inner / m.head_dim) % m.groups))
            refuse(s, "SSM groups " + std::to_string(m.groups) + " must divide the " +
                          std::to_string(m.d_inner / m.head_dim) + " SSM heads");
    }
    if (attention) {
        if (s.heads <= 0) refuse(s, "number of attention heads must be positive");
        if (s.head_dim == 0 && s.hidden % s.heads)
            refuse(s, "hidden size " + std::to_string(s.hidden) + " is not divisible by the number of heads " +
                          std::to_string(s.heads));
        if (s.kv_heads && s.heads % s.kv_heads)
            refuse(s, "key/value heads " + std::to_string(s.kv_heads) + " must divide heads " + std::to_string(s.heads));
    }
    if (moe && (s.top_k <= 0 || s.top_k > s.experts))
        refuse(s, "experts per token (" + std::to_string(s.top_k) + ") must be between 1 and the number of experts (" +
                      std::to_string(s.experts) + ")");
}

// A layer as built: its parts, and whether it is the first to run its shared block (which then owns the block's
// weights; later invocations share them).
struct LayerPlan {
    HybridLayer layer;
    bool owns_shared_block = false;
    bool operator==(const LayerPlan& o) const { return layer == o.layer && owns_shared_block == o.owns_shared_block; }
};

void add_ssm(ModelBuilder& b, const TransformerSpec& s, const std::string& name) {
    const SsmSpec& m = s.ssm;
    json attrs = {{"intermediate", m.d_inner}, {"d_state", m.d_state}, {"d_conv", m.d_conv},
                  {"conv_bias", m.conv_bias}, {"bias", m.bias}};
    if (m.version == 1) {
        attrs["dt_rank"] = m.dt_rank;
        attrs["inner_norms"] = m.inner_norms;
        b.add("mamba", name, std::move(attrs));
        return;
    }
    attrs["head_dim"] = m.head_dim;
    attrs["ssm_groups"] = m.groups;
    attrs["chunk"] = m.chunk;
    attrs["gated_norm"] = m.gated_norm;
    b.add("mamba2", name, std::move(attrs));
}

// Zamba2's shared transformer block before a hybrid layer: the hidden states concatenated with the token
// embeddings (2 hidden wide; the copy adds no layer), a norm, attention back to hidden, a norm, the MLP; its
// output, through this layer's own hidden x hidden linear, is added to the layer's input. The block's weights
// belong to its first invocation; each invocation has its own LoRA adapter on the MLP's gate and up projections
// (and on q, k, v with shared_attention_adapter), costed as two linears on a side branch each (their sum into the
// projection's output is left out).
void add_shared_block(ModelBuilder& b, const TransformerSpec& s, const LayerPlan& p) {
    const std::string name = "shared_block" + std::to_string(p.layer.shared_block);
    const json shared = p.owns_shared_block ? json::object() : json{{"shares_weights", true}};
    Shape hidden = b.shape();
    Shape doubled = {hidden[0], hidden[1], 2 * hidden[2]};
    auto adapter = [&](const std::string& what, std::int64_t out) {
        Shape in = b.shape();
        b.add("linear", name + "." + what + "_adapter_down", {{"out_features", s.shared_adapter_rank}, {"bias", false}});
        b.add("linear", name + "." + what + "_adapter_up", {{"out_features", out}, {"bias", false}});
        b.set_shape(in);
    };
    b.set_shape(doubled, "shared block input");
    transformer_parts::add_norm(b, s, name + ".input_norm", shared);
    if (s.shared_adapter_rank > 0 && s.shared_attention_adapter)
        for (const char* what : {"q", "k", "v"})
            adapter(what, (std::string(what) == "q" ? s.heads : (s.kv_heads ? s.kv_heads : s.heads)) * s.head_dim);
    json attention = shared;
    attention["out_features"] = hidden[2];
    transformer_parts::add_attention(b, s, true, name + ".attention", attention);
    transformer_parts::add_norm(b, s, name + ".pre_ff_norm", shared);
    if (s.shared_adapter_rank > 0) adapter("gate_up", 2 * s.intermediate);
    transformer_parts::add_ffn(b, s, false, shared);
    b.add("linear", "shared_output_linear", {{"out_features", hidden[2]}, {"bias", false}});
    b.add("residual_add", "add_shared_block");
}

void add_layer(ModelBuilder& b, const TransformerSpec& s, const LayerPlan& p) {
    const HybridLayer& l = p.layer;
    if (l.shared_block >= 0) add_shared_block(b, s, p);
    transformer_parts::add_norm(b, s, "ln_mixer");
    if (l.attention && l.ssm) {
        // Falcon-H1: attention and Mamba-2 side by side on the same normed input, their outputs summed.
        Shape in = b.shape();
        transformer_parts::add_attention(b, s, true, "attention");
        b.set_shape(in);
        add_ssm(b, s, "mamba");
        b.add("residual_add", "add_attention_mamba");
    } else if (l.attention) {
        transformer_parts::add_attention(b, s, true, "attention");
    } else {
        add_ssm(b, s, "mamba");
    }
    b.add("residual_add", "residual_mixer");
    if (l.ffn == "none") return;
    transformer_parts::add_norm(b, s, "ln_ffn");
    transformer_parts::add_ffn(b, s, l.ffn == "moe");
    b.add("residual_add", "residual_ffn");
}

// Runs of identical layers, or of an identical repeating pattern (Jamba's 8-layer period), as repeated blocks:
// at each layer the period up to 16 that covers the most layers with at least two repeats.
void add_layers(ModelBuilder& b, const TransformerSpec& s, const std::vector<LayerPlan>& plans) {
    const std::int64_t count = std::int64_t(plans.size());
    std::int64_t i = 0;
    while (i < count) {
        std::int64_t best_period = 1, best_reps = 1;
        for (std::int64_t period = 1; period <= 16 && i + period <= count; ++period) {
            std::int64_t reps = 1;
            while (i + (reps + 1) * period <= count &&
                   std::equal(plans.begin() + i, plans.begin() + i + period, plans.begin() + i + reps * period))
                ++reps;
            if (reps > 1 && reps * period > best_reps * best_period) best_period = period, best_reps = reps;
        }
        std::int64_t last = i + best_reps * best_period - 1;
        b.begin_block("layers." + std::to_string(i) + (last > i ? "-" + std::to_string(last) : ""), best_reps);
        for (std::int64_t j = 0; j < best_period; ++j) add_layer(b, s, plans[size_t(i + j)]);
        b.end_block();
        i = last + 1;
    }
}

}  // namespace

Model build_state_space(const TransformerSpec& spec, const ModelInputs& inputs) {
    validate(spec);
    if (inputs.batch <= 0) throw Error("batch size must be positive");
    std::int64_t seq = inputs.seq ? inputs.seq : spec.default_seq;
    if (seq <= 0) throw Error("sequence length must be positive");
    std::vector<LayerPlan> plans;
    std::vector<bool> block_seen(size_t(spec.shared_blocks), false);
    for (const auto& l : spec.hybrid_layers) {
        LayerPlan p{l, false};
        if (l.shared_block >= 0 && !block_seen[size_t(l.shared_block)])
            p.owns_shared_block = block_seen[size_t(l.shared_block)] = true;
        plans.push_back(p);
    }
    ModelBuilder b(spec.name, {inputs.batch, seq}, infer_shape);
    transformer_parts::add_embeddings(b, spec, false, "");
    add_layers(b, spec, plans);
    transformer_parts::add_lm_head(b, spec);
    Model m = b.finish("language", seq);  // build_transformer adds the spec's notes
    // No SSM kernel was measured for the learned predictor: the reply says how they are timed.
    bool ssm = std::any_of(spec.hybrid_layers.begin(), spec.hybrid_layers.end(), [](const HybridLayer& l) { return l.ssm; });
    if (ssm)
        m.notes.push_back(std::string(spec.ssm.version == 1 ? "the selective scan" : "SSD's chunk products and state passing") +
                          " and the causal convolution have no measured kernel family: they are timed by the " +
                          (spec.ssm.version == 1 ? "streaming (elementwise) model on the scan's instruction count"
                                                 : "gemm and streaming (elementwise) models, the decays on their "
                                                   "instruction count") +
                          ", checked only relatively against FlashAttention-2 (docs/importers.md, State-space and "
                          "hybrid models)");
    return m;
}

}  // namespace prenet
