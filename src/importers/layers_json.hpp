#pragma once
// The layers-JSON format: any network described layer by layer (schema: schemas/layers.schema.json,
// prose: docs/layers-json.md).
#include "graph/model.hpp"
#include "importers/zoo.hpp"

namespace prenet {

bool looks_like_layers_json(const json& document);
Model model_from_layers_json(const json& document, const ModelInputs& inputs);

}  // namespace prenet
