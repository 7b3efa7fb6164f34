// diffusers' UNet2DConditionModel (SD 1.x, SD 2.x, SDXL), module for module as diffusers builds it, so that its
// parameter count is the checkpoint's: the time embedding (and SDXL's text_time embedding), conv_in, the down
// blocks (ResNet blocks, spatial transformers, stride-2 convs), the mid block, the up blocks (each ResNet block
// reading the down path's skip concatenated onto its input; nearest upsampling and a conv), the output conv.
#include <algorithm>

#include "core/error.hpp"
#include "importers/diffusers_parts.hpp"
#include "ops/catalogue.hpp"

namespace prenet::diffusers {
namespace {

struct UNetShape {
    std::vector<std::int64_t> channels;  // block_out_channels
    std::vector<std::string> down, up;
    std::vector<std::int64_t> layers_per_block, heads, transformer_layers;
    std::string mid;
    std::int64_t groups = 32, cross_dim = 0, text_tokens = 77, temb = 0;
    bool linear_projection = false, flash = false;
};

// diffusers' Transformer2DModel: GroupNorm, proj_in (a 1x1 conv, or a linear with use_linear_projection), the
// BasicTransformerBlocks (LayerNorm, self-attention; LayerNorm, cross-attention to the text states; LayerNorm,
// GEGLU feed-forward of 4x the width; each added back), proj_out and the residual add. Attention's to_q, to_k and
// to_v carry no bias, to_out.0 does.
void add_spatial_transformer(ModelBuilder& b, const UNetShape& u, const std::string& name, std::int64_t heads,
                             std::int64_t layers) {
    const Shape x = b.shape();
    const std::int64_t channels = x[1], pixels = x[2] * x[3];
    if (channels % heads)
        throw Error("diffusers config (UNet2DConditionModel): " + std::to_string(heads) +
                    " attention heads (attention_head_dim / num_attention_heads) do not divide the " +
                    std::to_string(channels) + " channels of " + name);
    b.add("groupnorm", name + ".norm", {{"groups", u.groups}});
    if (u.linear_projection) {
        b.add("reshape", name + ".to_tokens", {{"shape", {pixels, channels}}});
        b.add("linear", name + ".proj_in", {{"out_features", channels}});
    } else {
        b.add("conv2d", name + ".proj_in", {{"out_channels", channels}, {"kernel_size", 1}});
        b.add("reshape", name + ".to_tokens", {{"shape", {pixels, channels}}});
    }
    const json attention = {{"heads", heads}, {"projections", "separate"}, {"bias", false}, {"out_bias", true},
                            {"flash", u.flash}};
    json cross = attention;
    cross["cross"] = true, cross["kv_tokens"] = u.text_tokens, cross["kv_hidden"] = u.cross_dim;
    cross["kv_input_grad"] = false;  // the text states come from frozen encoders
    b.begin_block(name + ".transformer_blocks." + (layers > 1 ? "0-" + std::to_string(layers - 1) : "0"), layers);
    b.add("layernorm", "norm1");
    b.add("attention", "attn1", attention);
    b.add("residual_add", "attn1_residual");
    b.add("layernorm", "norm2");
    b.add("attention", "attn2", cross);
    b.add("residual_add", "attn2_residual");
    b.add("layernorm", "norm3");
    b.add("mlp", "ff", {{"intermediate", 4 * channels}, {"activation", "gelu"}, {"gated", true}, {"bias", true}});
    b.add("residual_add", "ff_residual");
    b.end_block();
    if (u.linear_projection) {
        b.add("linear", name + ".proj_out", {{"out_features", channels}});
        b.add("reshape", name + ".to_pixels", {{"shape", {channels, x[2], x[3]}}});
    } else {
        b.add("reshape", name + ".to_pixels", {{"shape", {channels, x[2], x[3]}}});
        b.add("conv2d", name + ".proj_out", {{"out_channels", channels}, {"kernel_size", 1}});
    }
    b.add("residual_add", name + ".residual");
}

bool has_attention(const std::string& block_type) { return block_type.rfind("CrossAttn", 0) == 0; }

UNetShape read_shape(const Reader& c, const ModelInputs& inputs) {
    UNetShape u;
    u.channels = c.integers("block_out_channels");
    const size_t n = u.channels.size();
    // Each level halves the latents: past 16 levels no image within the limits has a pixel left.
    if (n > 16) c.fail("block_out_channels has " + std::to_string(n) + " levels (at most 16)");
    u.down = c.strings("down_block_types");
    u.up = c.strings("up_block_types");
    if (u.down.size() != n || u.up.size() != n)
        c.fail("down_block_types (" + std::to_string(u.down.size()) + "), up_block_types (" +
               std::to_string(u.up.size()) + ") and block_out_channels (" + std::to_string(n) +
               ") must have one entry per block");
    for (const auto& t : u.down)
        if (t != "CrossAttnDownBlock2D" && t != "DownBlock2D")
            c.fail("down block type '" + t + "' is not supported (CrossAttnDownBlock2D, DownBlock2D)");
    for (const auto& t : u.up)
        if (t != "CrossAttnUpBlock2D" && t != "UpBlock2D")
            c.fail("up block type '" + t + "' is not supported (CrossAttnUpBlock2D, UpBlock2D)");
    u.mid = c.text("mid_block_type", "UNetMidBlock2DCrossAttn");
    if (u.mid != "UNetMidBlock2DCrossAttn") c.fail("mid_block_type '" + u.mid + "' is not supported (UNetMidBlock2DCrossAttn)");
    u.layers_per_block = c.per_block("layers_per_block", n, 2, true);
    for (auto l : u.layers_per_block)
        if (l < 1) c.fail("field 'layers_per_block' must be at least 1");
    // Stable Diffusion's configs call the head count attention_head_dim (diffusers keeps the name for them);
    // num_attention_heads, when set, is the head count.
    u.heads = c.has("num_attention_heads") ? c.per_block("num_attention_heads", n, 8)
                                           : c.per_block("attention_head_dim", n, 8);
    u.transformer_layers = c.per_block("transformer_layers_per_block", n, 1, true);
    u.groups = c.integer("norm_num_groups", 32);
    u.cross_dim = c.integer("cross_attention_dim", 1280);
    u.linear_projection = c.boolean("use_linear_projection", false);
    u.temb = c.integer("time_embedding_dim", u.channels[0] * 4);
    u.flash = inputs.flash_attention;
    c.refuse_set("reverse_transformer_layers_per_block", "a per-resnet list of transformer depths is not modelled");
    c.refuse_set("class_embed_type", "class embeddings are not modelled");
    c.refuse_set("num_class_embeds", "class embeddings are not modelled");
    c.refuse_set("encoder_hid_dim_type", "a projection of the text states is not modelled");
    c.refuse_set("time_cond_proj_dim", "a guidance-scale embedding (LCM) is not modelled");
    c.refuse_set("dual_cross_attention", "dual cross-attention is not modelled", false);
    c.refuse_set("only_cross_attention", "cross-attention-only blocks are not modelled", false);
    c.refuse_set("time_embedding_type", "only the sinusoidal (positional) time embedding is modelled", "positional");
    c.refuse_set("resnet_time_scale_shift", "only the additive time embedding (default) is modelled", "default");
    c.refuse_set("addition_embed_type", "only SDXL's text_time addition embedding is modelled", "text_time");
    return u;
}

}  // namespace

Model build_unet2d_condition(const Reader& c, const ModelInputs& inputs, Pipeline& pipeline) {
    const UNetShape u = read_shape(c, inputs);
    const size_t n = u.channels.size();
    const std::int64_t in_channels = c.integer("in_channels", 4), out_channels = c.integer("out_channels", 4);
    const std::int64_t conv_in_kernel = c.integer("conv_in_kernel", 3), conv_out_kernel = c.integer("conv_out_kernel", 3);
    for (auto k : {conv_in_kernel, conv_out_kernel})
        if (k % 2 == 0) c.fail("conv_in_kernel and conv_out_kernel must be odd (diffusers pads them by (k - 1) / 2)");
    pipeline.image = image_size(c, inputs, 64, std::int64_t{1} << (n - 1));
    const std::int64_t latent = pipeline.image / vae_factor, batch = inputs.batch;
    const bool text_time = c.text("addition_embed_type", "") == "text_time";

    // The published pipelines by the width of their text states.
    if (u.cross_dim == 768) {
        pipeline.text_encoders.push_back(clip_vit_l14_text(false));
    } else if (u.cross_dim == 1024) {
        pipeline.text_encoders.push_back(openclip_vit_h14_text());
    } else if (u.cross_dim == 2048 && text_time) {
        pipeline.text_encoders.push_back(clip_vit_l14_text(false));
        pipeline.text_encoders.push_back(openclip_vit_bigg14_text());
    } else if (u.cross_dim == 1280 && text_time) {  // the SDXL refiner: OpenCLIP bigG only
        pipeline.text_encoders.push_back(openclip_vit_bigg14_text());
    } else {
        pipeline.notes.push_back("no published text encoder has cross_attention_dim " + std::to_string(u.cross_dim) +
                                 ": the text encoder is left out (the denoiser reads " +
                                 std::to_string(u.text_tokens) + " text states)");
    }
    if (in_channels != pipeline.vae_latent_channels)
        pipeline.notes.push_back("in_channels " + std::to_string(in_channels) + ": the VAE's 4 latent channels plus "
                                 "conditioning channels (inpainting) that are taken as given");

    ModelBuilder b(c.class_name(), {batch, u.channels[0]}, infer_shape);
    // Sinusoidal timestep features (no parameters) through TimestepEmbedding: linear, SiLU, linear.
    b.add("linear", "time_embedding.linear_1", {{"out_features", u.temb}});
    b.add("activation", "time_embedding.silu", {{"function", "silu"}});
    b.add("linear", "time_embedding.linear_2", {{"out_features", u.temb}});
    if (text_time) {
        // SDXL: the pooled text embedding and six size/crop numbers (each sinusoidal features of
        // addition_time_embed_dim), concatenated: projection_class_embeddings_input_dim; added to the time embedding.
        b.set_shape({batch, c.integer("projection_class_embeddings_input_dim")});
        b.add("linear", "add_embedding.linear_1", {{"out_features", u.temb}});
        b.add("activation", "add_embedding.silu", {{"function", "silu"}});
        b.add("linear", "add_embedding.linear_2", {{"out_features", u.temb}});
        b.add("residual_add", "add_embedding.add_to_time_embedding");
    }

    b.set_shape({batch, in_channels, latent, latent});
    b.add("conv2d", "conv_in", {{"out_channels", u.channels[0]}, {"kernel_size", conv_in_kernel},
                                {"padding", (conv_in_kernel - 1) / 2}})
        .needs_input_grad = false;  // the noisy latents need no gradient
    std::vector<std::int64_t> skips = {u.channels[0]};  // the down path's outputs the up path concatenates
    for (size_t i = 0; i < n; ++i) {
        const std::string block = "down_blocks." + std::to_string(i);
        for (std::int64_t j = 0; j < u.layers_per_block[i]; ++j) {
            add_resnet(b, block + ".resnets." + std::to_string(j), u.channels[i], u.groups, u.temb);
            if (has_attention(u.down[i]) && u.transformer_layers[i] > 0)
                add_spatial_transformer(b, u, block + ".attentions." + std::to_string(j), u.heads[i],
                                        u.transformer_layers[i]);
            skips.push_back(u.channels[i]);
        }
        if (i + 1 < n) {
            b.add("conv2d", block + ".downsamplers.0",
                  {{"out_channels", u.channels[i]}, {"kernel_size", 3}, {"stride", 2},
                   {"padding", c.count("downsample_padding", 1)}});
            skips.push_back(u.channels[i]);
        }
    }
    add_resnet(b, "mid_block.resnets.0", u.channels.back(), u.groups, u.temb);
    if (u.transformer_layers.back() > 0)
        add_spatial_transformer(b, u, "mid_block.attentions.0", u.heads.back(), u.transformer_layers.back());
    add_resnet(b, "mid_block.resnets.1", u.channels.back(), u.groups, u.temb);
    for (size_t i = 0; i < n; ++i) {
        const size_t level = n - 1 - i;  // the up path mirrors the down path's per-block lists
        const std::string block = "up_blocks." + std::to_string(i);
        for (std::int64_t j = 0; j <= u.layers_per_block[level]; ++j) {
            if (skips.empty()) c.fail("the up blocks read more skip connections than the down blocks make");
            b.add("concat", block + ".resnets." + std::to_string(j) + ".skip_concat", {{"extra", skips.back()}});
            skips.pop_back();
            add_resnet(b, block + ".resnets." + std::to_string(j), u.channels[level], u.groups, u.temb);
            if (has_attention(u.up[i]) && u.transformer_layers[level] > 0)
                add_spatial_transformer(b, u, block + ".attentions." + std::to_string(j), u.heads[level],
                                        u.transformer_layers[level]);
        }
        if (i + 1 < n) {
            const Shape x = b.shape();
            // Nearest-neighbour interpolation to twice the size (each output reads one input; backward sums 4).
            b.add("memory_bound", block + ".upsamplers.0.interpolate",
                  {{"op", "upsample_nearest2d"}, {"output_shape", {x[0], x[1], 2 * x[2], 2 * x[3]}}, {"reads", 0.25},
                   {"flops_per_element", 0}, {"saves", false}});
            b.add("conv2d", block + ".upsamplers.0.conv", {{"out_channels", x[1]}, {"kernel_size", 3}, {"padding", 1}});
        }
    }
    b.add("groupnorm", "conv_norm_out", {{"groups", u.groups}});
    b.add("activation", "conv_act", {{"function", "silu"}});
    b.add("conv2d", "conv_out", {{"out_channels", out_channels}, {"kernel_size", conv_out_kernel},
                                 {"padding", (conv_out_kernel - 1) / 2}});
    // The loss: mean squared error against the added noise (read both, one pass; its gradient one more).
    const Shape y = b.shape();
    b.add("memory_bound", "mse_loss", {{"op", "mse_loss"}, {"output_shape", y}, {"reads", 2}, {"flops_per_element", 3}});
    return b.finish("vision", 0);
}

}  // namespace prenet::diffusers
