// State-space and hybrid models of the zoo, described by their Hugging Face configs' fields and read by the same
// importer as a config.json (importers/hf_state_space.cpp), so the zoo and an uploaded config cannot disagree.
#include "importers/hf_config.hpp"
#include "importers/state_space.hpp"
#include "importers/zoo.hpp"

namespace prenet {
namespace {

ZooEntry entry(const std::string& id, const json& config, std::string description) {
    TransformerSpec spec = spec_from_hf_config(config, id);
    spec.default_seq = 2048;
    ZooEntry e;
    e.id = id;
    e.domain = "language";
    e.description = std::move(description);
    e.default_seq = spec.default_seq;
    e.build = [spec](const ModelInputs& in) { return build_transformer(spec, in); };
    return e;
}

}  // namespace

std::vector<ZooEntry> state_space_zoo() {
    return {
        entry("mamba-2.8b",
              {{"model_type", "mamba"}, {"hidden_size", 2560}, {"num_hidden_layers", 64}, {"intermediate_size", 5120},
               {"state_size", 16}, {"time_step_rank", 160}, {"conv_kernel", 4}, {"vocab_size", 50280}},
              "Mamba 2.8B, selective state-space model, 64 layers (Gu & Dao 2023; state-spaces/mamba-2.8b-hf)"),
        entry("mamba2-2.7b",
              {{"model_type", "mamba2"}, {"hidden_size", 2560}, {"num_hidden_layers", 64}, {"expand", 2},
               {"num_heads", 80}, {"head_dim", 64}, {"state_size", 128}, {"n_groups", 1}, {"chunk_size", 256},
               {"vocab_size", 50288}, {"tie_word_embeddings", true}},
              "Mamba-2 2.7B, SSD state-space model, 64 layers (Dao & Gu 2024; state-spaces/mamba2-2.7b)"),
        entry("jamba-v0.1",
              {{"model_type", "jamba"}, {"hidden_size", 4096}, {"num_hidden_layers", 32}, {"num_attention_heads", 32},
               {"num_key_value_heads", 8}, {"intermediate_size", 14336}, {"vocab_size", 65536}, {"num_experts", 16},
               {"num_experts_per_tok", 2}, {"attn_layer_period", 8}, {"attn_layer_offset", 4},
               {"expert_layer_period", 2}, {"expert_layer_offset", 1}, {"mamba_d_state", 16}, {"mamba_dt_rank", 256},
               {"tie_word_embeddings", false}},
              "Jamba v0.1, 52B hybrid Mamba-attention mixture of experts (AI21 Labs 2024; ai21labs/Jamba-v0.1)"),
    };
}

}  // namespace prenet
