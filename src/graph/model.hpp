#pragma once
// The model graph: a sequence of blocks, each a run of layers repeated `repeat` times (a transformer's N
// identical blocks are stored once). Every layer carries its input and output shapes, batch first, so the
// op catalogue can cost it without looking at its neighbours.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace prenet {

using Shape = std::vector<std::int64_t>;
using json = nlohmann::json;

std::string to_string(const Shape& shape);
std::int64_t elements(const Shape& shape);  // checked product

struct Layer {
    std::string kind;   // key into the op catalogue ("linear", "conv2d", "attention", ...)
    std::string name;   // readable path, e.g. "blocks.attention"
    json attrs = json::object();
    Shape input;        // main input (batch first)
    Shape output;
    // False for layers whose input is the data itself: no input gradient is computed for them.
    bool needs_input_grad = true;
    // A frozen component of the model whatever the fine-tuning mode (a diffusion pipeline's VAE encoder and text
    // encoders, which turn the sample into the denoiser's inputs): its weights never train and get no adapters,
    // and when nothing before it trains it runs forward only (ops/features.cpp).
    bool frozen_component = false;
};

struct Block {
    std::string name;
    std::int64_t repeat = 1;
    std::vector<Layer> layers;
};

struct Model {
    std::string name;
    std::string domain = "custom";  // vision | language | speech | custom
    std::vector<Block> blocks;
    // What one sample is: tokens per sample for sequence models (0 for images).
    std::int64_t tokens_per_sample = 0;
    std::int64_t batch = 1;
    // The image side in pixels a vision model was built at when its first layer's input does not say it (a
    // diffusion model whose encoders are cached starts at its latents); 0: that input says it.
    std::int64_t image = 0;
    // A diffusion pipeline, whose frozen encoders run in the step or were cached ahead (--encoders): the replies
    // say so (`pipeline_encoders`), and only then does the option apply.
    bool pipeline_encoders = false;
    // What the importer could not model or left out (unknown layers with what was assumed for them, a part of
    // the document not imported): reported with every result, never dropped silently.
    std::vector<std::string> notes;
    // An imported graph's ops that map to no layer kind, with their counts: costed as memory-bound over their
    // tensors (importers/onnx.cpp) and listed in the replies, never dropped.
    std::vector<std::pair<std::string, std::int64_t>> unknown_ops;
};

}  // namespace prenet
