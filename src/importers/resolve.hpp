#pragma once
// Turns what the user gave (a zoo id, a Hugging Face config.json document, a layers-JSON document, or an ONNX
// file as {"onnx_base64": ...}) into a model at the requested sizes.
#include "graph/model.hpp"
#include "importers/zoo.hpp"

namespace prenet {

Model resolve_model(const json& model_argument, const ModelInputs& inputs);

}  // namespace prenet
