#pragma once
// diffusers config.json import (a `_class_name` / `_diffusers_version` document, docs/importers.md "Diffusion"):
// the denoiser of a latent-diffusion pipeline (UNet2DConditionModel: SD 1.x, 2.x, SDXL; SD3Transformer2DModel:
// SD3, SD3.5; FluxTransformer2DModel: FLUX.1) trained at an image size, after the pipeline's frozen parts, which run forward only: the VAE
// encoder that turns the image into latents and the text encoder(s) of the published pipeline.
#include "graph/model.hpp"
#include "importers/zoo.hpp"

namespace prenet {

// An object with a string `_class_name` (diffusers writes it, with `_diffusers_version`, into every config).
bool looks_like_diffusers_config(const json& document);
// The training step's model at inputs.image pixels (0: the config's sample_size x the VAE's factor 8). Throws Error
// naming the field for a missing or bad one, and listing the supported `_class_name`s for any other.
Model model_from_diffusers_config(const json& config, const ModelInputs& inputs);

}  // namespace prenet
