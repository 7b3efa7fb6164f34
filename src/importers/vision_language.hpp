#pragma once
// Hugging Face vision-language configs: model_type llava, llava_next, qwen2_vl, qwen2_5_vl, idefics3 and
// paligemma. One Model runs the vision tower on the sample's image crops, the projector that turns its patch
// features into the language model's embeddings, then the language model on the whole sequence: text tokens and
// image tokens together (docs/importers.md, "Vision-language models").
#include <cstdint>
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "importers/transformer.hpp"
#include "importers/zoo.hpp"

namespace prenet {

struct VisionLanguageSpec {
    std::string name, type;  // type: the config's model_type
    TransformerSpec vision;  // a ViT whose vision_head is "tokens"
    TransformerSpec text;    // a decoder, from text_config (or the top-level fields, Qwen2-VL)
    // The projector: mlp (LLaVA: linear, activation, linear), linear (PaliGemma), merger (Qwen: a norm, merge x merge
    // neighbouring patches into one token, an MLP) or pixel_shuffle (Idefics3: scale x scale patches into one
    // token, a linear).
    std::string projector;
    std::string projector_activation = "gelu";
    bool projector_bias = true;
    std::int64_t projector_out = 0;  // PaliGemma's projection_dim; otherwise the language model's hidden size
    std::int64_t merge = 1;          // Qwen's spatial_merge_size, Idefics3's scale_factor
    // LLaVA-NeXT's AnyRes grids (height, width in pixels) and Idefics3's tiles of the tower's image size.
    std::vector<std::pair<std::int64_t, std::int64_t>> grid_pinpoints;
    std::int64_t default_image = 0;  // the image side assumed when --image is not given
    std::vector<std::string> notes;
};

// How one sample's image reaches the language model: the crops the tower runs on and the tokens they become.
struct ImageTokens {
    std::int64_t image = 0;          // the image side (pixels), square
    std::int64_t crops = 1;          // images the tower runs on per sample (AnyRes tiles and the base image)
    std::int64_t crop = 0;           // their side (pixels)
    std::int64_t tokens_per_crop = 0;  // after the projector
    std::int64_t extra = 0;          // LLaVA-NeXT: its image_newline tokens, one per row of the tiled grid
    std::int64_t total = 0;          // image tokens in the sequence (after LLaVA-NeXT's unpadding)
    std::string how;                 // in words, for the model's notes
};

bool is_vision_language_config(const json& config);
VisionLanguageSpec vision_language_spec_from_hf_config(const json& config, const std::string& name);
// The image tokens at `image` pixels (0: the model's default); refuses a size the model cannot take.
ImageTokens image_tokens(const VisionLanguageSpec& spec, std::int64_t image);
// inputs.seq is the language model's whole sequence, text and image tokens (0: the text model's default).
Model build_vision_language(const VisionLanguageSpec& spec, const ModelInputs& inputs);

}  // namespace prenet
