#include "importers/vision_language.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "graph/builder.hpp"
#include "importers/hf_config.hpp"
#include "importers/hf_fields.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

using hf::Config;

const std::set<std::string>& vision_language_types() {
    static const std::set<std::string> types = {"llava", "llava_next", "qwen2_vl", "qwen2_5_vl", "idefics3", "paligemma"};
    return types;
}

const json& section(const Config& c, const json& config, const char* key, const std::string& what) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) c.fail(std::string("missing object '") + key + "' (" + what + ")");
    if (!it->is_object()) c.fail(std::string("field '") + key + "' must be an object (" + what + ")");
    return *it;
}

// A nested text_config lists only what differs from its model type's config class defaults (LLaVA's names
// max_position_embeddings and vocab_size of a Llama-2-7B and leaves the rest to LlamaConfig's): those defaults.
json text_defaults(const std::string& type) {
    if (type == "llama")
        return {{"vocab_size", 32000}, {"hidden_size", 4096}, {"intermediate_size", 11008}, {"num_hidden_layers", 32},
                {"num_attention_heads", 32}, {"max_position_embeddings", 2048}};
    if (type == "mistral")
        return {{"vocab_size", 32000}, {"hidden_size", 4096}, {"intermediate_size", 14336}, {"num_hidden_layers", 32},
                {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"max_position_embeddings", 131072}};
    if (type == "gemma")
        return {{"vocab_size", 256000}, {"hidden_size", 3072}, {"intermediate_size", 24576}, {"num_hidden_layers", 28},
                {"num_attention_heads", 16}, {"num_key_value_heads", 16}, {"head_dim", 256},
                {"max_position_embeddings", 8192}};
    if (type == "qwen2")
        return {{"vocab_size", 151936}, {"hidden_size", 4096}, {"intermediate_size", 22016}, {"num_hidden_layers", 32},
                {"num_attention_heads", 32}, {"max_position_embeddings", 32768}};
    return json::object();
}

// The language model: text_config through the importer of its own model type (Qwen2-VL's first configs keep the
// Qwen2 fields at the top level instead). Only decoders: the image tokens are a prefix of a causal LM's sequence.
TransformerSpec text_model(const Config& c, const json& config, const std::string& type, const std::string& fallback_type,
                           const std::string& name) {
    json text;
    bool qwen = type == "qwen2_vl" || type == "qwen2_5_vl";
    if (qwen && !config.contains("text_config")) {
        text = config;
        text.erase("vision_config");
        text["model_type"] = "qwen2";
    } else {
        text = section(c, config, "text_config", "the language model");
    }
    if (!text.contains("model_type") || text["model_type"].is_null()) text["model_type"] = fallback_type;
    if (!text["model_type"].is_string()) c.fail("field 'text_config.model_type' must be a string");
    // transformers >= 4.52 writes Qwen2-VL's language model as its own type: the Qwen2 decoder.
    std::string text_type = text["model_type"];
    if (text_type == "qwen2_vl_text" || text_type == "qwen2_5_vl_text") text["model_type"] = text_type = "qwen2";
    const json defaults = text_defaults(text_type);
    for (const auto& [k, v] : defaults.items())
        if (!text.contains(k) || text[k].is_null()) text[k] = v;
    for (const char* key : {"torch_dtype", "dtype"})
        if (config.contains(key) && !text.contains(key)) text[key] = config[key];
    TransformerSpec spec = spec_from_hf_config(text, name);
    if (spec.arch != "decoder")
        c.fail("text_config model_type '" + text_type + "' is not a decoder language model");
    return spec;
}

// A CLIP or SigLIP tower (LLaVA, LLaVA-NeXT, PaliGemma, Idefics3's SigLIP copy) whose patch tokens go on.
TransformerSpec clip_or_siglip_tower(const Config& c, const json& config, const std::string& fallback_type) {
    const json& v = section(c, config, "vision_config", "the vision tower");
    std::string vtype = fallback_type;
    if (v.contains("model_type") && !v["model_type"].is_null()) {
        if (!v["model_type"].is_string()) c.fail("field 'vision_config.model_type' must be a string");
        vtype = v["model_type"];
    }
    bool siglip;
    if (vtype == "clip_vision_model") siglip = false;
    // Idefics3's vision model is SigLIP's, without the pooling head.
    else if (vtype == "siglip_vision_model" || vtype == "idefics3_vision" || vtype == "idefics3") siglip = true;
    else
        c.fail("unsupported vision_config model_type '" + vtype +
               "' (supported: clip_vision_model, siglip_vision_model, idefics3_vision)");
    TransformerSpec s = hf::clip_vision_tower(Config(v, vtype), siglip);
    s.vision_head = "tokens";
    return s;
}

// Qwen2-VL's ViT: a patch convolution over temporal_patch_size frames (an image is repeated to fill them: as
// many channels), 2D rotary positions (no table), pre-norm blocks with a fused qkv. Qwen2-VL: LayerNorm and a GELU
// MLP of mlp_ratio x embed_dim; Qwen2.5-VL: RMSNorm, a SwiGLU MLP of intermediate_size, and attention within
// windows of window_size pixels except in the fullatt_block_indexes layers.
TransformerSpec qwen_tower(const Config& c, const json& config, bool qwen25, std::int64_t& merge, std::int64_t& out) {
    Config v(section(c, config, "vision_config", "the vision tower"), qwen25 ? "qwen2_5_vl vision_config" : "qwen2_vl vision_config");
    TransformerSpec s;
    s.arch = "vit", s.vision_head = "tokens";
    s.position = "rotary", s.class_token = false, s.pre_norm = false, s.final_norm = false, s.patch_bias = false;
    s.layers = v.layers("depth", 32);
    s.heads = v.integer("num_heads", 16);
    s.patch = v.integer("patch_size", 14);
    s.channels = checked_mul(v.integer("in_chans", v.integer("in_channels", 3)), v.integer("temporal_patch_size", 2),
                             "patch channels");
    merge = v.integer("spatial_merge_size", 2);
    s.vocab = 1, s.classes = 1;
    if (qwen25) {
        s.hidden = v.integer("hidden_size", 1280);
        s.intermediate = v.integer("intermediate_size", 3420);
        s.gated = true, s.norm = "rmsnorm", s.norm_bias = false;
        s.activation = hf::activation(v, v.text("hidden_act", "silu"));
        out = v.integer("out_hidden_size", 3584);
        // Window attention: each window holds (window_size / patch_size)^2 patches; a bidirectional sliding window
        // of half that sees as many keys per query (ops/attention.cpp), the cost of attending within the window.
        std::int64_t window_px = v.integer("window_size", 112);
        if (window_px > 0 && s.patch > 0) {
            std::int64_t side = std::max<std::int64_t>(1, window_px / s.patch);
            s.sliding_window = std::max<std::int64_t>(1, side * side / 2);
            s.local_layers.assign(size_t(s.layers), true);
            if (v.has("fullatt_block_indexes")) {
                const json& full = v.raw("fullatt_block_indexes");
                if (!full.is_array()) v.fail("field 'fullatt_block_indexes' must be a list of layer indices");
                for (const auto& i : full) {
                    if (!i.is_number_integer() || i.get<std::int64_t>() < 0 || i.get<std::int64_t>() >= s.layers)
                        v.fail("field 'fullatt_block_indexes' holds " + i.dump() + ", not a layer index below " +
                               std::to_string(s.layers));
                    s.local_layers[size_t(i.get<std::int64_t>())] = false;
                }
            }
        }
    } else {
        s.hidden = v.integer("embed_dim", 1280);
        double ratio = v.number("mlp_ratio", 4.0);
        double width = double(s.hidden) * ratio;
        if (!(width >= 1 && width <= double(limits::dimension)))
            v.fail("embed_dim x mlp_ratio is " + json(width).dump() + ", not between 1 and the limit of " +
                   std::to_string(limits::dimension));
        s.intermediate = static_cast<std::int64_t>(width);
        s.activation = hf::activation(v, v.text("hidden_act", "quick_gelu"));
        out = v.integer("hidden_size", 3584);
    }
    return s;
}

std::int64_t vision_feature_layers(const Config& c) {
    if (!c.has("vision_feature_layer")) return 1;
    const json& f = c.raw("vision_feature_layer");
    if (f.is_number_integer()) return 1;
    if (f.is_array() && !f.empty() && f.size() <= 64) return static_cast<std::int64_t>(f.size());
    c.fail("field 'vision_feature_layer' must be a layer index or a list of them");
}

}  // namespace

bool is_vision_language_config(const json& config) {
    return config.is_object() && config.contains("model_type") && config["model_type"].is_string() &&
           vision_language_types().count(config["model_type"].get<std::string>());
}

VisionLanguageSpec vision_language_spec_from_hf_config(const json& config, const std::string& name) {
    if (!is_vision_language_config(config)) throw Error("config.json: not a vision-language model_type");
    VisionLanguageSpec s;
    s.type = config["model_type"];
    s.name = name;
    Config c(config, s.type);
    if (s.type == "llava" || s.type == "llava_next") {
        s.vision = clip_or_siglip_tower(c, config, "clip_vision_model");
        s.text = text_model(c, config, s.type, "llama", name);
        std::string select = c.text("vision_feature_select_strategy", "default");
        if (select != "default")
            c.fail("unsupported vision_feature_select_strategy '" + select + "' (supported: default, which drops the class token)");
        // Several feature layers are concatenated before the projector.
        s.merge = vision_feature_layers(c);
        s.projector = "mlp";
        s.projector_activation = hf::activation(c, c.text("projector_hidden_act", "gelu"));
        s.projector_bias = c.boolean("multimodal_projector_bias", true);
        s.projector_out = s.text.hidden;
        s.default_image = s.vision.image;
        if (s.type == "llava_next") {
            json grid = c.has("image_grid_pinpoints")
                            ? c.raw("image_grid_pinpoints")
                            : json::parse("[[336,672],[672,336],[672,672],[1008,336],[336,1008]]");
            if (!grid.is_array() || grid.empty() || grid.size() > 1024)
                c.fail("field 'image_grid_pinpoints' must be a list of [height, width] pairs");
            for (const auto& g : grid) {
                if (!g.is_array() || g.size() != 2 || !g[0].is_number_integer() || !g[1].is_number_integer())
                    c.fail("field 'image_grid_pinpoints' holds " + g.dump() + ", not a [height, width] pair");
                std::int64_t h = g[0].get<std::int64_t>(), w = g[1].get<std::int64_t>();
                if (s.vision.image <= 0 || h <= 0 || w <= 0 || h % s.vision.image || w % s.vision.image ||
                    h > limits::dimension || w > limits::dimension)
                    c.fail("field 'image_grid_pinpoints' holds " + g.dump() + ", not a multiple of the tower's image size " +
                           std::to_string(s.vision.image));
                s.grid_pinpoints.emplace_back(h, w);
                // The default image is the largest square grid (LLaVA-NeXT's 672 x 672: 2 x 2 tiles).
                if (h == w) s.default_image = std::max(s.default_image, h);
            }
        }
    } else if (s.type == "paligemma") {
        s.vision = clip_or_siglip_tower(c, config, "siglip_vision_model");
        s.text = text_model(c, config, s.type, "gemma", name);
        s.projector = "linear";
        s.projector_out = c.integer("projection_dim", 2048);
        s.default_image = s.vision.image;
        s.notes.push_back("PaliGemma's language model attends bidirectionally over the image and prompt prefix; "
                          "costed as causal attention over the whole sequence");
    } else if (s.type == "idefics3") {
        s.vision = clip_or_siglip_tower(c, config, "idefics3_vision");
        s.text = text_model(c, config, s.type, "llama", name);
        s.projector = "pixel_shuffle";
        s.projector_bias = false;
        s.merge = c.integer("scale_factor", 2);
        s.projector_out = s.text.hidden;
        // Idefics3's processor resizes the longest edge to 4 x the tower's image size (1456 for 364-px tiles).
        s.default_image = checked_mul(4, s.vision.image, "image size");
    } else {  // qwen2_vl, qwen2_5_vl
        std::int64_t out = 0;
        s.vision = qwen_tower(c, config, s.type == "qwen2_5_vl", s.merge, out);
        s.text = text_model(c, config, s.type, "qwen2", name);
        s.projector = "merger";
        s.projector_out = out;
        // Qwen2-VL takes images at their own resolution (rounded to 28-px multiples): 448 px is assumed.
        s.default_image = 448;
        s.notes.push_back("Qwen2-VL's multimodal rotary positions (mrope) cost as ordinary rotary ones");
    }
    if (s.merge < 1 || s.merge > 64) c.fail("the patch merge (spatial_merge_size, scale_factor) must be between 1 and 64");
    if (s.projector_out != s.text.hidden)
        c.fail("the projector's output size " + std::to_string(s.projector_out) + " differs from the language model's hidden_size " +
               std::to_string(s.text.hidden));
    s.vision.name = s.text.name = name;
    s.vision.dtype = s.text.dtype;
    return s;
}

ImageTokens image_tokens(const VisionLanguageSpec& s, std::int64_t image) {
    // The image size is the request's (--image): its errors name that field, not the model.
    auto fail = [&](const std::string& why) -> void {
        throw Error("model '" + s.name + "': " + why, ErrorCode::invalid_value, "image");
    };
    ImageTokens t;
    t.image = image ? image : s.default_image;
    if (t.image <= 0 || t.image > limits::dimension)
        fail("image size " + std::to_string(t.image) + " is out of the range 1 to " + std::to_string(limits::dimension));
    if (s.vision.patch <= 0) fail("patch size must be positive");
    const std::int64_t tile = s.vision.image;
    auto patches_per_side = [&](std::int64_t side) { return side / s.vision.patch; };
    if (s.type == "qwen2_vl" || s.type == "qwen2_5_vl") {
        std::int64_t unit = checked_mul(s.vision.patch, s.merge, "image unit");
        if (t.image % unit)
            fail("image size " + std::to_string(t.image) + " is not a multiple of " + std::to_string(unit) +
                 " (patch_size x spatial_merge_size), the sizes Qwen2-VL's processor resizes images to");
        t.crop = t.image;
        std::int64_t side = patches_per_side(t.image);
        t.tokens_per_crop = checked_mul(side, side, "patches") / (s.merge * s.merge);
        t.total = t.tokens_per_crop;
        t.how = "(" + std::to_string(t.image) + " / " + std::to_string(s.vision.patch) + ")^2 patches merged " +
                std::to_string(s.merge) + " x " + std::to_string(s.merge);
        return t;
    }
    if (tile <= 0 || tile % s.vision.patch)
        fail("the tower's image size " + std::to_string(tile) + " is not a multiple of its patch size " +
             std::to_string(s.vision.patch));
    t.crop = tile;
    std::int64_t side = patches_per_side(tile), patches = side * side;
    if (s.type == "llava" || s.type == "paligemma") {
        // The processor resizes every image to the tower's size, whose position table the checkpoint holds.
        if (t.image != tile)
            fail("image size " + std::to_string(t.image) + ": " + s.type + " resizes every image to its tower's " +
                 std::to_string(tile) + " px (vision_config.image_size); leave --image out or use a checkpoint of that size");
        t.tokens_per_crop = t.total = patches;
        t.how = "(" + std::to_string(tile) + " / " + std::to_string(s.vision.patch) + ")^2 patches";
        return t;
    }
    if (s.type == "idefics3") {
        if (side % s.merge)
            fail(std::to_string(side) + " patches per side are not a multiple of scale_factor " + std::to_string(s.merge));
        std::int64_t tiles = (t.image + tile - 1) / tile;
        t.crops = checked_add(checked_mul(tiles, tiles, "tiles"), tiles > 1 ? 1 : 0, "tiles");
        t.tokens_per_crop = patches / (s.merge * s.merge);
        t.total = checked_mul(t.crops, t.tokens_per_crop, "image tokens");
        t.how = std::to_string(tiles) + " x " + std::to_string(tiles) + " tiles of " + std::to_string(tile) + " px" +
                (tiles > 1 ? " and the downscaled whole image" : "") + ", each (" + std::to_string(tile) + " / " +
                std::to_string(s.vision.patch) + ")^2 patches / scale_factor^2";
        return t;
    }
    // LLaVA-NeXT's AnyRes: the grid that keeps the most of the image's resolution (then wastes the least), tiled
    // into crops of the tower's size, plus the whole image at that size; the tiles' features are cut back to the
    // image's aspect ratio and end each row with image_newline (transformers' select_best_resolution, unpad_image).
    std::int64_t best_h = 0, best_w = 0;
    double best_effective = -1, best_waste = std::numeric_limits<double>::infinity();
    for (auto [h, w] : s.grid_pinpoints) {
        double scale = std::min(double(w) / double(t.image), double(h) / double(t.image));
        double down = std::floor(double(t.image) * scale);
        double effective = std::min(down * down, double(t.image) * double(t.image));
        double waste = double(h) * double(w) - effective;
        if (effective > best_effective || (effective == best_effective && waste < best_waste))
            best_h = h, best_w = w, best_effective = effective, best_waste = waste;
    }
    std::int64_t gh = best_h / tile, gw = best_w / tile;
    t.crops = checked_add(checked_mul(gh, gw, "tiles"), 1, "tiles");
    t.tokens_per_crop = patches;
    std::int64_t rows = checked_mul(gh, side, "feature rows"), cols = checked_mul(gw, side, "feature columns");
    // A square image in a tall grid keeps `cols` rows, in a wide one `rows` columns (the padding is cut).
    if (cols < rows) rows -= 2 * ((rows - cols) / 2);
    else if (rows < cols) cols -= 2 * ((cols - rows) / 2);
    t.extra = rows;
    t.total = checked_add(patches, checked_mul(rows, cols + 1, "image tokens"), "image tokens");
    t.how = "AnyRes grid " + std::to_string(best_h) + " x " + std::to_string(best_w) + " (" + std::to_string(gh) + " x " +
            std::to_string(gw) + " tiles of " + std::to_string(tile) + " px) and the base image: " + std::to_string(patches) +
            " + " + std::to_string(rows) + " x (" + std::to_string(cols) + " + 1 newline)";
    return t;
}

Model build_vision_language(const VisionLanguageSpec& s, const ModelInputs& inputs) {
    if (inputs.batch <= 0) throw Error("batch size must be positive");
    ImageTokens img = image_tokens(s, inputs.image);
    std::int64_t seq = inputs.seq ? inputs.seq : s.text.default_seq;
    if (seq <= img.total)
        throw Error("model '" + s.name + "': a sequence of " + std::to_string(seq) + " tokens leaves no room for text beside the " +
                    std::to_string(img.total) + " image tokens of one " + std::to_string(img.image) +
                    "-px image (the sequence holds both; with context parallelism, each rank's share of it): give a longer --seq or a smaller --image",
                    ErrorCode::invalid_value, "seq");

    ModelInputs vision_inputs = inputs;
    vision_inputs.batch = checked_mul(inputs.batch, img.crops, "image crops in the batch");
    vision_inputs.image = img.crop, vision_inputs.seq = 0;
    Model vision = build_transformer(s.vision, vision_inputs);

    // The projector, from the tower's patch features (several feature layers side by side: LLaVA's list).
    std::int64_t side = img.crop / s.vision.patch, width = checked_mul(s.vision.hidden, s.projector == "mlp" ? s.merge : 1, "features");
    ModelBuilder b(s.name, {vision_inputs.batch, side * side, width}, infer_shape);
    b.begin_block("projector");
    const std::int64_t out = s.text.hidden;
    if (s.projector == "mlp") {
        b.add("linear", "projector.linear_1", {{"out_features", out}, {"bias", s.projector_bias}});
        b.add("activation", "projector.activation", {{"function", s.projector_activation}});
        b.add("linear", "projector.linear_2", {{"out_features", out}, {"bias", s.projector_bias}});
    } else if (s.projector == "linear") {
        b.add("linear", "projector.linear", {{"out_features", out}, {"bias", true}});
    } else if (s.projector == "pixel_shuffle") {
        std::int64_t m2 = s.merge * s.merge;
        b.add("reshape", "projector.pixel_shuffle", {{"shape", {side * side / m2, checked_mul(s.vision.hidden, m2, "features")}}});
        b.add("linear", "projector.modality_projection", {{"out_features", out}, {"bias", false}});
    } else {  // merger
        std::int64_t m2 = s.merge * s.merge, merged = checked_mul(s.vision.hidden, m2, "features");
        b.add(s.vision.norm, "projector.ln_q", {{"bias", s.vision.norm_bias}});
        b.add("reshape", "projector.merge", {{"shape", {side * side / m2, merged}}});
        b.add("linear", "projector.mlp_0", {{"out_features", merged}, {"bias", true}});
        b.add("activation", "projector.mlp_gelu", {{"function", "gelu"}});
        b.add("linear", "projector.mlp_2", {{"out_features", out}, {"bias", true}});
    }
    if (img.extra) {
        // LLaVA-NeXT's learned image_newline, added once per row of the tiled features.
        b.set_shape({inputs.batch, 1, out}, "image newline");
        b.add("positional_embedding", "projector.image_newline", {{"num_embeddings", 1}});
    }
    b.end_block();
    Model projector = b.finish("language", 0);
    // Its input is the tower's output, which trains: the input gradient is computed.
    projector.blocks.front().layers.front().needs_input_grad = true;

    ModelInputs text_inputs = inputs;
    text_inputs.seq = seq;
    Model text = build_transformer(s.text, text_inputs);

    Model m;
    m.name = s.name;
    m.domain = "language";
    m.batch = inputs.batch;
    m.tokens_per_sample = seq;
    // The tower's blocks are one stack, vision_tower (--freeze vision_tower freezes it whole).
    for (auto& block : vision.blocks) {
        const std::string prefix = "encoder.";
        if (block.name.rfind(prefix, 0) == 0) block.name = "vision_tower." + block.name.substr(prefix.size());
        else block.name = "vision_tower";
        m.blocks.push_back(std::move(block));
    }
    for (auto& block : projector.blocks) m.blocks.push_back(std::move(block));
    for (auto& block : text.blocks) m.blocks.push_back(std::move(block));
    m.notes = s.notes;
    m.notes.push_back("assumed one " + std::to_string(img.image) + " x " + std::to_string(img.image) + " image per sample: " +
                      std::to_string(img.total) + " image tokens (" + img.how + "); the sequence of " +
                      std::to_string(seq) + " tokens holds them and " + std::to_string(seq - img.total) + " text tokens");
    m.notes.insert(m.notes.end(), vision.notes.begin(), vision.notes.end());
    m.notes.insert(m.notes.end(), text.notes.begin(), text.notes.end());
    return m;
}

}  // namespace prenet
