#pragma once
// What each fuzz target does with one input, shared by the libFuzzer targets (fuzz/<target>_fuzz.cpp, which skip
// the known classes of known_limits.hpp first) and the regression test (tests/fuzz-regressions-test.cpp, which
// feeds every file of tests/fixtures/fuzz/<target>/ to the same function, unfiltered). Bad input must end as a
// prenet::Error (or, for the API, an error reply); anything else (a crash, a sanitizer report, another exception)
// is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/api.hpp"
#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "importers/hf_config.hpp"
#include "importers/keras_json.hpp"
#include "importers/layers_json.hpp"
#include "importers/onnx.hpp"
#include "importers/transformer.hpp"
#include "importers/vision_language.hpp"
#include "ops/features.hpp"

namespace prenet::fuzz {

// The layers-JSON importer (importers/layers_json.hpp).
inline void layers_json(const nlohmann::json& document) {
    try {
        (void)looks_like_layers_json(document);
        (void)model_from_layers_json(document, ModelInputs{});
    } catch (const Error&) {
    }
}

// The Hugging Face config.json importer (importers/hf_config.hpp), then the transformer builder on what it accepted.
inline void hf_config(const nlohmann::json& config) {
    try {
        (void)looks_like_hf_config(config);
        ModelInputs inputs;
        inputs.seq = 128;
        inputs.image = 64;
        if (is_vision_language_config(config)) {
            // Its own image size (64 px fits none of them) and a sequence long enough for the image tokens.
            inputs.image = 0, inputs.seq = 8192;
            (void)build_vision_language(vision_language_spec_from_hf_config(config, "fuzz"), inputs);
            return;
        }
        TransformerSpec spec = spec_from_hf_config(config, "fuzz");
        (void)build_transformer(spec, inputs);
    } catch (const Error&) {
    }
}

// The Keras model.to_json() importer (importers/keras_json.hpp), at a fixed sequence length and image size for
// documents that leave those open.
inline void keras_json(const nlohmann::json& document) {
    try {
        (void)looks_like_keras_json(document);
        ModelInputs inputs;
        inputs.seq = 64;
        inputs.image = 32;
        (void)model_from_keras_json(document, inputs);
    } catch (const Error&) {
    }
}

// The accelerator spec-sheet parser (hardware/spec.hpp) and the figures derived from a sheet.
inline void hardware_spec(const nlohmann::json& sheet) {
    try {
        HardwareSpec spec = parse_hardware(sheet, "fuzz");
        for (auto p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8})
            (void)spec.matmul_flops(p);
        (void)spec.clock_mhz();
        (void)spec.vector_flops();
        (void)spec.bandwidth_bytes_per_s();
        (void)spec.memory_bytes();
        (void)spec.price_per_hour();
        (void)to_json(spec).dump();
    } catch (const Error&) {
    }
}

// The ONNX importer (importers/onnx.hpp) on any bytes, then the features of the model it built (every layer's
// cost, on shapes and attributes the importer derived from the file).
inline void onnx(const std::string& bytes) {
    try {
        ModelInputs inputs;
        inputs.batch = 2;
        inputs.seq = 16;
        inputs.image = 32;
        Model model = model_from_onnx(bytes, "fuzz", inputs);
        // Written as a reply writes them: a name that is not UTF-8 made nlohmann's dump throw (issue 27).
        (void)to_json(compute_features(model, Precision::bf16)).dump();
        for (const auto& [op, count] : model.unknown_ops) (void)nlohmann::json(op).dump();
    } catch (const Error& e) {
        (void)nlohmann::json(e.what()).dump();
    }
}

// The API's request entry point (api/api.hpp), which the CLI and the wasm module share: any text in, never a
// throw, always a JSON reply. Returns false if the reply is not JSON.
inline bool api_request(const std::string& text) {
    std::string reply = handle_request_text(text);
    return !nlohmann::json::parse(reply, nullptr, false).is_discarded();
}

}  // namespace prenet::fuzz
