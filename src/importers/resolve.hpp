#pragma once
// Turns what the user gave (a zoo id, a Hugging Face config.json document, or a layers-JSON document) into a
// model at the requested sizes.
#include "graph/model.hpp"
#include "importers/zoo.hpp"

namespace prenet {

Model resolve_model(const json& model_argument, const ModelInputs& inputs);

}  // namespace prenet
