#pragma once
// Typed reading of a Hugging Face config.json's fields, shared by the importers of one config (hf_config.cpp,
// hf_state_space.cpp) and of the configs that nest others (vision_language.cpp: a vision_config and a text_config):
// every error names the model type and the field at fault.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "graph/model.hpp"
#include "importers/config_fields.hpp"
#include "importers/transformer.hpp"

namespace prenet::hf {

// Typed access to a config with errors that say which model type and field are at fault (the reading shared with
// other config importers is ConfigFields').
class Config : public ConfigFields {
public:
    Config(const json& j, std::string type) : ConfigFields(j, "config.json (model_type '" + type + "')") {}

    std::int64_t integer(const char* key) const {
        const json* v = find(key);
        if (!v) fail(std::string("missing field '") + key + "'");
        return to_int(key, *v);
    }
    std::int64_t integer(const char* key, std::int64_t fallback) const {
        const json* v = find(key);
        return v ? to_int(key, *v) : fallback;
    }
    // First present of several synonyms (e.g. n_embd / hidden_size).
    std::int64_t integer_any(std::initializer_list<const char*> keys) const {
        for (const char* k : keys)
            if (find(k)) return integer(k);
        std::string names;
        for (const char* k : keys) names += std::string(names.empty() ? "'" : " or '") + k + "'";
        fail("missing field " + names);
    }
    // A layer count: within limits::layers as soon as it is read, before anything sizes or loops over a per-layer
    // table with it (layer_types, mlp_only_layers, max_window_layers, moe_layer_freq's pattern): 2^31 - 1 layers
    // took 5-12 s and ~530 MB to be refused after those loops. check_bounds (transformer.cpp) checks the spec's
    // counts again; this is where a config's own are read.
    std::int64_t layers(const char* key) const { return layer_count(key, integer(key)); }
    std::int64_t layers(const char* key, std::int64_t fallback) const {
        return find(key) ? layer_count(key, integer(key)) : fallback;
    }
    std::int64_t layers_any(std::initializer_list<const char*> keys) const {
        for (const char* k : keys)
            if (find(k)) return layers(k);
        return integer_any(keys);  // fails naming them all
    }
    double number(const char* key, double fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_number()) fail(std::string("field '") + key + "' must be a number");
        double x = v->get<double>();
        if (!std::isfinite(x) || std::fabs(x) > double(limits::dimension))
            fail(std::string("field '") + key + "' is " + v->dump() + ", out of the range +-" +
                 std::to_string(limits::dimension));
        return x;
    }
    // Present and null: for the few fields whose null means something other than their default.
    bool null(const char* key) const {
        auto it = j_.find(key);
        return it != j_.end() && it->is_null();
    }
    const json& raw(const char* key) const { return *find(key); }

private:
    std::int64_t layer_count(const char* key, std::int64_t n) const {
        if (n > limits::layers)
            fail(std::string("field '") + key + "' is " + std::to_string(n) + ", over " + std::to_string(limits::layers) +
                 " (the limit on layers)");
        return n;
    }
    std::int64_t to_int(const char* key, const json& v) const {
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(limits::dimension))
            fail(std::string("field '") + key + "' is " + v.dump() + ", over the limit of " +
                 std::to_string(limits::dimension) + " on any dimension");
        if (v.is_number_integer()) {
            std::int64_t x = v.get<std::int64_t>();
            if (x < 0) fail(std::string("field '") + key + "' must not be negative");
            if (x > limits::dimension)
                fail(std::string("field '") + key + "' is " + std::to_string(x) + ", over the limit of " +
                     std::to_string(limits::dimension) + " on any dimension");
            return x;
        }
        fail(std::string("field '") + key + "' must be an integer, got " + v.dump());
    }
};

// The activation a config's hidden_act names, in the op catalogue's terms; an unknown one is an error.
std::string activation(const Config& c, const std::string& act);

// CLIP's and SigLIP's vision towers, from a *_vision_model config or the vision_config of a config that holds one.
TransformerSpec clip_vision_tower(const Config& c, bool siglip);

}  // namespace prenet::hf
