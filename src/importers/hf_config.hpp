#pragma once
// Hugging Face `config.json` import for model_type llama, mistral, mixtral, qwen2, gemma, gpt2, gpt_neox, opt,
// bloom, falcon, bert, roberta, t5, vit and switch_transformers. Missing or wrong fields are errors that name
// the field.
#include "graph/model.hpp"
#include "importers/transformer.hpp"

namespace prenet {

TransformerSpec spec_from_hf_config(const json& config, const std::string& name);
bool looks_like_hf_config(const json& document);

}  // namespace prenet
