#include "parallel/parallel_step.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/error.hpp"
#include "ops/attention.hpp"
#include "ops/catalogue.hpp"
#include "parallel/context_parallel.hpp"
#include "parallel/data_parallel.hpp"
#include "parallel/expert_parallel.hpp"
#include "parallel/pipeline.hpp"
#include "parallel/tensor_parallel.hpp"
#include "run/checkpointing.hpp"
#include "run/precision_recipe.hpp"

namespace prenet {

StageModels::StageModels(ModelAt build, std::int64_t tokens, Precision precision, MixedRecipe mixed)
    : build_(std::move(build)), tokens_(tokens), precision_(precision), mixed_(mixed) {}

const Model& StageModels::built(std::int64_t micro_batch, std::int64_t tokens) {
    auto key = std::make_pair(micro_batch, tokens);
    auto it = built_.find(key);
    if (it != built_.end()) return it->second;
    return built_.emplace(key, build_(micro_batch, tokens)).first->second;
}

const Model& StageModels::whole(std::int64_t micro_batch) { return built(micro_batch, tokens_); }

std::size_t StageModels::layers_held() const {
    std::size_t n = 0;
    for (const auto& [key, features] : stage_features_) n += features.layers.size();
    return n;
}

double StageModels::flops(std::int64_t micro_batch) {
    auto it = flops_.find(micro_batch);
    if (it != flops_.end()) return it->second;
    // MFU counts attention whole, masked or not (Megatron-LM's and MosaicML's formulas: 4 x layers x hidden x
    // seq^2 per sequence forward), although a causal kernel skips half of it; the step times count what runs.
    Model counted = whole(micro_batch);
    for (auto& block : counted.blocks)
        for (auto& layer : block.layers)
            if (is_attention(layer.kind) && layer.attrs.contains("causal"))
                layer.attrs["causal"] = false;
    ModelFeatures f = compute_features(counted, precision_, mixed_);
    // FlashAttention's backward recomputes the scores (ops/attention.cpp): hardware FLOPs, not model FLOPs, as
    // activation checkpointing's recompute (never counted here): backward = 2 x forward, as the formulas have it.
    double recompute = 0;
    for (const auto& layer : f.layers)
        if (layer.runs_backward)
            for (const auto& k : layer.cost.kernels) recompute += double(layer.repeat) * flash_backward_recompute_flops(k);
    return flops_[micro_batch] = f.forward_flops + f.backward_flops() - recompute;
}

const ModelShape& StageModels::shape() {
    if (!shape_) shape_ = std::make_unique<ModelShape>(model_shape(whole(1)));
    return *shape_;
}

double StageModels::pipeline_message_bytes(const ParallelLayout& l) {
    std::int64_t local_tokens = tokens_ > 0 ? tokens_ / l.cp : 0;
    return prenet::pipeline_message_bytes(built(l.micro_batch, local_tokens), l, precision_);
}

const std::vector<const ModelFeatures*>& StageModels::stages(const ParallelLayout& l) {
    ShardKey shard{l.micro_batch, l.cp, l.tp, l.sequence_parallel, l.ep, l.expert_tp()};
    StagesKey key{shard, l.pp, l.vp, l.first_stage_blocks, l.last_stage_blocks};
    auto it = stages_.find(key);
    if (it != stages_.end()) return it->second;
    auto device = devices_.find(shard);
    if (device == devices_.end()) {
        std::int64_t local_tokens = tokens_ > 0 ? tokens_ / l.cp : 0;
        device = devices_.emplace(shard, shard_model(built(l.micro_batch, local_tokens), l)).first;
    }
    const Model& model = device->second;
    std::vector<StagePieces> pieces;
    if (l.pp * l.vp == 1) pieces.push_back({});  // the whole model, unsplit (it may have no blocks to split)
    else pieces = pipeline_stage_pieces(model, l);
    std::vector<const ModelFeatures*> features;
    for (size_t s = 0; s < pieces.size(); ++s) {
        auto content = std::make_pair(shard, pieces[s]);
        auto found = stage_features_.find(content);
        if (found == stage_features_.end()) {
            ModelFeatures f = l.pp * l.vp == 1
                                  ? compute_features(model, precision_, mixed_)
                                  : compute_features(pipeline_stage(model, pieces[s], std::int64_t(s), l.pp),
                                                     precision_, mixed_);
            found = stage_features_.emplace(std::move(content), std::move(f)).first;
        }
        features.push_back(&found->second);
    }
    return stages_.emplace(key, std::move(features)).first->second;
}

const MicroBatchTime& StageCache::micro_batch(const ModelFeatures& stage, const StepOptions& o,
                                             const ParallelContext& c) {
    Key key{&stage, o.checkpoint_kind(), o.layer_breakdown};
    auto it = micro_batches_.find(key);
    if (it != micro_batches_.end()) return it->second;
    return micro_batches_.emplace(key, predict_micro_batch(stage, *c.hw, *c.predictor, o)).first->second;
}

const StageCollectives& StageCache::collectives(const ModelFeatures& stage, const ParallelLayout& l,
                                                const ParallelContext& c, const StepOptions& o) {
    // Checkpointing and the number of micro-batches change no collective: one entry for all of them.
    ParallelLayout key = l;
    key.recompute = Recompute::none;
    key.grad_accum = 1;
    auto it = collectives_.find({&stage, key});
    if (it != collectives_.end()) return it->second;
    return collectives_.emplace(std::make_pair(&stage, key), stage_collectives(stage, l, c, o)).first->second;
}

const MemoryUse& StageCache::unsharded_memory(const ModelFeatures& stage, const MemoryOptions& o) {
    // estimate_memory reads grad_accum only as "does it accumulate" (a gradient buffer for the largest layer), and
    // the ZeRO stage only as whether the framework's BF16 optimizer runs (model_recipe).
    MemoryKey key{&stage, o.checkpoint_kind(), o.grad_accum > 1,
                  runs_bf16_optimizer(o.framework, o.zero, precision_recipe(o.precision, o.mixed))};
    auto it = memory_.find(key);
    if (it != memory_.end()) return it->second;
    return memory_.emplace(key, estimate_memory(stage, o)).first->second;
}

const ActivationMemory& StageCache::activations(const ModelFeatures& stage, const MemoryOptions& o) {
    auto key = std::make_pair(&stage, o.checkpoint_kind());
    auto it = activations_.find(key);
    if (it != activations_.end()) return it->second;
    return activations_.emplace(key, training_activations(stage, o)).first->second;
}

namespace {

double comm_ms(const std::vector<CommOp>& ops, const ParallelContext& c, bool backward_only = false,
               bool forward_only = false) {
    double ms = 0;
    for (const auto& op : ops) {
        if ((backward_only && !op.backward) || (forward_only && op.backward)) continue;
        ms += op.count * comm_op_ms(op, *c.collectives, *c.cluster);
    }
    return ms * c.predictor->communication_factor(*c.hw);
}

// What of `comm` stays exposed when it overlaps `compute`: its unhidden part always, the rest beyond compute.
double exposed(double comm, double compute, double unhidden_fraction) {
    double first = comm * unhidden_fraction;
    return first + std::max(0.0, comm - first - compute);
}

double attention_ms(const std::vector<LayerTime>& layers, bool backward) {
    double ms = 0;
    for (const auto& layer : layers)
        if (is_attention(layer.kind)) ms += backward ? layer.backward_ms : layer.forward_ms;
    return ms;
}

// One stage's communication: per micro-batch, what each kind takes (total) and leaves exposed, and the data-parallel
// tail a step runs once (DDP's last bucket, ZeRO-1's gather). What a step adds to its kernels and what its lower
// bound counts (step_lower_bound_ms), from the one micro-batch's kernel times both share.
struct StageComms {
    struct Part {
        const char* kind;
        double total = 0, exposed = 0;
    };
    Part parts[4] = {{"tensor parallel"}, {"expert parallel"}, {"context parallel"}, {"data parallel"}};
    double tail_total = 0, tail_exposed = 0;  // data parallel, once per step
    double per_micro_batch_exposed() const {
        double ms = 0;
        for (const Part& p : parts) ms += p.exposed;
        return ms;
    }
};

StageComms stage_comms(const ModelFeatures& stage, const ParallelLayout& l, const ParallelContext& c,
                       const StepOptions& o, const MicroBatchTime& mb) {
    const StageCollectives t = c.cache ? c.cache->collectives(stage, l, c, o) : stage_collectives(stage, l, c, o);
    StageComms out;
    auto& [tensor, expert, context, data] = out.parts;
    double forward = mb.forward_ms, backward = mb.backward_ms + mb.recompute_ms;
    // Tensor and expert parallelism: exposed.
    tensor.total = t.tensor_forward + t.tensor_backward;
    const TensorOverlap overlap = tensor_overlap(o.framework, c.tp_comm_overlap, l.sequence_parallel);
    tensor.exposed = exposed_tensor_parallel_ms(t.tensor_forward, t.tensor_backward, mb.matmul_ms,
                                                mb.weight_gradient_ms, overlap);
    expert.total = t.expert;
    expert.exposed = expert_parallel_exposed_ms(t.expert, forward + backward, c.ep_overlap);
    // Ring attention overlaps the attention layers' compute.
    context.total = t.context_forward + t.context_backward;
    context.exposed = std::max(0.0, t.context_forward - attention_ms(mb.layers, false)) +
                      std::max(0.0, t.context_backward - attention_ms(mb.layers, true));
    double u = t.data_unhidden_fraction;
    data.total = t.data_forward + t.data_backward;
    data.exposed = exposed(t.data_forward, forward, u) + exposed(t.data_backward, backward, u);
    out.tail_total = t.data_last + t.data_after;
    out.tail_exposed = exposed(t.data_last, backward, u) + exposed(t.data_after, forward, u);
    return out;
}

struct StageResult {
    StepTime time;  // one micro-batch forward/backward (with recompute), plus accumulation and optimizer of m
    double per_micro_batch_exposed = 0;   // exposed communication of one micro-batch
    double tail_exposed = 0;              // once per step (DDP's last bucket, ZeRO-1's gather)
    std::map<std::string, double> exposed, total;
};

const MicroBatchTime& stage_micro_batch(const ModelFeatures& stage, const StepOptions& o, const ParallelContext& c,
                                        MicroBatchTime& own) {
    return c.cache ? c.cache->micro_batch(stage, o, c) : (own = predict_micro_batch(stage, *c.hw, *c.predictor, o));
}

StepOptions stage_options(const ParallelLayout& l, const ParallelContext& c) {
    StepOptions o = c.step;
    o.grad_accum = l.grad_accum;
    // Selective recomputation is what the framework calls selective (layout.hpp's checkpoint_kind).
    CheckpointKind kind = checkpoint_kind(l.recompute, c.step.framework);
    o.checkpointing = kind == CheckpointKind::full;
    o.other_checkpointing = o.checkpointing ? CheckpointKind::none : kind;
    o.micro_batch = l.micro_batch;
    o.layer_breakdown = l.cp > 1;  // ring attention hides behind the attention layers
    o.zero = l.zero;
    return o;
}

MemoryUse stage_memory(const ModelFeatures& stage, std::int64_t index, const ParallelLayout& l,
                       const ParallelContext& c) {
    MemoryOptions mo;
    static_cast<TrainingSetup&>(mo) = stage_options(l, c);
    mo.reserve = c.reserve;
    MemoryUse unsharded = c.cache ? c.cache->unsharded_memory(stage, mo) : estimate_memory(stage, mo);
    // The stage's activations at its peak (pipeline.hpp), handed to shard_memory as one micro-batch's.
    ActivationMemory one = c.cache ? c.cache->activations(stage, mo) : training_activations(stage, mo);
    unsharded.activations = stage_activation_bytes(one, index, l);
    PrecisionRecipe recipe = model_recipe(mo);
    return with_capacity(shard_memory(unsharded, stage, l, recipe, 1.0, c.reserve, c.step.framework), *c.hw);
}

StageResult run_stage(const ModelFeatures& stage, const ParallelLayout& l,
                      const ParallelContext& c) {
    StageResult r;
    StepOptions o = stage_options(l, c);
    o.accumulated_params = accumulated_params(stage, l);
    o.updated_params = updated_params(stage, l, model_recipe(o), o.framework);
    MicroBatchTime own;
    const MicroBatchTime& mb = stage_micro_batch(stage, o, c, own);
    r.time = predict_step(stage, *c.hw, *c.predictor, o, mb);
    StageComms comms = stage_comms(stage, l, c, o, mb);
    double m = double(l.grad_accum);
    for (const auto& part : comms.parts) {
        r.total[part.kind] += part.total * m;
        r.exposed[part.kind] += part.exposed * m;
    }
    r.total["data parallel"] += comms.tail_total;
    r.exposed["data parallel"] += comms.tail_exposed;
    r.per_micro_batch_exposed = comms.per_micro_batch_exposed();
    r.tail_exposed = comms.tail_exposed;
    return r;
}

}  // namespace

StageCollectives stage_collectives(const ModelFeatures& stage, const ParallelLayout& l, const ParallelContext& c,
                                   const StepOptions& o) {
    StageCollectives t;
    auto tp_ops = tensor_parallel_comms(stage, l, o.precision);
    t.tensor_forward = comm_ms(tp_ops, c, false, true);
    t.tensor_backward = comm_ms(tp_ops, c, true);
    t.expert = comm_ms(expert_parallel_comms(stage, l, o.precision), c);
    auto cp_ops = context_parallel_comms(stage, l, o.precision);
    t.context_forward = comm_ms(cp_ops, c, false, true);
    t.context_backward = comm_ms(cp_ops, c, true);
    DataParallelComms dp = data_parallel_comms(stage, l, model_recipe(o), o.framework);
    t.data_forward = comm_ms(dp.forward, c);
    t.data_backward = comm_ms(dp.backward, c);
    t.data_last = comm_ms(dp.last_backward, c);
    t.data_after = comm_ms(dp.after_step, c);
    t.data_unhidden_fraction = dp.unhidden_fraction;
    return t;
}

ParallelMemory parallel_memory(const ParallelLayout& l, StageModels& models, const ParallelContext& c) {
    check_layout(l, models.shape(), c.cluster->gpus);
    const std::vector<const ModelFeatures*>& stages = models.stages(l);
    ParallelMemory out;
    for (size_t i = 0; i < stages.size(); ++i) {
        MemoryUse m = stage_memory(*stages[i], std::int64_t(i), l, c);
        if (l.schedule == PipelineSchedule::dualpipe) {
            std::int64_t mirror = dualpipe_mirror_stage(std::int64_t(i), l.pp);
            m = with_mirror_parameters(m, stage_memory(*stages[size_t(mirror)], mirror, l, c));
        }
        out.stage_peaks.push_back({m.peak_allocated, m.peak_reserved});
        if (i == 0 || m.peak > out.memory.peak) {
            out.memory = m;
            out.fullest_stage = std::int64_t(i);
        }
    }
    return out;
}

ParallelMemory LayoutMemories::memory(const ParallelLayout& l, StageModels& models, const ParallelContext& c) {
    auto it = known_.find(l);
    if (it == known_.end()) it = known_.emplace(l, parallel_memory(l, models, c)).first;
    ParallelMemory out = it->second;
    out.memory = with_capacity(out.memory, *c.hw);
    return out;
}

double step_lower_bound_ms(const ParallelLayout& l, StageModels& models, const ParallelContext& c,
                           bool last_stage_only) {
    check_layout(l, models.shape(), c.cluster->gpus);
    StepOptions o = stage_options(l, c);
    double slowest = 0, fewest_kernels = INFINITY, least_tail = INFINITY;
    const std::vector<const ModelFeatures*>& stages = models.stages(l);
    for (size_t i = last_stage_only ? stages.size() - 1 : 0; i < stages.size(); ++i) {
        MicroBatchTime own;
        const MicroBatchTime& mb = stage_micro_batch(*stages[i], o, c, own);
        double per_micro_batch = mb.forward_ms + mb.backward_ms + mb.recompute_ms;
        if (!last_stage_only) {
            StageComms comms = stage_comms(*stages[i], l, c, o, mb);
            per_micro_batch += comms.per_micro_batch_exposed();
            least_tail = std::min(least_tail, comms.tail_exposed);
        }
        slowest = std::max(slowest, per_micro_batch);
        fewest_kernels = std::min(fewest_kernels, mb.kernels);
    }
    const double m = double(l.grad_accum);
    if (last_stage_only) return slowest * m;
    // The framework's launch gaps, of the stage launching the fewest kernels (the step's are its slowest stage's,
    // which launches at least its micro-batches' kernels), and the least of the stages' once-a-step communication
    // (the step's is its slowest stage's).
    return slowest * m + least_tail +
           launch_and_step_ms(o.overhead, m * fewest_kernels) * c.predictor->overhead_factor(*c.hw);
}

ParallelStep predict_parallel_step(const ParallelLayout& l, StageModels& models, const ParallelContext& c,
                                   const ParallelMemory* known_memory) {
    check_layout(l, models.shape(), c.cluster->gpus);
    const std::vector<const ModelFeatures*>& stages = models.stages(l);
    ParallelStep s;
    s.layout = l;
    std::vector<StageResult> results;
    std::vector<double> per_micro_batch;
    std::vector<StagePass> passes;
    for (size_t i = 0; i < stages.size(); ++i) {
        results.push_back(run_stage(*stages[i], l, c));
        const StageResult& r = results.back();
        s.stage_ms.push_back(r.time.micro_batch_ms);
        per_micro_batch.push_back(r.time.micro_batch_ms + r.per_micro_batch_exposed);
        double backward = (r.time.backward_ms - r.time.grad_accumulation_ms) / double(l.grad_accum);
        passes.push_back({per_micro_batch.back(), backward, backward * weight_grad_share(*stages[i])});
    }
    size_t slowest = size_t(std::max_element(per_micro_batch.begin(), per_micro_batch.end()) - per_micro_batch.begin());
    // One send to the next stage: the peer is a whole stage of tp x cp x dp ranks away.
    double p2p = l.pp > 1 ? c.collectives->time_ms(Collective::send_recv, models.pipeline_message_bytes(l),
                                                   {2, l.tp * l.cp * l.dp}, *c.cluster) *
                                c.predictor->communication_factor(*c.hw)
                          : 0.0;
    const StageResult& r = results[slowest];
    double m = double(l.grad_accum);
    s.time = r.time;
    s.time.bubble_ms = pipeline_bubble_ms(passes, l, p2p);
    double p2p_steady = pipeline_steady_sends(l) * p2p;
    s.time.communication_ms = m * r.per_micro_batch_exposed + p2p_steady + r.tail_exposed;
    s.exposed_by_kind_ms = r.exposed;
    s.total_by_kind_ms = r.total;
    if (l.pp > 1) {
        // A weight tied across the pipeline (the head's copy of the token embedding, pipeline_stage): its two
        // copies' gradients are summed between the first and the last stage once a step, before the optimizer.
        double tied = 0;
        for (const ModelFeatures* st : stages) tied = std::max(tied, st->tied_copy_params);
        double tied_ms = tied > 0 ? c.collectives->time_ms(Collective::all_reduce,
                                                           tied * model_recipe(stage_options(l, c)).gradient_bytes,
                                                           {2, (l.pp - 1) * l.tp * l.cp * l.dp}, *c.cluster) *
                                        c.predictor->communication_factor(*c.hw)
                                  : 0.0;
        s.time.communication_ms += tied_ms;
        s.exposed_by_kind_ms["pipeline parallel"] = p2p_steady + tied_ms;
        s.total_by_kind_ms["pipeline parallel"] = p2p_steady + pipeline_bubble_sends(l.pp) * p2p + tied_ms;
    }
    for (const auto& [kind, ms] : s.total_by_kind_ms) s.communication_total_ms += ms;
    // What overlap hides is not free (run/overhead.hpp's overlap_loss); a pipeline's sends are not overlapped
    // (their total counts the bubble's sends, which the bubble already holds).
    double hidden = 0;
    for (const auto& [kind, ms] : r.total) hidden += ms - r.exposed.at(kind);
    s.time.overhead_ms += overlap_loss_ms(c.step.overhead, hidden) * c.predictor->overhead_factor(*c.hw);
    ParallelMemory memory = known_memory ? *known_memory : parallel_memory(l, models, c);
    s.memory = memory.memory;
    s.fullest_stage = memory.fullest_stage;
    s.stage_peaks = memory.stage_peaks;
    if (stages.size() > 1) {
        double lo = *std::min_element(s.stage_ms.begin(), s.stage_ms.end());
        double hi = *std::max_element(s.stage_ms.begin(), s.stage_ms.end());
        std::vector<std::int64_t> chunks = stage_chunk_blocks(l, models.shape().blocks);
        bool uneven_blocks = std::adjacent_find(chunks.begin(), chunks.end(), std::not_equal_to<>()) != chunks.end();
        s.uneven_stages = uneven_blocks || hi > 1.1 * lo;
    }
    s.model_flops = models.flops(l.micro_batch) * m * double(l.dp);
    return s;
}

double ms_per_sample(const ParallelStep& step) { return step.total_ms() / double(step.layout.global_batch()); }

MemoryTimeline parallel_memory_timeline(const ParallelLayout& l, StageModels& models, const ParallelContext& c,
                                        const MemoryUse& memory, std::int64_t fullest_stage) {
    const ModelFeatures& stage = *models.stages(l).at(size_t(fullest_stage));
    StepOptions o = stage_options(l, c);
    ForwardProfile profile = forward_profile(stage, o.precision, o.checkpoint_kind(), micro_batches_in_flight(fullest_stage, l));
    return memory_timeline(memory, profile, c.reserve);
}

}  // namespace prenet
