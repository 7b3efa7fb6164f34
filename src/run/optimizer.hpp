#pragma once
// Optimizer update kernels, state sizes and scratch memory for SGD with momentum, Adam, AdamW, Adafactor and
// Lion, in two implementations (docs/training-model.md lists every pass and its bytes):
//   fused    one multi-tensor kernel reads each tensor once and writes it once (torch.optim fused=True; the
//            Triton kernel of lion-pytorch). Adafactor has no fused implementation (see single_tensor).
//   foreach  the torch.optim foreach sequence: a few multi-tensor ops, each a full pass over the parameters,
//            some of them allocating a parameter-sized intermediate.
//   single_tensor  the same passes run tensor by tensor (a for-loop over the parameters), so intermediates
//            are only one tensor's size: what "fused" means for Adafactor, which has no fused kernel.
// Master weights and optimizer states are fp32 in every precision mode.
#include <cstdint>
#include <string>
#include <vector>

#include "ops/features.hpp"
#include "ops/kernel.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

enum class OptimizerImpl { fused, foreach, single_tensor };

OptimizerImpl parse_optimizer_impl(const std::string& name);  // fused | foreach (what users choose); throws
const char* to_string(OptimizerImpl impl);

// One pass of a foreach implementation: full-size fp32 tensors read and written per parameter.
struct OptimizerPass {
    std::string op;
    double reads = 0, writes = 0, flops_per_param = 0;
};

struct OptimizerDef {
    std::string name;
    double state_bytes_per_param;  // fp32 optimizer states (momentum, variances); Adafactor: of its vectors
    double bytes_per_param;        // memory traffic of the fused update per parameter, fp32 gradients
    double flops_per_param;        // arithmetic of the fused update per parameter
    bool has_fused = true;         // false: "fused" runs the passes tensor by tensor (single_tensor)
    bool factored = false;         // Adafactor: matrices keep row and column statistics only
    std::vector<OptimizerPass> foreach_passes;
    double foreach_scratch_tensors = 0;  // parameter-sized fp32 intermediates a foreach step allocates
};

const std::vector<OptimizerDef>& optimizer_catalogue();
const OptimizerDef& find_optimizer(const std::string& name);  // sgd | adam | adamw | adafactor | lion; throws
OptimizerImpl effective_impl(const OptimizerDef& opt, OptimizerImpl requested);

// The kernels of one optimizer step over `params` parameters (the fp16 unscale pass is separate:
// loss_scaling_kernels). The Precision forms use that precision's default recipe (autocast for fp16/bf16).
std::vector<Kernel> optimizer_kernels(const OptimizerDef& opt, std::int64_t params, const PrecisionRecipe& recipe,
                                      OptimizerImpl impl = OptimizerImpl::fused);
std::vector<Kernel> optimizer_kernels(const OptimizerDef& opt, std::int64_t params, Precision precision,
                                      OptimizerImpl impl = OptimizerImpl::fused);

// Optimizer state bytes for a model. Adafactor keeps 4 bytes per parameter of norm layers (vectors) and, for
// every other layer, one fp32 row and column statistic per matrix, approximated as one square matrix per
// layer: 4 x 2 x sqrt(params) bytes.
double optimizer_state_bytes(const OptimizerDef& opt, const ModelFeatures& features);
// Transient memory the optimizer step allocates: foreach intermediates, and in mixed precision the fp32
// copy of the gradients the foreach ops read; tensor by tensor, only the largest layer's share of those.
// Zero for fused kernels.
double optimizer_scratch_bytes(const OptimizerDef& opt, const ModelFeatures& features, const PrecisionRecipe& recipe,
                               OptimizerImpl impl);
double optimizer_scratch_bytes(const OptimizerDef& opt, const ModelFeatures& features, Precision precision,
                               OptimizerImpl impl);

}  // namespace prenet
