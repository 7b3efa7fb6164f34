#pragma once
// State-space and hybrid language models: pure Mamba and Mamba-2 stacks and the hybrids that interleave their
// mixers with attention and mixtures of experts (Jamba, Zamba2, Falcon-H1, Bamba). A Hugging Face config of
// these types is read into a TransformerSpec with arch "state_space" (importers/hf_state_space.cpp), which
// build_transformer hands to build_state_space.
#include <string>

#include "importers/transformer.hpp"

namespace prenet {

namespace hf {
class Config;
}

// Lowers a spec with arch "state_space" to a model: embeddings, the layers of spec.hybrid_layers (runs of
// identical layers, or of an identical repeating pattern, stored once as repeated blocks), the LM head.
Model build_state_space(const TransformerSpec& spec, const ModelInputs& inputs);

// Reads a config of Hugging Face model type mamba, mamba2, falcon_mamba, jamba, zamba2, falcon_h1 or bamba
// (spec_from_hf_config dispatches them here); missing or wrong fields are errors that name the field.
TransformerSpec state_space_spec_from_hf(const hf::Config& config, const std::string& type);

}  // namespace prenet
