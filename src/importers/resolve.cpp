#include "importers/resolve.hpp"

#include "core/error.hpp"
#include "importers/diffusers.hpp"
#include "importers/hf_config.hpp"
#include "importers/keras_json.hpp"
#include "importers/layers_json.hpp"
#include "importers/onnx.hpp"
#include "importers/transformer.hpp"
#include "importers/vision_language.hpp"

namespace prenet {

Model resolve_model(const json& arg, const ModelInputs& inputs) {
    if (inputs.batch <= 0) throw Error("batch size must be positive");
    if (inputs.seq < 0 || inputs.image < 0) throw Error("sequence length and image size must be positive");
    if (arg.is_string()) return build_zoo_model(arg.get<std::string>(), inputs);
    if (looks_like_diffusers_config(arg)) return model_from_diffusers_config(arg, inputs);
    if (looks_like_hf_config(arg)) {
        std::string name = arg.contains("_name_or_path") && arg["_name_or_path"].is_string()
                               ? arg["_name_or_path"].get<std::string>()
                               : arg["model_type"].is_string() ? arg["model_type"].get<std::string>() : std::string("model");
        if (is_vision_language_config(arg)) return build_vision_language(vision_language_spec_from_hf_config(arg, name), inputs);
        return build_transformer(spec_from_hf_config(arg, name), inputs);
    }
    if (looks_like_keras_json(arg)) return model_from_keras_json(arg, inputs);
    if (looks_like_layers_json(arg)) return model_from_layers_json(arg, inputs);
    if (looks_like_onnx_document(arg)) return model_from_onnx_document(arg, inputs);
    throw Error("model must be a zoo id, a Hugging Face config.json (with 'model_type'), a diffusers config.json (with "
                "'_class_name': UNet2DConditionModel, SD3Transformer2DModel or FluxTransformer2DModel), a Keras model.to_json() "
                "document (class_name Sequential or Functional), a layers JSON document (with 'layers') or an "
                "ONNX file ({\"onnx_base64\": ...})");
}

}  // namespace prenet
