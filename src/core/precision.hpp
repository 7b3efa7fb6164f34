#pragma once
// Training precisions and the byte sizes they imply. "tf32" keeps fp32 storage and runs matmuls on TF32
// tensor cores; "fp8" runs matmuls on fp8 inputs and keeps bf16 everywhere else (the usual FP8 recipe).
#include <string>

namespace prenet {

enum class Precision { fp32, tf32, fp16, bf16, fp8 };

Precision parse_precision(const std::string& name);
const char* to_string(Precision p);

// How fp16/bf16 mixed precision keeps its tensors (docs/training-model.md):
//   autocast    PyTorch AMP (torch.autocast + GradScaler, what Hugging Face's Trainer, Lightning's "16-mixed" and
//               most single-GPU recipes run): fp32 weights and gradients; matmuls and convolutions cast their
//               inputs and weights to half precision; norms, softmax, losses and embeddings run in fp32.
//   half_model  Megatron / DeepSpeed: a half-precision model (weights, activations, gradients) beside an fp32
//               master copy of the weights that the optimizer updates.
// fp8 always runs as a bf16 model with fp32 master weights (Transformer Engine with Megatron).
enum class MixedRecipe { autocast, half_model };

MixedRecipe parse_mixed_recipe(const std::string& name);  // "autocast" | "half"
const char* to_string(MixedRecipe r);
// Whether torch.autocast is at work: fp16 or bf16 with the autocast recipe.
bool runs_autocast(Precision p, MixedRecipe r);

// Bytes of one stored value in fp32 (tf32 is a matmul mode of fp32 data) and in half precision (fp16, bf16;
// fp8 training stores bf16 outside the matmuls' transient casts).
inline constexpr double fp32_bytes = 4.0;
inline constexpr double half_bytes = 2.0;

// Bytes of one activation / gradient element outside matmul inputs.
// The type element-wise kernels run in: fp8 training keeps bf16 everywhere but the matmuls, and TF32 is a matmul
// mode of fp32 data.
Precision vector_precision(Precision p);
double activation_bytes(Precision p);
// Bytes of one matmul/conv input element as the kernel reads it.
double matmul_input_bytes(Precision p);
// Bytes of one stored weight as the forward pass reads it (fp32 master weights are counted by the optimizer).
double weight_bytes(Precision p);

}  // namespace prenet
