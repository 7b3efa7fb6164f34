#pragma once
// Hugging Face `config.json` import for model_type llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe,
// gemma, gemma2, gemma3 (its text model) and gemma3_text, phi3, deepseek_v2, deepseek_v3, gpt2, gpt_bigcode,
// gpt_neox, opt, bloom, falcon, mpt, bert, roberta, t5, switch_transformers, whisper, vit, llama4, olmo2, the vision
// towers of clip and siglip (and their *_vision_model configs), and the state-space and hybrid types mamba, mamba2,
// falcon_mamba, jamba, zamba2, falcon_h1 and bamba (importers/state_space.hpp); vision-language configs (llava,
// qwen2_vl, ...) are importers/vision_language.hpp's. Missing or wrong fields are errors that name the field.
#include "graph/model.hpp"
#include "importers/transformer.hpp"

namespace prenet {

TransformerSpec spec_from_hf_config(const json& config, const std::string& name);
bool looks_like_hf_config(const json& document);
// The precision a config's torch_dtype (or transformers 5's dtype) names: "bf16", "fp16", "fp32", or "" for none
// or "auto". An unknown dtype is an error.
std::string document_dtype(const json& config);

}  // namespace prenet
