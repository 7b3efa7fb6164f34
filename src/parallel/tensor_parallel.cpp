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

// MLPs split their hidden units (column- then row-parallel); MoE layers hold experts / ep, and their experts are
// tensor-split too unless the expert-parallel group spans the tp ranks (then whole, each rank routing its own
// 1/tp of the tokens, sequence parallel). Shared experts are tensor-split like a dense MLP either way.
void split_hidden_units(Layer& layer, const ParallelLayout& l) {
    const std::int64_t tp = l.tp;
    bool moe = layer.kind == "moe";
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
    std::int64_t inter = int_attr(layer, "intermediate", 0);
    if (inter % tp)
        throw Error("tp " + std::to_string(tp) + " does not divide the " + std::to_string(inter) +
                        " hidden units of layer '" + layer.name + "'",
                    ErrorCode::invalid_value, "tp");
    layer.attrs["intermediate"] = inter / tp;
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
            if (l.kind == "moe") s.experts = std::max(s.experts, int_attr(l, "experts", 0));
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

namespace {

double act_bytes(Precision p) { return activation_bytes(p); }

}  // namespace

CommOp comm_op(Collective op, double bytes, CollectiveGroup group, double count, const char* what, bool backward) {
    CommOp c;
    c.op = op;
    c.bytes = bytes;
    c.group = group;
    c.count = count;
    c.what = what;
    c.backward = backward;
    return c;
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
        double bytes = double(elements(lf.layer.output)) * act_bytes(p);
        double copies = double(lf.repeat);
        switch (split_of(lf.layer)) {
            case TensorSplit::heads:
            case TensorSplit::hidden_units:
                // MoE layers whose experts span the tp ranks exchange tokens by all-to-all instead.
                if (lf.layer.kind == "moe" && l.expert_tp() == 1) break;
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
                    double input_bytes = double(elements(head.input)) * act_bytes(p);
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

std::vector<CommOp> context_parallel_comms(const ModelFeatures& stage, const ParallelLayout& l, Precision p) {
    std::vector<CommOp> ops;
    if (l.cp == 1) return ops;
    CollectiveGroup ring{2, l.tp};  // neighbours on the cp ring are tp ranks apart
    for (const auto& lf : stage.layers) {
        if (split_of(lf.layer) != TensorSplit::heads) continue;
        const Layer& a = lf.layer;
        std::int64_t heads = int_attr(a, "heads", 1);
        std::int64_t kv = int_attr(a, "kv_heads", heads);
        std::int64_t dim = int_attr(a, "head_dim", a.input.back() / std::max<std::int64_t>(heads, 1));
        double kv_bytes = 2.0 * double(a.input[0]) * double(a.input[1]) * double(kv * dim) * act_bytes(p);
        double steps = double(l.cp - 1) * double(lf.repeat);
        ops.push_back(comm_op(Collective::send_recv, kv_bytes, ring, steps, "context parallel", false));
        ops.push_back(comm_op(Collective::send_recv, 2.0 * kv_bytes, ring, steps, "context parallel", true));
    }
    return ops;
}

std::vector<CommOp> expert_parallel_comms(const ModelFeatures& stage, const ParallelLayout& l, Precision p) {
    std::vector<CommOp> ops;
    if (l.ep == 1) return ops;
    // Ranks are ordered tp, cp, dp, pp. Carved from the data-parallel ranks, members are tp x cp ranks apart;
    // spanning the tp ranks, runs of tp adjacent ranks, a data-parallel rank (tp x cp ranks) apart.
    CollectiveGroup group = l.expert_tp() == 1 ? CollectiveGroup{l.ep, l.tp * l.cp, l.tp, 1}
                                               : CollectiveGroup{l.ep, l.tp * l.cp};
    for (const auto& lf : stage.layers) {
        if (lf.layer.kind != "moe") continue;
        const Layer& m = lf.layer;
        double tokens = double(elements(m.input)) / double(m.input.back());
        double top_k = double(int_attr(m, "top_k", 1));
        double capacity = ops::number_attr(m, "capacity_factor", 1.0);
        double bytes = tokens * top_k * capacity * double(m.input.back()) * act_bytes(p);
        for (bool backward : {false, true})
            ops.push_back(comm_op(Collective::all_to_all, bytes, group, 2.0 * double(lf.repeat), "expert parallel", backward));
    }
    return ops;
}

}  // namespace prenet
