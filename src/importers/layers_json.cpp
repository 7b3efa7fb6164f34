#include "importers/layers_json.hpp"

#include "core/error.hpp"
#include "core/limits.hpp"
#include "graph/builder.hpp"
#include "ops/catalogue.hpp"

namespace prenet {
namespace {

// An integer past limits::dimension (non-negative integers parse as unsigned: compared as such).
bool over_dimension(const json& v) {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>() > std::uint64_t(limits::dimension);
    return v.is_number_integer() && v.get<std::int64_t>() > limits::dimension;
}

// A positive integer, read as what it is (get<int64_t> would wrap an unsigned one past INT64_MAX negative, and
// a huge count would then read as "not positive"): callers check over_dimension first.
bool positive_integer(const json& v) {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>() > 0;
    return v.is_number_integer() && v.get<std::int64_t>() > 0;
}

Shape input_shape(const json& doc, const ModelInputs& in) {
    if (!doc.contains("input") || !doc["input"].is_object())
        throw Error("layers JSON: missing object 'input' ({\"shape\": [...]} per sample, or {\"tokens\": N})");
    const json& input = doc["input"];
    if (input.contains("tokens")) {
        if (over_dimension(input["tokens"]))
            throw Error("layers JSON: 'input.tokens' is over the limit of " + std::to_string(limits::dimension) +
                        " on any dimension");
        if (!positive_integer(input["tokens"])) throw Error("layers JSON: 'input.tokens' must be a positive integer");
        return {in.batch, in.seq ? in.seq : input["tokens"].get<std::int64_t>()};
    }
    if (!input.contains("shape") || !input["shape"].is_array() || input["shape"].empty())
        throw Error("layers JSON: 'input.shape' must be a non-empty list of per-sample dims");
    Shape s = {in.batch};
    for (const auto& d : input["shape"]) {
        if (over_dimension(d))
            throw Error("layers JSON: 'input.shape' holds " + d.dump() + ", over the limit of " +
                        std::to_string(limits::dimension) + " on any dimension");
        if (!positive_integer(d))
            throw Error("layers JSON: 'input.shape' must hold positive integers, got " + input["shape"].dump());
        s.push_back(d.get<std::int64_t>());
    }
    // --image resizes the spatial dims of an image input [C, H, W].
    if (in.image && s.size() == 4) s[2] = s[3] = in.image;
    return s;
}

void add_layers(ModelBuilder& b, const json& layers, const std::string& path, bool in_block);

void add_layer(ModelBuilder& b, const json& spec, const std::string& path, bool in_block) {
    if (!spec.is_object() || !spec.contains("type") || !spec["type"].is_string())
        throw Error("layers JSON: " + path + " must be an object with a string 'type'").at_path(path);
    const std::string type = spec["type"];
    if (spec.contains("name") && !spec["name"].is_string())
        throw Error("layers JSON: " + path + ": 'name' must be a string, got " + spec["name"].dump()).at_path(path);
    const std::string name = spec.value("name", path);
    if (type == "repeat" || type == "residual") {
        // Non-empty, so that unrolling a nested repeat adds layers and meets the layer limit rather than looping.
        if (!spec.contains("layers") || !spec["layers"].is_array() || spec["layers"].empty())
            throw Error("layers JSON: " + path + " (" + type + ") needs a non-empty 'layers' list").at_path(path);
    }
    if (type == "repeat") {
        if (spec.contains("count") && over_dimension(spec["count"]))
            throw Error("layers JSON: " + path + " (repeat): 'count' " + spec["count"].dump() + " is over the limit of " +
                        std::to_string(limits::dimension))
                .at_path(path)
                .at_attr("count");
        if (!spec.contains("count") || !positive_integer(spec["count"]))
            throw Error("layers JSON: " + path + " (repeat) needs a positive integer 'count'").at_path(path);
        std::int64_t count = spec["count"];
        if (in_block) {  // nested repeats are unrolled inside the enclosing block
            for (std::int64_t i = 0; i < count; ++i) add_layers(b, spec["layers"], name + "." + std::to_string(i), true);
            return;
        }
        Shape before = b.shape();
        b.begin_block(name, count);
        add_layers(b, spec["layers"], name, true);
        b.end_block();
        if (count > 1 && b.shape() != before)
            throw Error("layers JSON: " + path + " (repeat) changes the shape from " + to_string(before) + " to " +
                        to_string(b.shape()) + ", so it cannot be repeated").at_path(path);
        return;
    }
    if (type == "residual") {
        Shape before = b.shape();
        add_layers(b, spec["layers"], name, in_block);
        if (b.shape() != before)
            throw Error("layers JSON: " + path + " (residual) changes the shape from " + to_string(before) + " to " +
                        to_string(b.shape()) + "; a residual branch must keep it")
                .at_path(path);
        b.add("residual_add", name + ".add");
        return;
    }
    json attrs = spec;
    attrs.erase("type");
    attrs.erase("name");
    try {
        b.add(type, name, attrs);
    } catch (const Error& e) {
        // Unknown types and named layers: the op's message does not say where the layer is; the path is data too.
        Error located = std::string(e.what()).find("'" + path + "'") != std::string::npos
                            ? e
                            : Error("layers JSON: " + path + ": " + e.what(), e.code(), e.field());
        throw located.at_path(path).at_attr(e.attr());
    }
}

void add_layers(ModelBuilder& b, const json& layers, const std::string& path, bool in_block) {
    for (size_t i = 0; i < layers.size(); ++i)
        add_layer(b, layers[i], path + "[" + std::to_string(i) + "]", in_block);
}

}  // namespace

bool looks_like_layers_json(const json& document) {
    return document.is_object() && document.contains("layers") && !document.contains("model_type");
}

Model model_from_layers_json(const json& doc, const ModelInputs& in) {
    if (!looks_like_layers_json(doc)) throw Error("layers JSON: expected an object with a 'layers' list");
    if (!doc["layers"].is_array() || doc["layers"].empty()) throw Error("layers JSON: 'layers' must be a non-empty list");
    if (in.batch <= 0) throw Error("batch size must be positive");
    for (const char* key : {"name", "domain"})
        if (doc.contains(key) && !doc[key].is_string())
            throw Error(std::string("layers JSON: '") + key + "' must be a string, got " + doc[key].dump());
    std::string name = doc.value("name", "custom");
    Shape input = input_shape(doc, in);
    ModelBuilder b(name, input, infer_shape);
    add_layers(b, doc["layers"], "layers", false);
    std::string domain = doc.value("domain", "custom");
    Model model = b.finish(domain, doc["input"].contains("tokens") ? input[1] : 0);
    // An attention layer that names its kernel (`flash`) keeps it; the others run the requested one (--attention,
    // flash by default: PyTorch's SDPA).
    for (auto& block : model.blocks)
        for (auto& layer : block.layers)
            if ((layer.kind == "attention" || layer.kind == "mla_attention") && !layer.attrs.contains("flash"))
                layer.attrs["flash"] = in.flash_attention;
    return model;
}

}  // namespace prenet
