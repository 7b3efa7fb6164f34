#pragma once
// What the diffusers importer's files share (importers/diffusers.cpp assembles the pipeline; diffusers_unet.cpp
// and diffusers_mmdit.cpp build the denoisers): typed access to a config, the pieces both a UNet and the VAE
// encoder are made of, and what a denoiser tells the assembly about its pipeline.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/builder.hpp"
#include "graph/model.hpp"
#include "importers/config_fields.hpp"
#include "importers/transformer.hpp"
#include "importers/zoo.hpp"

namespace prenet::diffusers {

// A config's fields with errors naming the class and the field (strings, booleans and absent nulls are
// ConfigFields'; a diffusers size is a positive integer, whole-number floats such as 64.0 accepted).
class Reader : public ConfigFields {
public:
    Reader(const json& config, std::string class_name)
        : ConfigFields(config, "diffusers config (" + class_name + ")"), class_(std::move(class_name)) {}
    const std::string& class_name() const { return class_; }

    // A positive integer within limits::dimension.
    std::int64_t integer(const char* key) const;
    std::int64_t integer(const char* key, std::int64_t fallback) const;
    // A count of layers: 0 to limits::layers.
    std::int64_t count(const char* key, std::int64_t fallback) const;
    // An integer or a list of `n` of them (per block: attention_head_dim, transformer_layers_per_block).
    std::vector<std::int64_t> per_block(const char* key, size_t n, std::int64_t fallback, bool is_count = false) const;
    std::vector<std::int64_t> integers(const char* key) const;  // a non-empty list of positive integers
    std::vector<std::string> strings(const char* key) const;    // a non-empty list of strings
    std::vector<std::int64_t> indices(const char* key) const;   // a list, maybe empty, of layer indices (absent: none)
    // Refuses a field that is set (not absent, null or `allowed`) and that the importer does not model.
    void refuse_set(const char* key, const std::string& why, const json& allowed = nullptr) const;

private:
    std::int64_t to_int(const char* key, const json& v, std::int64_t lo, std::int64_t hi) const;
    std::string class_;
};

// What a denoiser's pipeline adds before it, frozen (forward only): the VAE encoder at `image` pixels and the text
// encoders on `text_tokens` tokens.
struct Pipeline {
    std::int64_t image = 0;                   // pixels per side
    std::int64_t vae_latent_channels = 4;     // AutoencoderKL latent_channels
    bool vae_quant_conv = true;               // SD 1.x/2.x/XL's VAE has quant_conv; SD3's and Flux's do not
    struct TextEncoder {
        std::string label;          // as the notes name it: "CLIP ViT-L/14"
        TransformerSpec spec;       // an encoder over text_tokens tokens
        bool projection = false;    // CLIPTextModelWithProjection's text_projection on the pooled token
    };
    std::vector<TextEncoder> text_encoders;
    std::int64_t text_tokens = 77;
    std::vector<std::string> notes;
};

// The VAE's spatial factor (three downsamplings of AutoencoderKL's four blocks).
inline constexpr std::int64_t vae_factor = 8;

// The image size: inputs.image, or sample_size (latents) x 8; a multiple of 8 x `latent_multiple`.
std::int64_t image_size(const Reader& c, const ModelInputs& inputs, std::int64_t default_sample,
                        std::int64_t latent_multiple);

// diffusers' ResnetBlock2D on [batch, C, H, W]: GroupNorm, SiLU, conv 3x3, the time embedding's projection
// (silu, linear from `temb_channels` to `out`, added; none when 0), GroupNorm, SiLU, conv 3x3, a 1x1 conv
// shortcut when the channels change, and the residual add.
void add_resnet(ModelBuilder& b, const std::string& name, std::int64_t out, std::int64_t groups,
                std::int64_t temb_channels);
// The text towers of the published pipelines (hyper-parameters from their text_encoder configs).
Pipeline::TextEncoder clip_vit_l14_text(bool projection);  // openai/clip-vit-large-patch14's text tower
Pipeline::TextEncoder openclip_vit_h14_text();             // SD 2.x: 23 of OpenCLIP ViT-H/14's 24 text layers
Pipeline::TextEncoder openclip_vit_bigg14_text();          // SDXL's and SD3's text_encoder_2, with projection
Pipeline::TextEncoder t5_xxl_encoder();                    // SD3's text_encoder_3: T5 v1.1 XXL's encoder

// The denoisers: each builds its model at the pipeline's sizes (filling `pipeline`) with its own builder.
Model build_unet2d_condition(const Reader& c, const ModelInputs& inputs, Pipeline& pipeline);
Model build_sd3_transformer(const Reader& c, const ModelInputs& inputs, Pipeline& pipeline);
Model build_flux_transformer(const Reader& c, const ModelInputs& inputs, Pipeline& pipeline);

}  // namespace prenet::diffusers
