#include "parallel/data_parallel.hpp"

#include <algorithm>

namespace prenet {

namespace {

std::int64_t shards(const ParallelLayout& l) { return l.dp * l.cp; }

std::int64_t shard_of(std::int64_t params, std::int64_t ranks) { return (params + ranks - 1) / ranks; }

// Of `params`, what one device keeps under ZeRO: the dense parameters' 1/(dp x cp), the experts' 1/replicas.
std::int64_t sharded_params(const ModelFeatures& stage, const ParallelLayout& l) {
    std::int64_t experts = std::int64_t(stage.routed_expert_params);
    if (experts == 0) return shard_of(stage.params, shards(l));
    return shard_of(stage.params - experts, shards(l)) + shard_of(experts, l.expert_replicas());
}

CommOp op(Collective c, double bytes, CollectiveGroup g, const char* what, bool backward) {
    return comm_op(c, bytes, g, 1.0, what, backward);
}

}  // namespace

DataParallelComms data_parallel_comms(const ModelFeatures& stage, const ParallelLayout& l, const PrecisionRecipe& r,
                                      const FrameworkPreset& f) {
    DataParallelComms c;
    std::int64_t n = shards(l);
    if (n == 1) return c;
    const char* what = "data parallel";
    double params = double(stage.params), experts = stage.routed_expert_params, dense = params - experts;
    CollectiveGroup dense_group{n, l.tp};
    // Expert weights are replicated over the ranks outside their expert-parallel (and expert-tensor) group.
    // Ranks are ordered tp, cp, dp, pp: the replicas are the cp ranks (tp apart), in every expert-parallel group
    // of data-parallel ranks (an expert-parallel group spans cp x ep x expert tp ranks).
    CollectiveGroup expert_group{l.expert_replicas(), l.cp * l.ep * l.expert_tp(), l.cp, l.tp};
    double grad = r.gradient_bytes, weight = r.matmul_weight_bytes();
    auto add = [&](std::vector<CommOp>& to, Collective kind, double bytes_per_param, bool backward) {
        if (dense > 0) to.push_back(op(kind, dense * bytes_per_param, dense_group, what, backward));
        if (experts > 0 && expert_group.size > 1)
            to.push_back(op(kind, experts * bytes_per_param, expert_group, what, backward));
    };
    // Gradients reduced in buckets: the last one is reduced after the backward has ended.
    const double last_bucket = last_bucket_fraction(f, params, grad, double(n));
    const int zero = partitioning_zero(f, l.zero, r);
    switch (zero) {
        case 0:
            add(c.last_backward, Collective::all_reduce, grad, true);
            c.unhidden_fraction = last_bucket;
            break;
        case 1:
            // DeepSpeed's BF16 optimizer all-reduces its whole fp32 gradient buffer (the pipeline engine's
            // _bf16_reduce_grads, buffered_allreduce_fallback), then updates its shard and gathers the weights.
            add(c.last_backward, runs_bf16_optimizer(f, l.zero, r) ? Collective::all_reduce : Collective::reduce_scatter,
                grad, true);
            add(c.after_step, Collective::all_gather, weight, false);
            c.unhidden_fraction = last_bucket;
            break;
        case 2:
        case 3: {
            add(c.forward, Collective::all_gather, weight, false);
            if (zero == 3 && f.reshard_after_forward) add(c.backward, Collective::all_gather, weight, true);
            add(c.backward, Collective::reduce_scatter, grad, true);
            // The first block's gather (forward) or the last one's reduction (backward) has nothing to hide behind.
            c.unhidden_fraction = std::min(1.0, stage.largest_unit_params / std::max(1.0, params));
            break;
        }
    }
    // A framework that does not overlap at this stage runs every collective after the pass that needs it.
    if (zero < f.overlap_from_zero) c.unhidden_fraction = 1.0;
    return c;
}

std::int64_t updated_params(const ModelFeatures& stage, const ParallelLayout& l, const PrecisionRecipe& r,
                            const FrameworkPreset& f) {
    if (partitioning_zero(f, l.zero, r) < 1) return stage.params;
    return sharded_params(stage, l);
}

std::int64_t accumulated_params(const ModelFeatures& stage, const ParallelLayout& l) {
    if (l.zero < 2) return stage.params;
    return sharded_params(stage, l);
}

MemoryUse shard_memory(const MemoryUse& u, const ModelFeatures& stage, const ParallelLayout& l,
                       const PrecisionRecipe& r, double in_flight, const FrameworkReserve& reserve,
                       const FrameworkPreset& f) {
    MemoryUse m = u;
    double n = double(stage.params), s = double(shards(l));
    double experts = stage.routed_expert_params, dense = n - experts;
    // Per-parameter states kept by one device: the dense part's 1/(dp x cp), the experts' 1/replicas.
    auto shard = [&](double bytes) {
        if (experts == 0) return bytes / s;
        return bytes * (dense / s + experts / double(l.expert_replicas())) / n;
    };
    double model_bytes = n * r.weight_bytes, master_bytes = n * r.master_bytes;
    const int zero = partitioning_zero(f, l.zero, r);
    if (zero >= 1) {
        m.optimizer_states = shard(u.optimizer_states);
        m.optimizer_scratch = shard(u.optimizer_scratch);
        master_bytes = shard(master_bytes);
    }
    if (zero >= 2) m.gradients = shard(u.gradients);
    const double unit = stage.largest_unit_params, grad_bytes = r.gradient_bytes;
    m.gathered = 0;
    if (zero >= 3) {
        model_bytes = shard(model_bytes);
        // The block being computed and those prefetched, whole, in the precision the matmuls read.
        m.gathered = gathered_params(f, unit, n) * r.matmul_weight_bytes();
        // Autocast's half-precision weight copies are the gathered blocks themselves.
        m.weight_copies = r.mixed && !r.half_model ? 0.0 : u.weight_copies;
    }
    double accumulation_gradient = u.accumulation_gradient;
    if (s > 1 && zero >= 2) {
        // The unsharded gradients of the block the backward computes and, overlapped, of the block whose
        // reduce-scatter runs (FSDP reduce-scatters one unit while the next computes; one at a time without
        // overlap). Under ZeRO-3 the block computed has the precision of the gathered weights its matmuls read
        // (FSDP's param_dtype: the gradient of a bf16 weight is bf16); the one reduced is cast to the stored
        // gradients' precision (FSDP's reduce_dtype). The block computed is also the fresh gradient that
        // accumulation adds in: counted here, not again.
        bool overlapped = zero >= f.overlap_from_zero;
        double computed = std::min(n, unit), reduced = overlapped ? std::min(n - computed, unit) : 0.0;
        double computed_bytes = zero >= 3 ? r.matmul_weight_bytes() : grad_bytes;
        m.gathered += computed * computed_bytes + reduced * grad_bytes;
        accumulation_gradient = 0;
    }
    m.accumulation_gradient = accumulation_gradient;
    m.communication_buffers = 0;
    if (s > 1 && zero < 2) {
        // Gradients are copied into a bucket before their reduction (DeepSpeed's reduce_bucket_size buffer):
        // the bucket being reduced and the one filling. PyTorch DDP's default keeps buckets that cover every
        // gradient for as long as the model lives (FrameworkPreset::copies_gradients_into_buckets): a second copy
        // of the gradients, counted with them; gradients that are bucket views (Megatron's contiguous buffer,
        // DDP's gradient_as_bucket_view) need the two in flight at most.
        double bucket = last_bucket_fraction(f, n, grad_bytes, s) * n * grad_bytes;
        if (zero == 0 && f.copies_gradients_into_buckets) m.gradients += n * grad_bytes;
        else m.communication_buffers = std::min(n * grad_bytes, 2.0 * bucket);
    }
    m.weights = model_bytes + master_bytes;
    m.activations = u.activations * in_flight;
    m.layer_temporary = u.layer_temporary - u.accumulation_gradient + accumulation_gradient + m.gathered +
                        m.communication_buffers;
    // One NCCL communicator per process group this device belongs to.
    int groups = (s > 1) + (l.tp > 1) + (l.pp > 1) + (l.cp > 1) + (l.ep > 1) + (l.ep > 1 && l.expert_replicas() > 1);
    m.nccl_buffers = double(groups) * reserve.nccl_bytes_per_group;

    settle_peak(m, reserve);
    return m;
}

}  // namespace prenet
