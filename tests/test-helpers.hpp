#pragma once
// Small fixtures several test files share.
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "importers/resolve.hpp"
#include "ops/catalogue.hpp"
#include "ops/features.hpp"
#include "predict/op_rows.hpp"
#include "run/memory.hpp"

namespace prenet::testing {

// The field an Error names, or "" when `f` does not throw one.
template <class F>
std::string error_field(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.field();
    }
    return "";
}

// A JSON file of the repository (a fixture, an example), by its path from the repository's root.
inline nlohmann::json source_json(const std::string& relative) {
    std::ifstream in(std::string(PRENET_SOURCE_DIR "/") + relative);
    if (!in) throw std::runtime_error("cannot open " + relative);
    return nlohmann::json::parse(in);
}

// The message of the prenet::Error that importing the model document `doc` throws ("" if none).
inline std::string import_error(const nlohmann::json& doc, ModelInputs inputs = {1, 0, 0}) {
    try {
        resolve_model(doc, inputs);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

// A model that is nothing but its parameter count: for the per-parameter memory and optimizer formulas.
inline ModelFeatures params_only(std::int64_t params) {
    ModelFeatures f;
    f.params = f.trainable_params = params;
    return f;
}

// A small model: an input linear, a block of (linear, relu) repeated 3 times, a head and a loss.
inline Model small_model() {
    ModelBuilder b("small", {16, 128}, infer_shape);
    b.add("linear", "in", {{"out_features", 256}});
    b.begin_block("blocks", 3);
    b.add("linear", "fc", {{"out_features", 256}});
    b.add("activation", "act", {{"function", "relu"}});
    b.end_block();
    b.add("linear", "head", {{"out_features", 10}});
    b.add("cross_entropy", "loss");
    return b.finish("custom", 0);
}

// A square convolution row as NeuSight's tables give it: batch 32 on 56x56, "same" padding, stride 1.
inline Kernel conv_row(std::int64_t in, std::int64_t out, std::int64_t kernel, Precision p) {
    return kernel_from_row("conv", {{"b", 32}, {"in_channels", in}, {"out_channels", out}, {"kernel_size", kernel},
                                    {"input_size", 56}, {"stride", 1}, {"padding", kernel / 2}},
                           p);
}

// Memory options for a precision and optimizer (no reserve, no accumulation).
inline MemoryOptions memory_options(Precision p, const char* optimizer, OptimizerImpl impl = OptimizerImpl::fused,
                      MixedRecipe mixed = MixedRecipe::autocast) {
    MemoryOptions o;
    o.precision = p;
    o.mixed = mixed;
    o.optimizer = &find_optimizer(optimizer);
    o.optimizer_impl = impl;
    return o;
}

// A zoo model (importers/resolve.hpp) built at `batch` samples of `seq` tokens.
inline Model zoo_model(const std::string& id, std::int64_t batch, std::int64_t seq) {
    ModelInputs in;
    in.batch = batch;
    in.seq = seq;
    return resolve_model(id, in);
}

inline double model_states(const MemoryUse& m) { return m.weights + m.gradients + m.optimizer_states; }

// An input layer, 6 copies of a (layernorm, linear, gelu, linear, residual) block and a head.
inline Model blocks_model(std::int64_t batch) {
    ModelBuilder b("blocks", {batch, 64, 256}, infer_shape);
    b.add("linear", "in", {{"out_features", 256}});
    b.begin_block("layers", 6);
    b.add("layernorm", "ln");
    b.add("linear", "up", {{"out_features", 1024}});
    b.add("activation", "act", {{"function", "gelu"}});
    b.add("linear", "down", {{"out_features", 256}});
    b.add("residual_add", "res");
    b.end_block();
    b.add("linear", "head", {{"out_features", 10}});
    return b.finish("custom", 64);
}

}  // namespace prenet::testing
