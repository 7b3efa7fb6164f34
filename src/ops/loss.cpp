// Cross-entropy loss over the last dim (classes or vocabulary): log-softmax, gather, and its gradient.
#include "ops/catalogue.hpp"
#include "ops/op_support.hpp"

namespace prenet {
namespace {

void infer_loss(Layer& layer) {
    ops::require_rank(layer, 2, 3);
    layer.output = {1};
}

void cost_loss(const Layer& layer, Precision p, LayerCost& cost) {
    double n = double(elements(layer.input));
    // Loss runs in fp32 under mixed precision (autocast upcasts log_softmax).
    Precision lp = p == Precision::tf32 ? Precision::fp32 : p;
    ops::add_vector(cost, layer, lp, Family::loss, "cross_entropy", n, 1.0, 1.0, 5.0, true, layer.input.back());
    cost.saved_activation_bytes += n * 4.0;
}

}  // namespace

void register_loss_ops(OpCatalogue& c) {
    c.add({"cross_entropy", "cross-entropy loss over the last dim of the logits", infer_loss, cost_loss,
           OpTraits::of(AutocastClass::fp32_list).split_by(TensorSplit::classes)});
}

}  // namespace prenet
