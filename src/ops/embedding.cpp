// Token embeddings (a gather), embeddings added to the hidden states (learned positions, token types),
// and a learned class token prepended to a sequence.
#include "core/checked.hpp"
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

void infer_embedding(Layer& layer) {
    ops::require_rank(layer, 2, 2);  // [batch, tokens] of ids
    ops::int_attr(layer, "num_embeddings");
    layer.output = {layer.input[0], layer.input[1], ops::int_attr(layer, "embedding_dim")};
}

void cost_embedding(const Layer& layer, Precision p, LayerCost& cost) {
    std::int64_t vocab = ops::int_attr(layer, "num_embeddings"), dim = layer.output.back();
    // A tied table is another layer's (T5's decoder shares the encoder's): counted once there.
    if (!ops::bool_attr(layer, "tied", false)) cost.params = checked_mul(vocab, dim, "parameter count");
    double tokens = double(elements(layer.input)), eb = activation_bytes(p);
    Kernel gather;
    gather.family = Family::gather;
    gather.op = "embedding";
    gather.precision = p;
    gather.elements = element_count(tokens * dim, gather.op);
    gather.bytes = tokens * 8 + 2 * tokens * dim * eb;
    cost.forward_bytes_read += tokens * 8 + tokens * dim * eb;
    cost.forward_bytes_written += tokens * dim * eb;
    cost.kernels.push_back(gather);
    // Backward scatters rows into a zeroed dense gradient of the whole table.
    Kernel scatter = gather;
    scatter.phase = Phase::backward_weight;
    scatter.op = "embedding_grad_weight";
    scatter.flops = tokens * dim;
    scatter.bytes = tokens * 8 + tokens * dim * eb + double(vocab) * dim * 4.0 * 2;
    cost.backward_weight_flops += scatter.flops;
    cost.kernels.push_back(scatter);
    cost.saved_activation_bytes += tokens * 8;
}

void infer_added(Layer& layer) {
    ops::require_rank(layer, 3, 3);  // [batch, tokens, hidden]
    std::int64_t n = ops::int_attr(layer, "num_embeddings");
    if (layer.kind == "positional_embedding" && layer.input[1] > n)
        ops::fail(layer, "sequence length " + std::to_string(layer.input[1]) + " exceeds num_embeddings " +
                             std::to_string(n));
    layer.output = layer.input;
}

void cost_added(const Layer& layer, Precision p, LayerCost& cost) {
    cost.params = checked_mul(ops::int_attr(layer, "num_embeddings"), layer.input.back(), "parameter count");
    double n = double(elements(layer.input));
    ops::add_vector(cost, layer, p, Family::elementwise, layer.kind, n, 2.0, 1.0, 1.0, false);
    Kernel dw = cost.kernels.back();
    dw.phase = Phase::backward_weight;
    dw.op = layer.kind + "_grad_weight";
    dw.bytes = 2 * n * activation_bytes(p);
    cost.backward_weight_flops += n;
    cost.kernels.push_back(dw);
}

void infer_cls(Layer& layer) {
    ops::require_rank(layer, 3, 3);
    layer.output = layer.input;
    layer.output[1] += 1;
}

void cost_cls(const Layer& layer, Precision p, LayerCost& cost) {
    cost.params = layer.input.back();
    ops::add_vector(cost, layer, p, Family::elementwise, "cat_cls_token", double(elements(layer.output)), 1.0, 1.0,
                    0.0);
}

}  // namespace

void register_embedding_ops(OpCatalogue& c) {
    // Embeddings produce their fp32 weights' type under autocast. Token and position embeddings and the class
    // token make the hidden states the residual adds build on; token types are added to that stream.
    const OpTraits stream = OpTraits::of(AutocastClass::fp32_output).starting_fp32_stream();
    c.add({"embedding", "token embedding of [batch, tokens] ids: num_embeddings, embedding_dim, tied (false)", infer_embedding,
           cost_embedding, OpTraits(stream).split_by(TensorSplit::vocabulary)});
    c.add({"positional_embedding", "learned absolute positions added to [batch, tokens, hidden]: num_embeddings",
           infer_added, cost_added, stream});
    c.add({"token_type_embedding", "learned segment embeddings added to the hidden states: num_embeddings",
           infer_added, cost_added, OpTraits::of(AutocastClass::fp32_output)});
    c.add({"cls_token", "learned class token prepended to the sequence (ViT)", infer_cls, cost_cls, stream});
}

}  // namespace prenet
