#pragma once
// The built-in model zoo: named architectures built at the sizes the user asks for.
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "graph/model.hpp"

namespace prenet {

// Sizes a model is built at; 0 means "the model's default" (see ZooEntry).
struct ModelInputs {
    std::int64_t batch = 1;
    std::int64_t seq = 0;    // tokens per sample (language, speech)
    std::int64_t image = 0;  // image side in pixels (vision)
    bool flash_attention = false;  // transformers use one fused attention kernel (FlashAttention / SDPA)
    // Whether flash_attention was asked for explicitly (`--attention`): then it wins over a config's own
    // attn_implementation; otherwise it is the default, and a config or a layer that names its kernel wins.
    bool attention_given = false;
    // Which generation of fused kernel flash_attention stands for (AttentionShape::generation): 2, or 1 for
    // `--attention flash1` (FlashAttention 1, the Triton FlashAttention of 2022), which api/request_context.cpp's
    // build_model applies to every attention layer the importer made fused.
    int flash_generation = 2;
    // A diffusion pipeline's latents and text embeddings were computed ahead of training (--encoders cached): its
    // frozen VAE encoder and text encoders are not part of the step (importers/diffusers.cpp).
    bool cached_encoders = false;
    // Every field, for comparisons (what a kept plan search is keyed by: api/parallel_result.cpp).
    auto fields() const {
        return std::tie(batch, seq, image, flash_attention, attention_given, flash_generation, cached_encoders);
    }
};

struct ZooEntry {
    std::string id;
    std::string domain;       // vision | language | speech
    std::string description;  // one line, with the source of the architecture
    std::int64_t default_seq = 0;
    std::int64_t default_image = 0;
    std::function<Model(const ModelInputs&)> build;  // inputs already defaulted
};

const std::vector<ZooEntry>& zoo();
const ZooEntry& find_zoo_entry(const std::string& id);  // throws Error listing close ids
// Builds a zoo model, filling 0 sizes with the entry's defaults.
Model build_zoo_model(const std::string& id, ModelInputs inputs);

// Contributors, one per file.
std::vector<ZooEntry> cnn_zoo();          // importers/cnn_zoo.cpp
std::vector<ZooEntry> transformer_zoo();  // importers/transformer_zoo.cpp
std::vector<ZooEntry> recurrent_zoo();    // importers/recurrent_zoo.cpp
std::vector<ZooEntry> state_space_zoo();  // importers/state_space_zoo.cpp

}  // namespace prenet
