#pragma once
// Fine-tuning (docs/training-model.md, "Fine-tuning"): which parameters a step trains and what that changes in
// the kernels a layer runs and in what it stores.
//   full    every parameter trains: the same step as pre-training.
//   freeze  the parts `--freeze` names (embeddings, head, or copies of a stack: layers:0-11) keep their weights:
//           they run forward and input-gradient backward, but no weight-gradient kernels.
//   lora    PEFT's LoRA: the whole base is frozen and every selected projection (lora_target_names) gets
//           two trainable factors A (rank x in) and B (out x rank); the output is W x + (alpha / rank) B A x.
//   qlora   LoRA over a base whose projections bitsandbytes stores in 4-bit NF4 with double quantisation: each
//           matmul first dequantises its weight to the compute precision (forward and input gradient).
// Layers before the first one with anything to train run no backward at all (autograd records nothing there).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "ops/catalogue.hpp"
#include "ops/kernel.hpp"

namespace prenet {

enum class FineTuneMode { none, full, lora, qlora, freeze };
enum class Quantization { none, int8, nf4 };

FineTuneMode parse_finetune_mode(const std::string& name);  // none | full | lora | qlora | freeze; throws
const char* to_string(FineTuneMode mode);
Quantization parse_quantization(const std::string& name);  // none | int8 | nf4; throws
const char* to_string(Quantization q);

// One part `--freeze` names: "embeddings", "head" (the layers after the last block), or a stack of repeated
// blocks ("layers", "encoder", "decoder") with an optional range of its copies (first..last, inclusive).
struct FreezeRule {
    std::string part;
    std::int64_t first = -1, last = -1;  // -1: every copy
};

struct FineTune {
    FineTuneMode mode = FineTuneMode::none;
    std::int64_t rank = 8;   // PEFT's LoraConfig defaults (r, lora_alpha, lora_dropout); the option table's too
    double alpha = 8;        // scaling alpha / rank: changes neither time nor memory
    double dropout = 0;      // > 0: each adapter's input is a dropped-out copy (kept, with its mask)
    std::vector<std::string> targets = {"q", "v"};  // PEFT's default for Llama, Mistral and Qwen2: q_proj, v_proj
    std::vector<FreezeRule> freeze;
    Quantization quantization = Quantization::none;  // of the frozen base's projections (lora / qlora only)

    bool adapters() const { return mode == FineTuneMode::lora || mode == FineTuneMode::qlora; }
    // Whether any base parameter stays frozen (and the layer-by-layer rules apply).
    bool freezes() const { return adapters() || mode == FineTuneMode::freeze; }
};

// The rank memory advice proposes for (Q)LoRA when the request trains no adapters yet, a common choice in
// fine-tuning recipes (a request with adapters keeps its own).
inline constexpr std::int64_t advised_lora_rank = 16;

// PEFT's module names, shortened: q, k, v, o of attention, gate, up, down of MLPs (q_proj, ..., down_proj), in,
// x, dt, out of Mamba mixers (in_proj, x_proj, dt_proj, out_proj).
const std::vector<std::string>& lora_target_names();
// The same, grouped for a message or a help text: "q, k, v, o (attention), gate, up, down (MLPs), ...".
std::string lora_target_list_text();
// "all" or a comma-separated list of those (PEFT's q_proj spelling accepted); errors name field lora_targets.
std::vector<std::string> parse_lora_targets(const std::string& text);
std::string targets_text(const std::vector<std::string>& targets);  // "all", or the list in canonical order
// "embeddings,layers:0-11,..."; errors name field freeze.
std::vector<FreezeRule> parse_freeze(const std::string& text);
std::string freeze_text(const std::vector<FreezeRule>& rules);
// Whether a module of `target` (a LinearModule's) gets an adapter: a fused qkv module when any of q, k, v is
// selected, MLA's key/value bottleneck (kv) when k or v is.
bool selects_target(const std::vector<std::string>& targets, const std::string& target);

// Stored bytes of one quantised weight tensor of `elements` values and `rows` output rows:
//   nf4   bitsandbytes' 4-bit NormalFloat with double quantisation (QLoRA, Dettmers et al. 2023, sec. 3): 4 bits
//         per value, an 8-bit absmax per block of 64 values, an fp32 constant per 256 of those absmaxes:
//         0.5 + 1/64 + 4/(64 x 256) bytes per value (4.127 bits);
//   int8  LLM.int8(): one byte per value and an fp32 scale per output row.
double quantized_bytes(Quantization q, double elements, double rows);

// The model with every repeated block split where frozen and trainable copies meet ("layers.0-31" x 32 with
// layers:0-11 frozen becomes "layers.0-11" x 12 and "layers.12-31" x 20), and for each of its blocks' layers
// whether its own parameters are frozen. A rule that matches nothing is an error naming field freeze.
// Without freezing (ft.freezes() false) the model is not copied: `split` stays empty and model() is the one given.
struct FineTuneLayout {
    const Model* given = nullptr;
    std::optional<Model> split;
    std::vector<std::vector<bool>> frozen;  // [block][layer]
    const Model& model() const { return split ? *split : *given; }
};
FineTuneLayout layout_for_finetune(const Model& model, const FineTune& ft);

// What the frozen base's quantisation stores and adds.
struct QuantizedBase {
    double params = 0, bytes = 0;  // quantised weights and their stored bytes (scales included)
    double largest_buffer = 0;     // the largest weight dequantised at once (bytes at the compute precision)
};
// Inserts a dequantisation kernel before each weight GEMM (forward) and its input-gradient GEMM (memory-bound:
// reads the stored bytes, writes the weight at `p`). Call before drop_weight_gradients.
QuantizedBase quantize_weights(LayerCost& cost, Quantization q, Precision p);
// A frozen layer: every weight-gradient kernel (GEMM dW, bias, norm and embedding gradients, autocast's cast of
// a weight gradient) goes, and with it its weight-gradient FLOPs.
void drop_weight_gradients(LayerCost& cost);
// A layer before anything trainable: only its forward kernels run, and it keeps nothing for a backward.
void drop_backward(LayerCost& cost);
// LoRA adapters on the layer's selected projections, at the layer's precision `p`: per module the dropout (when
// > 0), x A^T and (x A^T) B^T with both gradients, the scaling and the add into the base output, and the sum of
// the two gradients of x. Returns the adapters' parameters (one execution of the layer). Errors name lora_rank.
std::int64_t add_lora(LayerCost& cost, const Layer& layer, Precision p, const FineTune& ft);

}  // namespace prenet
