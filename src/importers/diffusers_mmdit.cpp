// diffusers' SD3Transformer2DModel (SD3, SD3.5: the MMDiT), module for module as diffusers builds it: the patch
// embedding (a stride-p conv; the sin-cos position table is a buffer, not a parameter), the timestep and pooled
// text embeddings, the context embedder, the joint transformer blocks, the adaLN output norm and projection.
//
// A joint block runs two streams, the image tokens and the text tokens, each with its own adaLN-Zero modulation
// (SiLU and a linear from the time embedding to 6 x width: shift, scale and gate for attention and MLP), its own
// q, k, v and output projections and its own GELU MLP, and one attention over both streams' tokens together. The
// last block only reads the text (context_pre_only: no text output projection, MLP or second norm); SD3.5
// Medium's dual-attention blocks add a second self-attention on the image stream (9 x width modulation).
// Flux's FluxTransformer2DModel is built here too: its double-stream blocks are the joint block, followed by
// single-stream blocks over both streams' tokens at once.
#include <algorithm>
#include <set>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "importers/diffusers_parts.hpp"
#include "ops/catalogue.hpp"

namespace prenet::diffusers {
namespace {

struct MMDiT {
    std::int64_t width = 0, heads = 0, head_dim = 0, image_tokens = 0, text_tokens = 0;
    bool qk_norm = false, flash = false;
    bool rotary = false;  // Flux: rotary positions on the queries and keys of all the tokens
};

// num_attention_heads x attention_head_dim, within the limit on a dimension (the modulations are 2 to 9 times it).
std::int64_t transformer_width(const Reader& c, const MMDiT& d) {
    std::int64_t width = checked_mul(d.heads, d.head_dim, "transformer width");
    if (width > limits::dimension)
        c.fail("num_attention_heads x attention_head_dim is " + std::to_string(width) + ", over the limit of " +
               std::to_string(limits::dimension) + " on a dimension");
    return width;
}

// The joint attention over `tokens` tokens whose queries, keys and values the streams projected: Flux's rotary
// embedding on the queries and keys, then one attention.
void add_joint_attention_core(ModelBuilder& b, const MMDiT& d, std::int64_t tokens, const std::string& name) {
    const std::int64_t batch = b.shape()[0];
    if (d.rotary) {
        b.set_shape({batch, tokens, 2 * d.width});
        b.add("memory_bound", name + ".rotary", {{"op", "rotary"}, {"output_shape", b.shape()}, {"reads", 2},
                                                 {"flops_per_element", 3}, {"saves", false}});
    }
    b.set_shape({batch, tokens, d.width});
    b.add("attention_core", name, {{"heads", d.heads}, {"flash", d.flash}});
}

enum class JointBlock { regular, dual_attention, context_pre_only };

// adaLN modulation: SiLU of the time embedding [batch, width] and one linear to `chunks` x width.
void add_modulation(ModelBuilder& b, const MMDiT& d, const std::string& name, std::int64_t chunks) {
    b.set_shape({b.shape()[0], d.width});
    b.add("activation", name + ".silu", {{"function", "silu"}});
    b.add("linear", name + ".linear", {{"out_features", chunks * d.width}});
}

// LayerNorm without affine, then x * (1 + scale) + shift.
void add_modulated_norm(ModelBuilder& b, const std::string& name) {
    b.add("layernorm", name, {{"affine", false}});
    b.add("memory_bound", name + ".modulate", {{"op", "adaln_modulate"}, {"output_shape", b.shape()},
                                               {"reads", 3}, {"flops_per_element", 2}});
}

// gate * branch, added back onto the stream.
void add_gated_residual(ModelBuilder& b, const std::string& name) {
    b.add("memory_bound", name + ".gate", {{"op", "adaln_gate"}, {"output_shape", b.shape()}, {"reads", 2},
                                           {"flops_per_element", 1}});
    b.add("residual_add", name + ".residual");
}

// One stream's query, key and value projections (LoRA targets q, k, v as PEFT names to_q / add_q_proj), with
// the per-head RMSNorm of queries and keys when qk_norm is set.
void add_qkv(ModelBuilder& b, const MMDiT& d, bool context) {
    const Shape x = b.shape();
    for (const std::string target : {"q", "k", "v"}) {
        b.set_shape(x);
        b.add("linear", context ? "attn.add_" + target + "_proj" : "attn.to_" + target,
              {{"out_features", d.width}, {"lora_target", target}});
        if (d.qk_norm && target != "v") {
            b.add("reshape", "attn.heads_" + target, {{"shape", {x[1] * d.heads, d.head_dim}}});
            b.add("rmsnorm", std::string("attn.norm_") + (context ? "added_" : "") + target);
            b.add("reshape", "attn.tokens_" + target, {{"shape", {x[1], d.width}}});
        }
    }
    b.set_shape(x);
}

void add_joint_block(ModelBuilder& b, const MMDiT& d, JointBlock kind) {
    const std::int64_t batch = b.shape()[0];
    const bool context_pre_only = kind == JointBlock::context_pre_only, dual = kind == JointBlock::dual_attention;
    const Shape image = {batch, d.image_tokens, d.width}, text = {batch, d.text_tokens, d.width};
    const json mlp = {{"intermediate", 4 * d.width}, {"activation", "gelu_tanh"}, {"bias", true}};
    add_modulation(b, d, "norm1", dual ? 9 : 6);
    add_modulation(b, d, "norm1_context", context_pre_only ? 2 : 6);
    // The joint attention: each stream's projections, one attention over all the tokens, each stream's output.
    b.set_shape(image);
    add_modulated_norm(b, "norm1");
    add_qkv(b, d, false);
    b.set_shape(text);
    add_modulated_norm(b, "norm1_context");
    add_qkv(b, d, true);
    add_joint_attention_core(b, d, d.image_tokens + d.text_tokens, "attn.joint_attention");
    b.set_shape(image);
    b.add("linear", "attn.to_out.0", {{"out_features", d.width}, {"lora_target", "o"}});
    add_gated_residual(b, "attn");
    if (dual) {  // SD3.5 Medium: a second self-attention over the image tokens (its own modulated norm)
        add_modulated_norm(b, "norm1.attn2");
        json attention = {{"heads", d.heads}, {"projections", "separate"}, {"bias", true}, {"flash", d.flash}};
        if (d.qk_norm) attention["qk_norm"] = true;
        b.add("attention", "attn2", attention);
        add_gated_residual(b, "attn2");
    }
    add_modulated_norm(b, "norm2");
    b.add("mlp", "ff", mlp);
    add_gated_residual(b, "ff");
    if (context_pre_only) return;
    b.set_shape(text);
    b.add("linear", "attn.to_add_out", {{"out_features", d.width}, {"lora_target", "o"}});
    add_gated_residual(b, "attn.context");
    add_modulated_norm(b, "norm2_context");
    b.add("mlp", "ff_context", mlp);
    add_gated_residual(b, "ff_context");
}

// Flux's single-stream block on the text and image tokens together: adaLN (3 x width: shift, scale, gate), then
// attention (q, k, v with RMSNorm per head, no output projection of its own) beside a GELU MLP's up projection,
// both concatenated into proj_out, gated and added back.
void add_single_block(ModelBuilder& b, const MMDiT& d) {
    const std::int64_t batch = b.shape()[0], tokens = d.image_tokens + d.text_tokens;
    add_modulation(b, d, "norm", 3);
    b.set_shape({batch, tokens, d.width});
    add_modulated_norm(b, "norm");
    add_qkv(b, d, false);
    add_joint_attention_core(b, d, tokens, "attn");
    b.set_shape({batch, tokens, d.width});
    b.add("linear", "proj_mlp", {{"out_features", 4 * d.width}});
    b.add("activation", "act_mlp", {{"function", "gelu_tanh"}});
    b.set_shape({batch, tokens, 5 * d.width});
    b.add("linear", "proj_out", {{"out_features", d.width}});
    add_gated_residual(b, "single");
}

// TimestepEmbedding / PixArtAlphaTextProjection: linear, SiLU, linear to the width.
void add_embedding_mlp(ModelBuilder& b, const MMDiT& d, const std::string& name, std::int64_t in) {
    b.set_shape({b.shape()[0], in});
    b.add("linear", name + ".linear_1", {{"out_features", d.width}});
    b.add("activation", name + ".silu", {{"function", "silu"}});
    b.add("linear", name + ".linear_2", {{"out_features", d.width}});
}

}  // namespace

Model build_sd3_transformer(const Reader& c, const ModelInputs& inputs, Pipeline& pipeline) {
    MMDiT d;
    const std::int64_t layers = c.count("num_layers", 18), patch = c.integer("patch_size", 2);
    if (layers < 1) c.fail("field 'num_layers' must be at least 1");
    d.heads = c.integer("num_attention_heads", 18);
    d.head_dim = c.integer("attention_head_dim", 64);
    d.width = transformer_width(c, d);
    d.flash = inputs.flash_attention;
    const std::int64_t in_channels = c.integer("in_channels", 16), out_channels = c.integer("out_channels", in_channels);
    const std::int64_t joint_dim = c.integer("joint_attention_dim", 4096);
    const std::int64_t caption_dim = c.integer("caption_projection_dim", d.width);
    const std::int64_t pooled_dim = c.integer("pooled_projection_dim", 2048);
    if (caption_dim != d.width)
        c.fail("caption_projection_dim " + std::to_string(caption_dim) + " must be the transformer's width " +
               "num_attention_heads x attention_head_dim = " + std::to_string(d.width));
    const std::string qk_norm = c.text("qk_norm", "");
    if (!qk_norm.empty() && qk_norm != "rms_norm") c.fail("qk_norm '" + qk_norm + "' is not supported (rms_norm or null)");
    d.qk_norm = !qk_norm.empty();
    std::set<std::int64_t> dual;
    if (c.has("dual_attention_layers"))
        for (auto i : c.indices("dual_attention_layers")) {
            if (i >= layers) c.fail("dual_attention_layers names layer " + std::to_string(i) + " of " + std::to_string(layers));
            dual.insert(i);
        }

    pipeline.image = image_size(c, inputs, 128, patch);
    pipeline.vae_latent_channels = 16, pipeline.vae_quant_conv = false;  // SD3's VAE: 16 latent channels
    pipeline.text_encoders = {clip_vit_l14_text(true), openclip_vit_bigg14_text(), t5_xxl_encoder()};
    pipeline.notes.push_back("the text states: CLIP's 77 tokens and T5's 256 (max_sequence_length) concatenated, 333 "
                             "tokens in the joint attention");
    const std::int64_t latent = pipeline.image / vae_factor, grid = latent / patch, batch = inputs.batch;
    const std::int64_t max_grid = c.integer("pos_embed_max_size", grid);
    if (grid > max_grid)
        throw Error("image size " + std::to_string(pipeline.image) + " px is too large for this SD3Transformer2DModel: " +
                    std::to_string(grid) + " patches a side, over its pos_embed_max_size " + std::to_string(max_grid));
    d.image_tokens = grid * grid;
    d.text_tokens = 77 + 256;

    ModelBuilder b(c.class_name(), {batch, 256}, infer_shape);
    // The timestep's 256 sinusoidal features and the pooled CLIP embeddings, each through linear, SiLU, linear; summed.
    b.add("linear", "time_text_embed.timestep_embedder.linear_1", {{"out_features", d.width}});
    b.add("activation", "time_text_embed.timestep_embedder.silu", {{"function", "silu"}});
    b.add("linear", "time_text_embed.timestep_embedder.linear_2", {{"out_features", d.width}});
    b.set_shape({batch, pooled_dim});
    b.add("linear", "time_text_embed.text_embedder.linear_1", {{"out_features", d.width}});
    b.add("activation", "time_text_embed.text_embedder.silu", {{"function", "silu"}});
    b.add("linear", "time_text_embed.text_embedder.linear_2", {{"out_features", d.width}});
    b.add("residual_add", "time_text_embed.sum");
    b.set_shape({batch, d.text_tokens, joint_dim});
    b.add("linear", "context_embedder", {{"out_features", d.width}}).needs_input_grad = false;
    b.set_shape({batch, in_channels, latent, latent});
    b.add("conv2d", "pos_embed.proj", {{"out_channels", d.width}, {"kernel_size", patch}, {"stride", patch}})
        .needs_input_grad = false;
    b.add("reshape", "pos_embed.to_tokens", {{"shape", {d.image_tokens, d.width}}});
    b.add("residual_add", "pos_embed.add_positions");

    // Runs of identical blocks stored once.
    auto kind_of = [&](std::int64_t i) {
        return i == layers - 1 ? JointBlock::context_pre_only
                               : dual.count(i) ? JointBlock::dual_attention : JointBlock::regular;
    };
    for (std::int64_t i = 0; i < layers;) {
        std::int64_t end = i;
        while (end + 1 < layers && kind_of(end + 1) == kind_of(i)) ++end;
        b.begin_block("transformer_blocks." + std::to_string(i) + (end > i ? "-" + std::to_string(end) : ""), end - i + 1);
        add_joint_block(b, d, kind_of(i));
        b.end_block();
        i = end + 1;
    }
    add_modulation(b, d, "norm_out", 2);
    b.set_shape({batch, d.image_tokens, d.width});
    add_modulated_norm(b, "norm_out");
    b.add("linear", "proj_out", {{"out_features", patch * patch * out_channels}});
    b.add("reshape", "unpatchify", {{"shape", {out_channels, latent, latent}}});
    // Flow matching's loss: the mean squared error against the velocity target.
    b.add("memory_bound", "mse_loss", {{"op", "mse_loss"}, {"output_shape", b.shape()}, {"reads", 2}, {"flops_per_element", 3}});
    return b.finish("vision", 0);
}

}  // namespace prenet::diffusers

namespace prenet::diffusers {

// diffusers' FluxTransformer2DModel (FLUX.1 dev and schnell): the packed latents (2 x 2 patches of 16 channels:
// in_channels 64) through x_embedder, the timestep (and, with guidance_embeds, the guidance) and pooled CLIP
// embeddings, the context embedder, num_layers double-stream blocks (the SD3 joint block with QK RMSNorm and
// biases everywhere), num_single_layers single-stream blocks, the adaLN output norm and projection. Rotary
// positions (no parameters) on every attention.
Model build_flux_transformer(const Reader& c, const ModelInputs& inputs, Pipeline& pipeline) {
    MMDiT d;
    const std::int64_t layers = c.count("num_layers", 19), single_layers = c.count("num_single_layers", 38);
    if (layers + single_layers < 1) c.fail("num_layers and num_single_layers must not both be 0");
    d.heads = c.integer("num_attention_heads", 24);
    d.head_dim = c.integer("attention_head_dim", 128);
    d.width = transformer_width(c, d);
    d.flash = inputs.flash_attention;
    d.qk_norm = true, d.rotary = true;
    const std::int64_t patch = c.integer("patch_size", 1);
    if (patch != 1) c.fail("patch_size " + std::to_string(patch) + " is not modelled (Flux packs 2 x 2 latents itself: 1)");
    const std::int64_t in_channels = c.integer("in_channels", 64), out_channels = c.integer("out_channels", in_channels);
    const std::int64_t joint_dim = c.integer("joint_attention_dim", 4096), pooled_dim = c.integer("pooled_projection_dim", 768);
    const bool guidance = c.boolean("guidance_embeds", false);

    pipeline.image = image_size(c, inputs, 128, 2);  // the latents are packed 2 x 2
    pipeline.vae_latent_channels = 16, pipeline.vae_quant_conv = false;
    Pipeline::TextEncoder t5 = t5_xxl_encoder();
    t5.spec.default_seq = guidance ? 512 : 256;  // FluxPipeline's max_sequence_length: dev 512, schnell 256
    pipeline.text_encoders = {clip_vit_l14_text(false), t5};
    pipeline.notes.push_back("the text states: T5's " + std::to_string(t5.spec.default_seq) + " tokens (" +
                             (guidance ? "FLUX.1 dev" : "FLUX.1 schnell") + "'s max_sequence_length); CLIP's pooled "
                             "output conditions the modulation");
    const std::int64_t grid = pipeline.image / vae_factor / 2, batch = inputs.batch;
    d.image_tokens = grid * grid;
    d.text_tokens = t5.spec.default_seq;

    ModelBuilder b(c.class_name(), {batch, 256}, infer_shape);
    add_embedding_mlp(b, d, "time_text_embed.timestep_embedder", 256);
    if (guidance) {
        add_embedding_mlp(b, d, "time_text_embed.guidance_embedder", 256);
        b.add("residual_add", "time_text_embed.add_guidance");
    }
    add_embedding_mlp(b, d, "time_text_embed.text_embedder", pooled_dim);
    b.add("residual_add", "time_text_embed.sum");
    b.set_shape({batch, d.text_tokens, joint_dim});
    b.add("linear", "context_embedder", {{"out_features", d.width}}).needs_input_grad = false;
    b.set_shape({batch, d.image_tokens, in_channels});
    b.add("linear", "x_embedder", {{"out_features", d.width}}).needs_input_grad = false;
    if (layers) {
        b.begin_block("transformer_blocks." + std::string(layers > 1 ? "0-" + std::to_string(layers - 1) : "0"), layers);
        add_joint_block(b, d, JointBlock::regular);
        b.end_block();
    }
    if (single_layers) {
        b.begin_block("single_transformer_blocks." +
                          std::string(single_layers > 1 ? "0-" + std::to_string(single_layers - 1) : "0"),
                      single_layers);
        add_single_block(b, d);
        b.end_block();
    }
    add_modulation(b, d, "norm_out", 2);
    b.set_shape({batch, d.image_tokens, d.width});
    add_modulated_norm(b, "norm_out");
    b.add("linear", "proj_out", {{"out_features", out_channels}});
    // Flow matching's loss on the packed latents.
    b.add("memory_bound", "mse_loss", {{"op", "mse_loss"}, {"output_shape", b.shape()}, {"reads", 2}, {"flops_per_element", 3}});
    return b.finish("vision", 0);
}

}  // namespace prenet::diffusers
