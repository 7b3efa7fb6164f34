#include "run/optimizer.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace prenet {

OptimizerImpl parse_optimizer_impl(const std::string& name) {
    if (name == "fused") return OptimizerImpl::fused;
    if (name == "foreach") return OptimizerImpl::foreach;
    throw Error("unknown optimizer implementation '" + name + "' (expected fused or foreach)");
}

const char* to_string(OptimizerImpl impl) {
    switch (impl) {
        case OptimizerImpl::fused: return "fused";
        case OptimizerImpl::foreach: return "foreach";
        case OptimizerImpl::single_tensor: return "single_tensor";
    }
    return "fused";
}

namespace {

// torch.optim's _multi_tensor_adam; AdamW runs the same passes after its decoupled weight decay.
const std::vector<OptimizerPass> kAdamPasses = {{"exp_avg_lerp", 2, 1, 3},       {"exp_avg_sq_scale", 1, 1, 1},
                                                {"exp_avg_sq_addcmul", 2, 1, 3}, {"sqrt", 1, 1, 1},
                                                {"bias_correction_div", 1, 1, 1}, {"eps_add", 1, 1, 1},
                                                {"param_addcdiv", 3, 1, 3}};

std::vector<OptimizerPass> after_weight_decay(std::vector<OptimizerPass> passes) {
    passes.insert(passes.begin(), {"weight_decay_scale", 1, 1, 1});
    return passes;
}

}  // namespace

const std::vector<OptimizerDef>& optimizer_catalogue() {
    // Fused traffic per parameter with fp32 gradients: read gradient, weight and states, write weight and
    // states. SGD with momentum: 5 x 4 bytes; Adam/AdamW: 7 x 4 bytes; Lion (one momentum): 5 x 4 bytes.
    // Foreach passes follow torch.optim's _multi_tensor_* functions (PyTorch 2.x, default hyper-parameters:
    // SGD and Adam without weight decay, AdamW with it) and lion-pytorch's foreach step.
    static const std::vector<OptimizerDef> defs = {
        {"sgd", 4.0, 20.0, 3.0, true, false,
         {{"momentum_scale", 1, 1, 1}, {"momentum_add_grad", 2, 1, 2}, {"param_add", 2, 1, 2}},
         0.0},
        {"adam", 8.0, 28.0, 12.0, true, false, kAdamPasses, 1.0},
        {"adamw", 8.0, 28.0, 13.0, true, false, after_weight_decay(kAdamPasses), 1.0},
        // torch.optim.Adafactor (no momentum, weight decay 0): per matrix the row and column norms of the
        // gradient, the outer product of the factors materialised as a full-size variance estimate, its
        // rsqrt times the gradient, the update's norm, the scale and the parameter update.
        {"adafactor", 4.0, 0.0, 0.0, false, true,
         {{"param_norm", 1, 0, 2},
          {"grad_row_norm", 1, 0, 2},
          {"grad_col_norm", 1, 0, 2},
          {"variance_outer", 0, 1, 1},
          {"variance_div", 1, 1, 1},
          {"variance_clamp", 1, 1, 1},
          {"variance_rsqrt", 1, 1, 2},
          {"update_mul_grad", 2, 1, 1},
          {"update_norm", 1, 0, 2},
          {"update_scale", 1, 1, 1},
          {"param_add", 2, 1, 1}},
         1.0},
        {"lion", 4.0, 20.0, 11.0, true, false,
         {{"weight_decay_scale", 1, 1, 1},
          {"update_clone", 1, 1, 0},
          {"update_lerp", 2, 1, 3},
          {"update_sign", 1, 1, 1},
          {"param_add", 2, 1, 2},
          {"exp_avg_lerp", 2, 1, 3}},
         1.0},
    };
    return defs;
}

const OptimizerDef& find_optimizer(const std::string& name) {
    for (const auto& d : optimizer_catalogue())
        if (d.name == name) return d;
    throw Error("unknown optimizer '" + name + "' (expected sgd, adam, adamw, adafactor or lion)");
}

OptimizerImpl effective_impl(const OptimizerDef& opt, OptimizerImpl requested) {
    if (requested == OptimizerImpl::fused && !opt.has_fused) return OptimizerImpl::single_tensor;
    return requested;
}

namespace {

// Master weights and states stay fp32 in every mode.
Kernel optimizer_kernel(const std::string& op, std::int64_t params, double bytes_per_param, double flops_per_param) {
    double n = double(params);
    return streaming_kernel(Family::optimizer, Phase::optimizer, op, Precision::fp32, n, flops_per_param * n,
                            bytes_per_param * n);
}

}  // namespace

std::vector<Kernel> optimizer_kernels(const OptimizerDef& opt, std::int64_t params, Precision precision,
                                      OptimizerImpl impl) {
    return optimizer_kernels(opt, params, precision_recipe(precision), impl);
}

std::vector<Kernel> optimizer_kernels(const OptimizerDef& opt, std::int64_t params, const PrecisionRecipe& recipe,
                                      OptimizerImpl impl) {
    if (params <= 0) return {};
    std::vector<Kernel> out;
    if (effective_impl(opt, impl) == OptimizerImpl::fused) {
        // A half-precision model reads a half-precision gradient (2 bytes less than fp32) and also writes the
        // half-precision weight copy (2 bytes more): the same total as with fp32 gradients.
        double bytes =
            opt.bytes_per_param - 4.0 + recipe.gradient_bytes + (recipe.half_model ? recipe.weight_bytes : 0.0);
        out.push_back(optimizer_kernel(opt.name + "_step", params, bytes, opt.flops_per_param));
        return out;
    }
    // Foreach ops need one dtype per tensor list: a half-precision model first copies the gradients to fp32
    // and at the end copies the updated master weights to the model. Tensor by tensor, the same passes and
    // traffic (the per-tensor launches are not counted separately).
    if (recipe.half_model)
        out.push_back(optimizer_kernel("grad_to_fp32", params, recipe.gradient_bytes + 4.0, 0.0));
    for (const auto& pass : opt.foreach_passes)
        out.push_back(optimizer_kernel(opt.name + "_" + pass.op, params, 4.0 * (pass.reads + pass.writes),
                                       pass.flops_per_param));
    if (recipe.half_model)
        out.push_back(optimizer_kernel("master_to_model_copy", params, 4.0 + recipe.weight_bytes, 0.0));
    return out;
}

double optimizer_state_bytes(const OptimizerDef& opt, const ModelFeatures& features) {
    if (!opt.factored) return opt.state_bytes_per_param * double(features.trainable_params);
    double bytes = 0;
    for (const auto& lf : features.layers) {
        double p = double(lf.trainable_params);
        if (p <= 0) continue;
        bool vector_params = lf.layer.kind.find("norm") != std::string::npos;
        bytes += double(lf.repeat) * (vector_params ? 4.0 * p : 4.0 * 2.0 * std::sqrt(p));
    }
    return bytes;
}

double optimizer_scratch_bytes(const OptimizerDef& opt, const ModelFeatures& features, Precision precision,
                               OptimizerImpl impl) {
    return optimizer_scratch_bytes(opt, features, precision_recipe(precision), impl);
}

double optimizer_scratch_bytes(const OptimizerDef& opt, const ModelFeatures& features, const PrecisionRecipe& recipe,
                               OptimizerImpl impl) {
    OptimizerImpl used = effective_impl(opt, impl);
    if (used == OptimizerImpl::fused) return 0.0;
    double n = double(features.trainable_params);
    if (used == OptimizerImpl::single_tensor) {
        n = 0;
        for (const auto& lf : features.layers) n = std::max(n, double(lf.trainable_params));
    }
    double grad_copy = recipe.half_model ? 4.0 * n : 0.0;
    return opt.foreach_scratch_tensors * 4.0 * n + grad_copy;
}

}  // namespace prenet
