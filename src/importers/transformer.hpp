#pragma once
// One description for every transformer family we import (decoder LMs, BERT-style encoders, T5-style
// encoder-decoders, ViT, MoE and MLA variants): the zoo and the Hugging Face importer both fill it in,
// and one builder lowers it to layers.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "importers/zoo.hpp"

namespace prenet {

// A state-space token mixer (importers/state_space.cpp builds the stacks that hold one): Mamba-1's selective scan
// (version 1) or Mamba-2's SSD (version 2), over d_inner channels.
struct SsmSpec {
    std::int64_t version = 0;  // 0: none
    std::int64_t d_inner = 0, d_state = 0, d_conv = 4;
    std::int64_t dt_rank = 0;                             // Mamba-1: the step size's low-rank projection
    std::int64_t head_dim = 64, groups = 1, chunk = 256;  // Mamba-2
    bool conv_bias = true, bias = false;
    bool gated_norm = true;             // Mamba-2: RMS norm of y * silu(z) before out_proj (d_inner weights)
    std::string inner_norms = "none";   // Mamba-1: norms of dt, B, C (none | weighted: Jamba | unweighted: Falcon-Mamba)
};

// One layer of a state-space or hybrid stack: its token mixer(s) and its feed-forward. Attention and SSM both:
// Falcon-H1's parallel mixers, reading the same normed input.
struct HybridLayer {
    bool attention = false, ssm = false;
    std::string ffn = "none";        // none | mlp | moe
    std::int64_t shared_block = -1;  // Zamba2: the shared transformer block run before this layer (-1: none)
    bool operator==(const HybridLayer& o) const {
        return attention == o.attention && ssm == o.ssm && ffn == o.ffn && shared_block == o.shared_block;
    }
};

struct TransformerSpec {
    std::string name;
    std::string arch = "decoder";  // decoder | encoder | encoder_decoder | vit | whisper
    std::int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;
    std::string activation = "gelu";  // gelu | gelu_tanh | relu | silu
    bool gated = false;                // SwiGLU / GeGLU
    std::string norm = "layernorm";    // layernorm | rmsnorm
    bool norm_bias = true;
    bool post_norm = false;            // BERT: norm after the residual add
    bool attention_bias = true, attention_out_bias = true, mlp_bias = true;
    bool separate_qkv = false;         // query, key, value as three linears (HF BERT, LLaMA, OPT, T5, ViT)
    std::string position = "learned";  // learned | rotary | alibi | relative | none
    std::int64_t max_positions = 0;    // rows of the learned position table (incl. any offset)
    std::int64_t type_vocab = 0;       // token-type (segment) embeddings, BERT
    bool embedding_norm = false;       // BLOOM, BERT
    bool parallel_block = false;       // attention and MLP read the same input (GPT-J, NeoX, Falcon, PaLM)
    bool parallel_two_norms = false;   // Falcon-40B: separate norms for the two parallel branches
    bool tied_embeddings = true;
    bool final_norm = true;
    bool pooler = false;               // BERT's pooler (dense + tanh on the first token)
    bool mlm_head = false;             // BERT's masked-LM head (dense, gelu, norm, tied decoder)
    bool nsp_head = false;             // BERT's next-sentence head (2 classes on the pooled output)
    double dropout = 0.0;
    std::int64_t word_embed_proj_dim = 0;  // OPT-350m: embeddings narrower than the hidden size
    // Mixture of experts: layers i with i >= moe_first_dense and (i - moe_first_dense) % moe_every == moe_every-1.
    std::int64_t experts = 0, top_k = 0, moe_intermediate = 0, moe_every = 1, moe_first_dense = 0;
    std::int64_t shared_experts = 0, shared_intermediate = 0;
    // Group-limited routing (DeepSeek-V2/V3: n_group, topk_group): the experts in expert_groups equal groups, a
    // token's top_k among at most groups_per_token of them; 0 = unlimited.
    std::int64_t expert_groups = 0, groups_per_token = 0;
    double capacity_factor = 1.0;
    bool router_bias = false;
    // Multi-head latent attention (DeepSeek).
    bool mla = false;
    std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
    // Encoder-decoder (T5, Switch).
    std::int64_t decoder_layers = 0, relative_buckets = 32;
    // ViT.
    std::int64_t image = 224, patch = 16, channels = 3, classes = 1000;
    // Attention variants: QK-norm (Qwen3, Gemma 3), no key bias (Whisper), norms after each sublayer as well as
    // before (Gemma 2/3), sliding windows: every layer (window_pattern 0) or all but every window_pattern-th
    // (Gemma 2: 2, Gemma 3: 6), or per layer from local_layers when it is not empty; logit soft-capping.
    bool qk_norm = false, key_bias = true, sandwich_norm = false;
    std::int64_t sliding_window = 0, window_pattern = 0;
    std::vector<bool> local_layers;
    // Llama 4's interleaved attention: the local layers attend within fixed chunks of sliding_window tokens (not a
    // band; 0: no chunks), with rotary positions and, with qk_norm, its QK-norm; the global layers have no positions
    // (NoPE).
    bool chunked_local_rope = false;
    std::string qk_norm_weights = "head";  // head (Qwen3, Gemma 3) | projection (OLMo 2) | none (Llama 4's L2 norm)
    bool output_norm_only = false;         // OLMo 2: each sublayer's output normed before the residual add, no input norm
    double attn_softcap = 0, final_softcap = 0;
    bool shared_gate = false;          // Qwen2-MoE's sigmoid gate on the shared expert
    std::vector<bool> dense_layers;    // per layer: a dense MLP where the MoE rule would put experts (mlp_only_layers)
    // Whisper: log-mel frames through two convolutions (the second halves them) into the encoder.
    std::int64_t mel_bins = 0, encoder_positions = 0;
    // Vision towers (CLIP, SigLIP) on top of ViT: patch conv bias, a norm before the encoder, a class token, the
    // final norm on the pooled token only, and the head: classifier (ViT), none (CLIP's pooled output), map
    // (SigLIP's attention-pooling head) or tokens (a vision-language model's tower: the patch tokens, without the
    // class token, go on to its projector). final_norm on a tower: SigLIP's post_layernorm over every token.
    bool patch_bias = true, pre_norm = false, class_token = true, pooled_norm = false;
    std::string vision_head = "classifier";
    // The precision the checkpoint is stored in (torch_dtype): fp32, fp16 or bf16; empty if it names none.
    std::string dtype;
    std::vector<std::string> notes;  // what the import left out (a CLIP config's text tower), kept on the Model
    bool flash = false;
    // The attention kernel the config names (Hugging Face attn_implementation, llm-foundry attn_impl): true for a
    // fused kernel, false for eager; none if it names none. It wins over the default, not over an explicit ask.
    std::optional<bool> config_flash;
    // The generation of that fused kernel (AttentionShape::generation): llm-foundry's attn_impl triton is 1.
    int flash_generation = 2;
    std::optional<int> config_flash_generation;
    std::int64_t default_seq = 1024;
    // State-space and hybrid models (arch "state_space"): the mixer and, per layer, what it holds. Zamba2's shared
    // transformer blocks: `shared_blocks` blocks whose attention reads the hidden states concatenated with the
    // embeddings (2 hidden wide), each invocation with its own LoRA adapter of `shared_adapter_rank` on the MLP's
    // gate and up projections (and on q, k, v with shared_attention_adapter), then a hidden x hidden linear.
    SsmSpec ssm;
    std::vector<HybridLayer> hybrid_layers;
    std::int64_t shared_blocks = 0, shared_adapter_rank = 0;
    bool shared_attention_adapter = false;
};

// Lowers the spec to a model at the given batch and sequence length (or image size for ViT).
Model build_transformer(const TransformerSpec& spec, const ModelInputs& inputs);

class ModelBuilder;

// The builder's pieces, for the stacks built of them elsewhere (importers/state_space.cpp): one description of
// a norm, an attention layer, a feed-forward (dense or mixture of experts), the embeddings and the LM head.
namespace transformer_parts {
// Every count of the spec within the limits (core/limits.hpp); throws Error naming the field.
void check_bounds(const TransformerSpec& s);
// `extra`: attributes added to the layer's own (a shared layer's shares_weights, an attention's out_features).
void add_norm(ModelBuilder& b, const TransformerSpec& s, const std::string& name, const json& extra = json::object());
// Attention as the spec describes it (its heads, key/value heads, head_dim, biases, positions, flash kernel).
void add_attention(ModelBuilder& b, const TransformerSpec& s, bool causal, const std::string& name,
                   const json& extra = json::object());
void add_ffn(ModelBuilder& b, const TransformerSpec& s, bool moe, const json& extra = json::object());
void add_embeddings(ModelBuilder& b, const TransformerSpec& s, bool tied_table, const std::string& prefix);
void add_lm_head(ModelBuilder& b, const TransformerSpec& s);
}  // namespace transformer_parts

}  // namespace prenet
