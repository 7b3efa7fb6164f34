#pragma once
// Keras model JSON import: what `model.to_json()` writes (Keras 3, with "module", "registered_name" and
// "build_config", and Keras 2 / tf.keras), Sequential and Functional, also wrapped as in an HDF5 file's
// `model_config` or a TensorFlow.js layers model's `modelTopology`. Layers are channels-last as in Keras and are
// lowered to PreNeT's kinds (channels first), shapes checked as they go. A layer it does not model is not
// dropped silently: the model's `notes` say which, and what was assumed for its output (docs/importers.md).
#include "graph/model.hpp"
#include "importers/zoo.hpp"

namespace prenet {

bool looks_like_keras_json(const json& document);
Model model_from_keras_json(const json& document, const ModelInputs& inputs);

}  // namespace prenet
