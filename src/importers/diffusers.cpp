// diffusers configs: which denoiser a `_class_name` names, the frozen parts of its pipeline (the VAE encoder and
// the text encoders, forward only) and the whole training step's model: encoders first, then the denoiser.
#include "importers/diffusers.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/utf8.hpp"
#include "importers/diffusers_parts.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace diffusers {

std::int64_t Reader::to_int(const char* key, const json& v, std::int64_t lo, std::int64_t hi) const {
    // JSON writers spell whole numbers 64.0 as well as 64.
    double x = v.is_number() ? v.get<double>() : NAN;
    if (!v.is_number() || !std::isfinite(x) || x != std::floor(x))
        fail(std::string("field '") + key + "' must be an integer, got " + v.dump());
    if (x < double(lo) || x > double(hi))
        fail(std::string("field '") + key + "' is " + v.dump() + ", out of the range " + std::to_string(lo) + " to " +
             std::to_string(hi));
    return v.is_number_integer() ? v.get<std::int64_t>() : std::int64_t(x);
}

std::int64_t Reader::integer(const char* key) const {
    const json* v = find(key);
    if (!v) fail(std::string("missing field '") + key + "'");
    return to_int(key, *v, 1, limits::dimension);
}

std::int64_t Reader::integer(const char* key, std::int64_t fallback) const {
    return has(key) ? integer(key) : fallback;
}

std::int64_t Reader::count(const char* key, std::int64_t fallback) const {
    const json* v = find(key);
    return v ? to_int(key, *v, 0, limits::layers) : fallback;
}

std::vector<std::int64_t> Reader::per_block(const char* key, size_t n, std::int64_t fallback, bool is_count) const {
    const json* v = find(key);
    std::int64_t lo = is_count ? 0 : 1, hi = is_count ? limits::layers : limits::dimension;
    if (!v) return std::vector<std::int64_t>(n, fallback);
    if (!v->is_array()) return std::vector<std::int64_t>(n, to_int(key, *v, lo, hi));
    if (v->size() != n)
        fail(std::string("field '") + key + "' has " + std::to_string(v->size()) + " entries, one per block: expected " +
             std::to_string(n) + " (as block_out_channels)");
    std::vector<std::int64_t> out;
    for (const auto& x : *v) out.push_back(to_int(key, x, lo, hi));
    return out;
}

std::vector<std::int64_t> Reader::integers(const char* key) const {
    const json* v = find(key);
    if (!v) fail(std::string("missing field '") + key + "'");
    if (!v->is_array() || v->empty()) fail(std::string("field '") + key + "' must be a non-empty list of integers");
    if (v->size() > 64) fail(std::string("field '") + key + "' has " + std::to_string(v->size()) + " entries (at most 64)");
    std::vector<std::int64_t> out;
    for (const auto& x : *v) out.push_back(to_int(key, x, 1, limits::dimension));
    return out;
}

std::vector<std::int64_t> Reader::indices(const char* key) const {
    const json* v = find(key);
    if (!v) return {};
    if (!v->is_array() || v->size() > size_t(limits::layers))
        fail(std::string("field '") + key + "' must be a list of layer indices");
    std::vector<std::int64_t> out;
    for (const auto& x : *v) out.push_back(to_int(key, x, 0, limits::layers));
    return out;
}

std::vector<std::string> Reader::strings(const char* key) const {
    const json* v = find(key);
    if (!v) fail(std::string("missing field '") + key + "'");
    if (!v->is_array() || v->empty()) fail(std::string("field '") + key + "' must be a non-empty list of strings");
    if (v->size() > 64) fail(std::string("field '") + key + "' has " + std::to_string(v->size()) + " entries (at most 64)");
    std::vector<std::string> out;
    for (const auto& x : *v) {
        if (!x.is_string()) fail(std::string("field '") + key + "' must hold strings, got " + x.dump());
        out.push_back(x.get<std::string>());
    }
    return out;
}

void Reader::refuse_set(const char* key, const std::string& why, const json& allowed) const {
    const json* v = find(key);
    if (v && *v != allowed) fail(std::string("field '") + key + "' is " + v->dump() + ": " + why);
}

std::int64_t image_size(const Reader& c, const ModelInputs& inputs, std::int64_t default_sample,
                        std::int64_t latent_multiple) {
    std::int64_t image = inputs.image;
    if (!image) image = c.integer("sample_size", default_sample) * vae_factor;
    std::int64_t step = vae_factor * latent_multiple;
    if (image % step)
        throw Error("image size " + std::to_string(image) + " px does not fit this " + c.class_name() +
                    ": the latents (image / " + std::to_string(vae_factor) + ") must be a multiple of " +
                    std::to_string(latent_multiple) + ", so the image a multiple of " + std::to_string(step) + " px");
    return image;
}

void add_resnet(ModelBuilder& b, const std::string& name, std::int64_t out, std::int64_t groups,
                std::int64_t temb_channels) {
    const Shape x = b.shape();
    b.add("groupnorm", name + ".norm1", {{"groups", groups}});
    b.add("activation", name + ".silu1", {{"function", "silu"}});
    b.add("conv2d", name + ".conv1", {{"out_channels", out}, {"kernel_size", 3}, {"padding", 1}});
    if (temb_channels) {
        // The time embedding (one vector per sample) projected to the channels and broadcast over the pixels.
        const Shape h = b.shape();
        b.set_shape({x[0], temb_channels});
        b.add("activation", name + ".time_silu", {{"function", "silu"}});
        b.add("linear", name + ".time_emb_proj", {{"out_features", out}});
        b.set_shape(h);
        b.add("residual_add", name + ".add_time_embedding");
    }
    b.add("groupnorm", name + ".norm2", {{"groups", groups}});
    b.add("activation", name + ".silu2", {{"function", "silu"}});
    b.add("conv2d", name + ".conv2", {{"out_channels", out}, {"kernel_size", 3}, {"padding", 1}});
    if (x[1] != out) {
        const Shape h = b.shape();
        b.set_shape(x);
        b.add("conv2d", name + ".conv_shortcut", {{"out_channels", out}, {"kernel_size", 1}});
        b.set_shape(h);
    }
    b.add("residual_add", name + ".residual");
}

// CLIP's text transformer: learned positions, pre-norm layers with separate q, k, v projections (all biased),
// quick_gelu (costed as GELU, the function it approximates), a final LayerNorm; the whole stack runs even where
// the pipeline reads the penultimate layer's states (SDXL), since the encoder computes every layer.
Pipeline::TextEncoder clip_text(const std::string& label, std::int64_t hidden, std::int64_t layers,
                                std::int64_t heads, std::int64_t intermediate, bool projection) {
    TransformerSpec s;
    s.name = label;
    s.arch = "encoder";
    s.vocab = 49408, s.max_positions = 77, s.default_seq = 77;
    s.hidden = hidden, s.layers = layers, s.heads = heads, s.intermediate = intermediate;
    s.activation = "gelu";
    s.separate_qkv = true;
    return {label, s, projection};
}

// openai/clip-vit-large-patch14 text_config (SD 1.x's text_encoder, SDXL's and SD3's first): 768 wide, 12 layers,
// 12 heads, 3072 MLP.
Pipeline::TextEncoder clip_vit_l14_text(bool projection) {
    return clip_text("CLIP ViT-L/14 text encoder", 768, 12, 12, 3072, projection);
}

// stabilityai/stable-diffusion-2-1 text_encoder/config.json: 1024 wide, 23 layers, 16 heads, 4096 MLP.
Pipeline::TextEncoder openclip_vit_h14_text() {
    return clip_text("OpenCLIP ViT-H/14 text encoder", 1024, 23, 16, 4096, false);
}

// stabilityai/stable-diffusion-xl-base-1.0 text_encoder_2/config.json (CLIPTextModelWithProjection): 1280 wide,
// 32 layers, 20 heads, 5120 MLP, a 1280 x 1280 text projection.
Pipeline::TextEncoder openclip_vit_bigg14_text() {
    return clip_text("OpenCLIP ViT-bigG/14 text encoder", 1280, 32, 20, 5120, true);
}

// google/t5-v1_1-xxl's encoder (SD3's text_encoder_3, T5EncoderModel): d_model 4096, 24 layers, 64 heads of 64,
// gated-GELU MLP of 10240, RMSNorm, no biases, relative position buckets (32), vocabulary 32128.
Pipeline::TextEncoder t5_xxl_encoder() {
    TransformerSpec s;
    s.name = "T5 v1.1 XXL encoder";
    s.arch = "encoder";
    s.vocab = 32128, s.hidden = 4096, s.layers = 24, s.heads = 64, s.head_dim = 64, s.intermediate = 10240;
    s.activation = "gelu_tanh", s.gated = true;
    s.norm = "rmsnorm", s.norm_bias = false;
    s.attention_bias = false, s.attention_out_bias = false, s.mlp_bias = false;
    s.separate_qkv = true;
    s.position = "relative";
    s.default_seq = 256;
    return {s.name, s, false};
}

namespace {

// AutoencoderKL's encoder (the SD VAE: block_out_channels 128, 256, 512, 512; two ResNet blocks per level; a
// stride-2 conv between levels; a mid block of ResNet, single-head attention, ResNet), then its quant_conv.
// diffusers pads the downsampling convs (0, 1, 0, 1) and runs them unpadded: as a padding of 1, the same outputs.
Model build_vae_encoder(const Pipeline& p, const ModelInputs& inputs) {
    const std::int64_t channels[] = {128, 256, 512, 512}, groups = 32;
    ModelBuilder b("vae_encoder", {inputs.batch, 3, p.image, p.image}, infer_shape);
    b.add("conv2d", "vae_encoder.conv_in", {{"out_channels", channels[0]}, {"kernel_size", 3}, {"padding", 1}});
    for (int i = 0; i < 4; ++i) {
        std::string block = "vae_encoder.down_blocks." + std::to_string(i);
        for (int j = 0; j < 2; ++j) add_resnet(b, block + ".resnets." + std::to_string(j), channels[i], groups, 0);
        if (i < 3)
            b.add("conv2d", block + ".downsampler",
                  {{"out_channels", channels[i]}, {"kernel_size", 3}, {"stride", 2}, {"padding", 1}});
    }
    add_resnet(b, "vae_encoder.mid_block.resnets.0", 512, groups, 0);
    const Shape x = b.shape();
    b.add("groupnorm", "vae_encoder.mid_block.attention.group_norm", {{"groups", groups}});
    b.add("reshape", "vae_encoder.mid_block.attention.to_tokens", {{"shape", {x[2] * x[3], x[1]}}});
    b.add("attention", "vae_encoder.mid_block.attention",
          {{"heads", 1}, {"projections", "separate"}, {"flash", inputs.flash_attention}});
    b.add("reshape", "vae_encoder.mid_block.attention.to_pixels", {{"shape", {x[1], x[2], x[3]}}});
    b.add("residual_add", "vae_encoder.mid_block.attention.residual");
    add_resnet(b, "vae_encoder.mid_block.resnets.1", 512, groups, 0);
    b.add("groupnorm", "vae_encoder.conv_norm_out", {{"groups", groups}});
    b.add("activation", "vae_encoder.conv_act", {{"function", "silu"}});
    // The mean and log-variance of the latent distribution (double_z).
    b.add("conv2d", "vae_encoder.conv_out", {{"out_channels", 2 * p.vae_latent_channels}, {"kernel_size", 3}, {"padding", 1}});
    if (p.vae_quant_conv) b.add("conv2d", "vae.quant_conv", {{"out_channels", 2 * p.vae_latent_channels}, {"kernel_size", 1}});
    return b.finish("vision", 0);
}

Model build_text_encoder(const Pipeline::TextEncoder& e, const std::string& prefix, const ModelInputs& inputs) {
    ModelInputs in = inputs;
    in.seq = e.spec.default_seq;  // the pipeline's token count, whatever --seq says (the sample is an image)
    Model m = build_transformer(e.spec, in);
    for (auto& block : m.blocks) {
        if (!block.name.empty()) block.name = prefix + "." + block.name;
        for (auto& layer : block.layers) layer.name = prefix + "." + layer.name;
    }
    if (e.projection) {  // the pooled (end-of-text) token through the bias-free text projection
        Shape out = m.blocks.back().layers.back().output;
        ModelBuilder b(prefix, out, infer_shape);
        b.add("select_token", prefix + ".pooled_token");
        b.add("linear", prefix + ".text_projection", {{"out_features", e.spec.hidden}, {"bias", false}});
        for (auto& block : b.finish("language", 0).blocks) m.blocks.push_back(std::move(block));
    }
    return m;
}

void append_frozen(Model& into, Model part) {
    for (auto& block : part.blocks) {
        for (auto& layer : block.layers) layer.frozen_component = true;
        into.blocks.push_back(std::move(block));
    }
}

std::string millions(double params) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1fM", params / 1e6);
    return text;
}

std::int64_t model_params(const Model& m) {
    std::int64_t total = 0;
    for (const auto& block : m.blocks)
        for (const auto& layer : block.layers) total += layer_cost(layer, Precision::fp32).params * block.repeat;
    return total;
}

}  // namespace
}  // namespace diffusers

bool looks_like_diffusers_config(const json& document) {
    return document.is_object() && document.contains("_class_name") && document["_class_name"].is_string();
}

Model model_from_diffusers_config(const json& config, const ModelInputs& inputs) {
    using namespace diffusers;
    const std::string class_name = config["_class_name"].get<std::string>();
    Reader c(config, class_name);
    Pipeline pipeline;
    Model denoiser;
    if (class_name == "UNet2DConditionModel") denoiser = build_unet2d_condition(c, inputs, pipeline);
    else if (class_name == "SD3Transformer2DModel") denoiser = build_sd3_transformer(c, inputs, pipeline);
    else if (class_name == "FluxTransformer2DModel") denoiser = build_flux_transformer(c, inputs, pipeline);
    else
        throw Error("diffusers config: _class_name '" + valid_utf8(class_name) + "' is not supported (supported: the denoisers "
                    "UNet2DConditionModel (SD 1.x, 2.x, SDXL), SD3Transformer2DModel (SD3, SD3.5) and "
                    "FluxTransformer2DModel (FLUX.1))");
    Model m;
    m.name = valid_utf8(config.contains("_name_or_path") && config["_name_or_path"].is_string()
                            ? config["_name_or_path"].get<std::string>()
                            : class_name);
    m.domain = "vision";
    m.batch = inputs.batch;
    m.tokens_per_sample = 0;  // a sample is an image
    m.image = pipeline.image;
    m.pipeline_encoders = true;
    std::string frozen;
    if (!inputs.cached_encoders) {
        Model vae = build_vae_encoder(pipeline, inputs);
        frozen = "VAE encoder (AutoencoderKL, " + millions(double(model_params(vae))) + ")";
        append_frozen(m, std::move(vae));
        for (size_t i = 0; i < pipeline.text_encoders.size(); ++i) {
            const auto& e = pipeline.text_encoders[i];
            Model text = build_text_encoder(e, i ? "text_encoder_" + std::to_string(i + 1) : "text_encoder", inputs);
            frozen += ", " + e.label + " (" + millions(double(model_params(text))) + ", " +
                      std::to_string(text.blocks.front().layers.front().input[1]) + " tokens)";
            append_frozen(m, std::move(text));
        }
    }
    for (auto& block : denoiser.blocks) m.blocks.push_back(std::move(block));
    std::int64_t latent = pipeline.image / vae_factor;
    m.notes.push_back("diffusers " + class_name + ": trains the denoiser at " + std::to_string(pipeline.image) + "x" +
                      std::to_string(pipeline.image) + " px images (--image; default sample_size x 8), latents " +
                      std::to_string(pipeline.vae_latent_channels) + "x" + std::to_string(latent) + "x" +
                      std::to_string(latent) + " (the VAE's factor 8)");
    m.notes.push_back(inputs.cached_encoders
                          ? "--encoders cached: the latents and text embeddings were computed ahead of training; the "
                            "VAE encoder and text encoders are not in the step"
                          : "frozen, forward only: " + frozen + " (--encoders cached leaves them out)");
    for (auto& note : pipeline.notes) m.notes.push_back(std::move(note));
    m.notes.push_back("not costed: the noise scheduler's sampling and noising, EMA weights, the text dropout of "
                      "classifier-free guidance; the loss is the MSE on the denoiser's output");
    return m;
}

}  // namespace prenet
