#include "parallel/tensor_parallel.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/precision.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"
#include "parallel/pipeline.hpp"

namespace prenet {

namespace {

using ops::int_attr;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

TensorSplit split_of(const Layer& l) { return op_traits(l).tensor_split; }

bool is_loss(const Layer& l) { return split_of(l) == TensorSplit::classes; }

// Megatron's output layer: the linear whose logits a vocab-parallel loss reads.
bool is_output_layer(const Block& block, size_t i) {
    return block.layers[i].kind == "linear" && i + 1 < block.layers.size() && is_loss(block.layers[i + 1]);
}

void split_heads(Layer& l, std::int64_t tp) {
    std::int64_t heads = int_attr(l, "heads", 0);
    if (l.attrs.contains("kv_heads") || l.kind == "attention") {
        std::int64_t kv = int_attr(l, "kv_heads", heads);
        // Fewer key/value heads than devices: each device keeps one (Megatron replicates them).
        l.attrs["kv_heads"] = kv >= tp ? kv / tp : 1;
    }
    if (l.kind == "attention" && !l.attrs.contains("head_dim")) l.attrs["head_dim"] = l.input.back() / heads;
    l.attrs["heads"] = heads / tp;
}

// Sequence parallelism: the layer's input arrives as 1/tp of the tokens and is all-gathered for its first
// matmul; Megatron keeps the shard for the backward pass and gathers it again there (its linear layers'
// backward all-gather: Korthikanti et al. 2022, section 4.2.2), so the saved input is 1/tp of it, as every
// other activation of the layer (their Table 2: 34 sbh / t per layer with tensor and sequence parallelism).
void keep_input_shard(Layer& layer, std::int64_t tp) { layer.attrs["saved_input_shards"] = tp; }

// MLPs split their hidden units (column- then row-parallel); MoE layers hold experts / ep, and their experts are
// tensor-split too unless the expert-parallel group spans the tp ranks (then whole, each rank routing its own
// 1/tp of the tokens, sequence parallel). Shared experts are tensor-split like a dense MLP either way.
void split_hidden_units(Layer& layer, const ParallelLayout& l) {
    const std::int64_t tp = l.tp;
    bool moe = is_expert_layer(layer);
    if (moe && l.ep > 1) layer.attrs["expert_shards"] = l.ep;
    if (tp == 1) return;
    if (layer.attrs.contains("shared_intermediate"))
        layer.attrs["shared_intermediate"] = ceil_div(int_attr(layer, "shared_intermediate", 0), tp);
    else if (int_attr(layer, "shared_experts", 0) > 0)
        layer.attrs["shared_intermediate"] = ceil_div(int_attr(layer, "intermediate", 0), tp);
    if (moe && l.expert_tp() == 1) {
        layer.input[1] = ceil_div(layer.input[1], tp);
        return;
    }
    if (l.sequence_parallel) keep_input_shard(layer, tp);
    std::int64_t inter = int_attr(layer, "intermediate", 0);
    if (inter % tp)
        throw Error("tp " + std::to_string(tp) + " does not divide the " + std::to_string(inter) +
                        " hidden units of layer '" + layer.name + "'",
                    ErrorCode::invalid_value, "tp");
    layer.attrs["intermediate"] = inter / tp;
    // A Mamba-2 mixer's B and C groups split with its heads (Megatron's MambaMixer); with fewer groups than ranks
    // each rank keeps one, as attention's key/value heads.
    if (layer.attrs.contains("ssm_groups")) {
        std::int64_t groups = int_attr(layer, "ssm_groups", 1);
        layer.attrs["ssm_groups"] = groups >= tp ? groups / tp : 1;
    }
}

}  // namespace

ModelShape model_shape(const Model& model) {
    ModelShape s;
    s.name = model.name;
    s.tokens_per_sample = model.tokens_per_sample;
    s.blocks = pipeline_units(model);
    for (const auto& b : model.blocks)
        for (const auto& l : b.layers) {
            if (split_of(l) == TensorSplit::heads && l.attrs.contains("heads")) {
                std::int64_t h = int_attr(l, "heads", 0);
                // The strictest layer decides: the fewest heads a layout must divide.
                if (s.heads == 0 || h < s.heads) s.heads = h;
                std::int64_t kv = int_attr(l, "kv_heads", h);
                if (s.kv_heads == 0 || kv < s.kv_heads) s.kv_heads = kv;
            }
            if (is_expert_layer(l)) s.experts = std::max(s.experts, int_attr(l, "experts", 0));
            // A Mamba mixer splits its d_inner whole heads (Mamba-2) or channels (Mamba) at a time.
            if (l.kind == "mamba" || l.kind == "mamba2") {
                std::int64_t inner = int_attr(l, "intermediate", 0);
                std::int64_t h = l.kind == "mamba2" ? inner / std::max<std::int64_t>(1, int_attr(l, "head_dim", 64)) : inner;
                if (s.ssm_heads == 0 || h < s.ssm_heads) s.ssm_heads = h;
            }
        }
    return s;
}

Model shard_model(Model model, const ParallelLayout& l) {
    const std::int64_t tp = l.tp;
    for (auto& block : model.blocks)
        for (size_t i = 0; i < block.layers.size(); ++i) {
            Layer& layer = block.layers[i];
            switch (split_of(layer)) {
                case TensorSplit::heads:
                    if (tp > 1) split_heads(layer, tp);
                    if (tp > 1 && l.sequence_parallel) keep_input_shard(layer, tp);
                    if (l.cp > 1 && model.tokens_per_sample > 0) layer.attrs["context_shards"] = l.cp;
                    break;
                case TensorSplit::hidden_units:
                    split_hidden_units(layer, l);
                    break;
                case TensorSplit::vocabulary:
                    if (tp > 1) layer.attrs["num_embeddings"] = ceil_div(int_attr(layer, "num_embeddings", 1), tp);
                    break;
                case TensorSplit::classes:
                    if (tp > 1) layer.input.back() = ceil_div(layer.input.back(), tp);
                    break;
                case TensorSplit::replicated:
                    if (tp > 1 && is_output_layer(block, i)) {
                        layer.attrs["out_features"] = ceil_div(int_attr(layer, "out_features", 1), tp);
                    } else if (l.sequence_parallel && layer.input.size() == 3 && layer.output.size() == 3 &&
                               layer.input[1] == model.tokens_per_sample) {
                        // Sequence parallel: norms, dropouts and residual adds run on 1/tp of the tokens.
                        layer.input[1] = ceil_div(layer.input[1], tp);
                    }
                    break;
            }
            infer_shape(layer);
        }
    return model;
}

std::vector<CommOp> tensor_parallel_comms(const ModelFeatures& stage, const ParallelLayout& l, Precision p) {
    std::vector<CommOp> ops;
    if (l.tp == 1) return ops;
    CollectiveGroup group{l.tp, 1};
    const char* what = "tensor parallel";
    auto both_passes = [&](double bytes, double count) {
        for (bool backward : {false, true}) {
            if (l.sequence_parallel) {
                ops.push_back(comm_op(Collective::all_gather, bytes, group, count, what, backward));
                ops.push_back(comm_op(Collective::reduce_scatter, bytes, group, count, what, backward));
            } else {
                ops.push_back(comm_op(Collective::all_reduce, bytes, group, count, what, backward));
            }
        }
    };
    for (size_t i = 0; i < stage.layers.size(); ++i) {
        const LayerFeatures& lf = stage.layers[i];
        double bytes = double(elements(lf.layer.output)) * activation_bytes(p);
        double copies = double(lf.repeat);
        switch (split_of(lf.layer)) {
            case TensorSplit::heads:
            case TensorSplit::hidden_units:
                // MoE layers whose experts span the tp ranks exchange tokens by all-to-all instead.
                if (is_expert_layer(lf.layer) && l.expert_tp() == 1) break;
                both_passes(bytes, copies);
                break;
            case TensorSplit::vocabulary:
                ops.push_back(comm_op(l.sequence_parallel ? Collective::reduce_scatter : Collective::all_reduce, bytes,
                                   group, copies, what, false));
                break;
            case TensorSplit::classes: {
                // The vocab-parallel loss: max, sum of exponentials and the target logit over the tp shards, fp32
                // per token; and the output layer's input gradient (its input was replicated).
                double tokens = double(elements(lf.layer.input)) / double(lf.layer.input.back());
                ops.push_back(comm_op(Collective::all_reduce, 3.0 * 4.0 * tokens, group, copies, what, false));
                if (i > 0) {
                    const Layer& head = stage.layers[i - 1].layer;
                    double input_bytes = double(elements(head.input)) * activation_bytes(p);
                    ops.push_back(comm_op(l.sequence_parallel ? Collective::reduce_scatter : Collective::all_reduce,
                                       input_bytes, group, copies, what, true));
                    if (l.sequence_parallel)
                        ops.push_back(comm_op(Collective::all_gather, input_bytes, group, copies, what, false));
                }
                break;
            }
            case TensorSplit::replicated:
                break;
        }
    }
    return ops;
}

double exposed_tensor_parallel_ms(double forward_ms, double backward_ms, double matmul_ms, double weight_gradient_ms,
                                  TensorOverlap overlap) {
    switch (overlap) {
        case TensorOverlap::none: return forward_ms + backward_ms;
        case TensorOverlap::weight_gradients: return forward_ms + std::max(0.0, backward_ms - weight_gradient_ms);
        case TensorOverlap::all_gemms: return std::max(0.0, forward_ms + backward_ms - matmul_ms);
    }
    return forward_ms + backward_ms;
}

}  // namespace prenet
