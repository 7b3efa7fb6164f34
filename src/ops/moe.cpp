// Mixture-of-experts feed-forward: a router, top-k dispatch to `experts` MLPs (processed as a grouped GEMM
// with each expert's tokens padded to capacity), optional always-on shared experts, and the weighted combine.
#include <algorithm>
#include <cmath>

#include "core/checked.hpp"
#include "core/limits.hpp"
#include "ops/catalogue.hpp"
#include "ops/mlp.hpp"
#include "ops/moe.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

void infer_moe(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    read_mlp(layer);
    std::int64_t experts = ops::int_attr(layer, "experts"), top_k = ops::int_attr(layer, "top_k");
    if (top_k > experts) ops::fail(layer, "top_k must not exceed experts");
    if (ops::number_attr(layer, "capacity_factor", 1.0) <= 0) ops::fail(layer, "capacity_factor must be positive");
    // Group-limited routing (DeepSeek's n_group, topk_group): top_k experts within per_token of the groups.
    std::int64_t groups = ops::int_attr(layer, "expert_groups", 0);
    std::int64_t per_token = ops::int_attr(layer, "groups_per_token", 0);
    if (per_token != 0 || groups != 0) {
        if (groups < 1 || experts % groups) ops::fail(layer, "expert_groups must divide the experts");
        if (per_token < 1 || per_token > groups) ops::fail(layer, "groups_per_token must be between 1 and expert_groups");
        if (top_k > per_token * (experts / groups))
            ops::fail(layer, "top_k must not exceed the experts of groups_per_token groups");
    }
    std::int64_t shards = ops::int_attr(layer, "expert_shards", 1);
    if (shards < 1 || experts % shards)
        ops::fail(layer, "expert parallelism " + std::to_string(shards) + " must divide the " +
                             std::to_string(experts) + " experts");
    layer.output = layer.input;
}

// Tokens each local expert processes: the routed tokens (top_k per token) padded to capacity, shared evenly.
std::int64_t tokens_per_expert(const Layer& layer) {
    std::int64_t experts = ops::int_attr(layer, "experts"), top_k = ops::int_attr(layer, "top_k");
    double capacity = ops::number_attr(layer, "capacity_factor", 1.0);
    std::int64_t local_experts = experts / ops::int_attr(layer, "expert_shards", 1);
    double dispatched = double(ops::leading_elements(layer.input)) * double(top_k);
    // A count, so within the tensor limit (a huge capacity factor or top_k must not wrap it).
    double rows = std::ceil(dispatched * capacity / double(local_experts));
    if (!(rows <= double(limits::tensor_elements)))
        ops::fail(layer, "tokens x top_k x capacity_factor / experts is over the limit of " +
                             std::to_string(limits::tensor_elements) + " rows per expert");
    return std::max<std::int64_t>(static_cast<std::int64_t>(rows), 1);
}

// Every expert's and shared expert's projections (the router is not a LoRA target).
std::vector<LinearModule> moe_modules(const Layer& layer) {
    MlpShape s = read_mlp(layer);
    std::int64_t local_experts = ops::int_attr(layer, "experts") / ops::int_attr(layer, "expert_shards", 1);
    std::vector<LinearModule> m = mlp_modules(s, tokens_per_expert(layer), local_experts, false);
    if (std::int64_t shared = ops::int_attr(layer, "shared_experts", 0)) {
        MlpShape shared_shape = s;
        shared_shape.intermediate = ops::int_attr(layer, "shared_intermediate", s.intermediate);
        for (const auto& module : mlp_modules(shared_shape, ops::leading_elements(layer.input), shared, true))
            m.push_back(module);
    }
    return m;
}

void cost_moe(const Layer& layer, Precision p, LayerCost& cost) {
    MlpShape s = read_mlp(layer);
    std::int64_t experts = ops::int_attr(layer, "experts"), top_k = ops::int_attr(layer, "top_k");
    std::int64_t shared = ops::int_attr(layer, "shared_experts", 0);
    std::int64_t shared_intermediate = ops::int_attr(layer, "shared_intermediate", s.intermediate);
    bool router_bias = ops::bool_attr(layer, "router_bias", false);
    std::int64_t tokens = ops::leading_elements(layer.input);
    // Expert parallelism (parallel/): this device holds experts / expert_shards experts and, tokens assumed
    // evenly routed, receives expert_shards devices' share of them: the same work on fewer, fuller experts.
    std::int64_t shards = ops::int_attr(layer, "expert_shards", 1);
    std::int64_t local_experts = experts / shards;

    std::int64_t router = checked_add(checked_mul(s.hidden, experts, "parameter count"), router_bias ? experts : 0,
                                      "parameter count");
    MlpShape shared_shape = s;
    shared_shape.intermediate = shared_intermediate;
    cost.params = checked_add(router, checked_mul(local_experts, mlp_params(s), "parameter count"), "parameter count");
    if (shared) cost.params = checked_add(cost.params, checked_mul(shared, mlp_params(shared_shape),
                                                                   "parameter count"), "parameter count");
    // Qwen2-MoE gates its shared expert with a sigmoid of one more linear (hidden -> 1).
    bool shared_gate = shared && ops::bool_attr(layer, "shared_gate", false);
    if (shared_gate) cost.params = checked_add(cost.params, s.hidden, "parameter count");

    ops::add_gemm(cost, layer, p, "router", 1, tokens, experts, s.hidden, true, layer.needs_input_grad);
    ops::add_vector(cost, layer, p, Family::softmax, "router_topk", double(tokens) * experts, 1, 1, 6);
    double dispatched = double(tokens) * double(top_k);
    ops::add_vector(cost, layer, p, Family::gather, "dispatch", dispatched * s.hidden, 1, 1, 0);
    add_mlp_kernels(cost, layer, p, s, local_experts, tokens_per_expert(layer), true, "expert_");
    if (shared) add_mlp_kernels(cost, layer, p, shared_shape, shared, tokens, true, "shared_expert_");
    if (shared_gate) ops::add_gemm(cost, layer, p, "shared_expert_gate", 1, tokens, 1, s.hidden, true, true);
    ops::add_vector(cost, layer, p, Family::gather, "combine", dispatched * s.hidden, 2, 1, 2);
}

}  // namespace

std::int64_t routed_expert_params(const Layer& layer) {
    if (!is_expert_layer(layer)) return 0;
    std::int64_t local_experts = ops::int_attr(layer, "experts") / ops::int_attr(layer, "expert_shards", 1);
    return checked_mul(local_experts, mlp_params(read_mlp(layer)), "parameter count");
}

void register_moe_ops(OpCatalogue& c) {
    c.add({"moe",
           "mixture-of-experts feed-forward: experts, top_k, intermediate, activation, gated, bias, "
           "capacity_factor (1.0), shared_experts (0), shared_intermediate, router_bias (false), shared_gate (false: a "
           "sigmoid gate on the shared experts, Qwen2-MoE), "
           "expert_groups and groups_per_token (0: routing unlimited; DeepSeek's n_group, topk_group), expert_shards (1: "
           "expert parallelism, this device's share of the experts)",
           infer_moe, cost_moe, OpTraits::of(AutocastClass::half).saving_input().split_by(TensorSplit::hidden_units)
               .routing_to_experts().with_linear_modules(moe_modules)});
}

}  // namespace prenet
