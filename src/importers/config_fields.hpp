#pragma once
// What every importer of a JSON config document reads the same way (hf::Config for Hugging Face's config.json,
// diffusers::Reader for a diffusers config): a field that is null is an absent one (both libraries write null for
// an unset option), strings and booleans are checked for their type, and every error starts with where the config
// came from, so that it names the model type or class and the field at fault. Numbers differ between the two
// (a Hugging Face count may be 0, a diffusers size must be positive) and stay with each.
#include <string>
#include <utility>

#include "core/error.hpp"
#include "graph/model.hpp"

namespace prenet {

class ConfigFields {
public:
    // `where` begins each error: "config.json (model_type 'llama')", "diffusers config (UNet2DConditionModel)".
    ConfigFields(const json& j, std::string where) : j_(j), where_(std::move(where)) {}

    bool has(const char* key) const { return find(key) != nullptr; }
    std::string text(const char* key, const std::string& fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_string()) fail(std::string("field '") + key + "' must be a string");
        return v->get<std::string>();
    }
    bool boolean(const char* key, bool fallback) const {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) fail(std::string("field '") + key + "' must be true or false");
        return v->get<bool>();
    }
    [[noreturn]] void fail(const std::string& message) const { throw Error(where_ + ": " + message); }

protected:
    const json* find(const char* key) const {
        auto it = j_.find(key);
        return (it == j_.end() || it->is_null()) ? nullptr : &*it;
    }
    const json& j_;

private:
    std::string where_;
};

}  // namespace prenet
