#include "parallel/plan_search.hpp"

#include <algorithm>
#include <cmath>

#include "core/quantity_text.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"

namespace prenet {

namespace {

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t limit) {
    std::vector<std::int64_t> out;
    for (std::int64_t d = 1; d <= n && d <= limit; ++d)
        if (n % d == 0) out.push_back(d);
    return out;
}

std::vector<std::int64_t> given_or(const std::optional<std::int64_t>& given, std::vector<std::int64_t> options) {
    if (given) return {*given};
    return options;
}

// The tie-breaking order: simpler layouts first.
auto order_key(const ParallelLayout& l) {
    return std::make_tuple(l.pp, l.tp, l.cp, l.zero, int(l.recompute), -l.micro_batch, l.vp, l.ep,
                           int(l.sequence_parallel));
}

struct PipelineSplit {
    std::int64_t vp = 1, first = 0, last = 0;
};

// Where pp x vp chunks do not divide the blocks: the split Megatron-Core users give (num_layers_in_first/
// last_pipeline_stage), fewer blocks on the first stage (the embedding's) and the last (the head's and the
// loss's), each a multiple of vp, the stages between k each, k the fewest (a multiple of vp) that leaves the
// ends no more than k; the last stage the fewer of the two. None with fewer than 3 stages or when no such split
// exists.
std::optional<PipelineSplit> fewer_blocks_at_the_ends(std::int64_t blocks, std::int64_t pp, std::int64_t vp) {
    if (pp < 3 || blocks % (pp * vp) == 0 || blocks % vp) return std::nullopt;
    std::int64_t k = (blocks + pp - 1) / pp;
    k = (k + vp - 1) / vp * vp;
    std::int64_t ends = blocks - (pp - 2) * k;
    std::int64_t last = ends / 2 / vp * vp, first = ends - last;
    if (last < vp || first > k) return std::nullopt;
    return PipelineSplit{vp, first, last};
}

}  // namespace

std::vector<ParallelLayout> candidate_layouts(const LayoutRequest& r, const ModelShape& shape, const Cluster& cluster) {
    const std::int64_t n = r.gpus;
    std::vector<ParallelLayout> out;
    for (auto [field, given] : {std::pair{"dp", r.dp}, {"tp", r.tp}, {"pp", r.pp}, {"cp", r.cp}})
        if (given && n % *given)
            throw Error(std::string(field) + " " + std::to_string(*given) + " does not divide the " + std::to_string(n) +
                            " devices (--gpus)",
                        ErrorCode::conflict, field);
    std::int64_t given_product = r.dp.value_or(1) * r.tp.value_or(1) * r.pp.value_or(1) * r.cp.value_or(1);
    if (n % given_product || (r.dp && r.tp && r.pp && r.cp && given_product != n))
        throw Error("dp x tp x pp x cp = " + std::to_string(given_product) + " does not match the " + std::to_string(n) +
                        " devices (--gpus)",
                    ErrorCode::conflict, "gpus");
    std::optional<Error> first_refusal;  // why the first layout the given dimensions allow was refused
    std::optional<std::int64_t> global = r.global_batch;
    if (r.global_batch_tokens) {
        if (shape.tokens_per_sample == 0)
            throw Error("'global_batch_tokens' needs a language model; give 'global_batch' in samples", ErrorCode::conflict,
                        "global_batch_tokens");
        if (*r.global_batch_tokens % shape.tokens_per_sample)
            throw Error("global batch of " + std::to_string(*r.global_batch_tokens) + " tokens is not a whole number of " +
                            std::to_string(shape.tokens_per_sample) + "-token sequences",
                        ErrorCode::invalid_value, "global_batch_tokens");
        global = *r.global_batch_tokens / shape.tokens_per_sample;
    }
    // Tensor parallelism beyond a node (or a larger scale-up domain) would put its per-layer all-reduces on the
    // network.
    std::vector<std::int64_t> tps =
        given_or(r.tp, divisors(n, std::max<std::int64_t>({1, cluster.scale_up_domain, cluster.gpus_per_node})));
    std::vector<std::int64_t> cps = given_or(r.cp, {1});
    if (!r.cp && shape.tokens_per_sample >= 16384)
        for (std::int64_t c : {2, 4, 8}) cps.push_back(c);
    for (std::int64_t tp : tps)
        for (std::int64_t cp : cps) {
            if (n % (tp * cp)) continue;
            for (std::int64_t pp : given_or(r.pp, divisors(n / (tp * cp), std::max<std::int64_t>(1, shape.blocks)))) {
                // A given pp above the blocks reaches check_layout, which says so.
                if (n % (tp * cp * pp)) continue;
                std::int64_t dp = n / (tp * cp * pp);
                if (r.dp && *r.dp != dp) continue;
                std::vector<std::int64_t> eps = given_or(r.ep, {1});
                if (!r.ep && shape.experts > 0) {
                    eps.clear();
                    for (std::int64_t e : divisors(dp * tp, shape.experts))
                        if (shape.experts % e == 0 && (dp % e == 0 || e % tp == 0)) eps.push_back(e);
                }
                // (vp, first stage blocks, last stage blocks): the given split, or the even ones, and where the
                // blocks do not divide the chunks, Megatron's uneven one with fewer on the first and last stage.
                std::vector<PipelineSplit> splits;
                std::int64_t first = r.first_stage_blocks.value_or(0), last = r.last_stage_blocks.value_or(0);
                for (std::int64_t v : given_or(r.vp, {1}))
                    splits.push_back({v, first, last});
                if (!r.vp && pp > 1)
                    for (std::int64_t v : {2, 4})
                        if (shape.blocks % (pp * v) == 0) splits.push_back({v, first, last});
                if (!r.first_stage_blocks && !r.last_stage_blocks)
                    for (std::int64_t v : given_or(r.vp, {1, 2}))
                        if (auto split = fewer_blocks_at_the_ends(shape.blocks, pp, v)) splits.push_back(*split);
                std::vector<int> zeros;
                if (r.zero) zeros = {*r.zero};
                else if (dp * cp > 1) zeros = {0, 1, 2, 3};
                else zeros = {0};
                // (micro-batch, micro-batches) pairs
                std::vector<std::pair<std::int64_t, std::int64_t>> batches;
                if (global) {
                    auto refuse = [&](const std::string& why) {
                        if (!first_refusal) first_refusal = Error(why, ErrorCode::invalid_value, "global_batch");
                    };
                    std::string g = "the global batch of " + std::to_string(*global) + " samples";
                    if (*global % dp) {
                        refuse(g + " does not split over dp " + std::to_string(dp) + " replicas");
                        continue;
                    }
                    std::int64_t per_replica = *global / dp;
                    if (r.micro_batch && per_replica % *r.micro_batch)
                        refuse("grad-accum = " + g + " / (batch " + std::to_string(*r.micro_batch) + " x dp " +
                               std::to_string(dp) + ") is not whole");
                    if (r.micro_batch && r.grad_accum && per_replica != *r.micro_batch * *r.grad_accum)
                        refuse(g + " is not batch x grad-accum x dp = " +
                               std::to_string(*r.micro_batch * *r.grad_accum * dp));
                    for (std::int64_t mb : given_or(r.micro_batch, divisors(per_replica, 64)))
                        if (per_replica % mb == 0 && (!r.grad_accum || *r.grad_accum == per_replica / mb))
                            batches.push_back({mb, per_replica / mb});
                } else {
                    std::vector<std::int64_t> mbs = r.micro_batch ? std::vector<std::int64_t>{*r.micro_batch}
                                                                  : std::vector<std::int64_t>{1, 2, 4, 8, 16, 32};
                    for (std::int64_t mb : mbs) batches.push_back({mb, r.grad_accum.value_or(1)});
                }
                std::vector<Recompute> recomputes;
                if (r.recompute) recomputes = {*r.recompute};
                else recomputes = {Recompute::none, Recompute::selective, Recompute::full};
                for (std::int64_t ep : eps)
                    for (const PipelineSplit& split : splits)
                        for (int zero : zeros)
                            for (auto [mb, accum] : batches)
                                for (Recompute rc : recomputes) {
                                    ParallelLayout l;
                                    const std::int64_t vp = split.vp;
                                    l.dp = dp, l.tp = tp, l.pp = pp, l.cp = cp, l.ep = ep, l.vp = vp, l.zero = zero;
                                    l.first_stage_blocks = split.first, l.last_stage_blocks = split.last;
                                    l.micro_batch = mb, l.grad_accum = accum, l.recompute = rc;
                                    l.sequence_parallel = r.sequence_parallel.value_or(tp > 1);
                                    l.schedule = r.schedule.value_or(vp > 1 ? PipelineSchedule::interleaved
                                                                            : PipelineSchedule::one_f_one_b);
                                    if (auto refusal = layout_refusal(l, shape, n)) {
                                        if (!first_refusal) first_refusal = std::move(refusal);
                                        continue;
                                    }
                                    if (std::int64_t(out.size()) == limits::plan_layouts)
                                        throw Error("the plan search would weigh more than " +
                                                        std::to_string(limits::plan_layouts) + " layouts of " +
                                                        std::to_string(n) +
                                                        " devices (its budget); give some of dp, tp, pp, zero, "
                                                        "the micro-batch or the global batch to narrow it",
                                                    ErrorCode::invalid_value, "gpus");
                                    out.push_back(l);
                                }
            }
        }
    if (out.empty() && first_refusal) throw *first_refusal;
    std::stable_sort(out.begin(), out.end(),
                     [](const ParallelLayout& a, const ParallelLayout& b) { return order_key(a) < order_key(b); });
    return out;
}

namespace {

// Why `alt` is slower than `best`, per sample: the part of the step that grew the most, with both sides' figures
// (per step when the two steps train as many samples, else per sample).
void explain(PlanAlternative& alt, const ParallelStep& best) {
    const ParallelStep& s = alt.step;
    double per = 1.0 / double(s.layout.global_batch()), best_per = 1.0 / double(best.layout.global_batch());
    bool same_batch = s.layout.global_batch() == best.layout.global_batch();
    auto against = [&](double ms, double best_ms) {
        return same_batch ? duration_text(ms) + " per step against " + duration_text(best_ms)
                          : duration_text(ms * per) + " per sample against " + duration_text(best_ms * best_per);
    };
    double d_bubble = s.time.bubble_ms * per - best.time.bubble_ms * best_per;
    double d_comm = s.time.communication_ms * per - best.time.communication_ms * best_per;
    // The framework overhead grows with the kernels launched: counted with compute.
    double compute = s.time.forward_ms + s.time.backward_ms + s.time.optimizer_ms + s.time.overhead_ms;
    double best_compute = best.time.forward_ms + best.time.backward_ms + best.time.optimizer_ms + best.time.overhead_ms;
    double d_compute = compute * per - best_compute * best_per;
    if (d_bubble >= d_comm && d_bubble >= d_compute) {
        alt.loses_on = "bubble";
        alt.why = "a pipeline bubble of " + against(s.time.bubble_ms, best.time.bubble_ms);
    } else if (d_comm >= d_compute) {
        alt.loses_on = "exposed communication";
        alt.why = "communication not hidden behind compute, " + against(s.time.communication_ms, best.time.communication_ms);
    } else {
        alt.loses_on = "compute";
        alt.why = "more compute (recomputation, smaller or sharded kernels), " + against(compute, best_compute);
    }
}

}  // namespace

namespace {

std::optional<std::pair<std::int64_t, ParallelLayout>> fewest_devices_that_fit(const LayoutRequest& r, StageModels& models,
                                                                              const ParallelContext& c,
                                                                              LayoutMemories& memories) {
    LayoutRequest more = r;
    // Dimensions fixed by the request stay; data parallelism grows with the devices.
    more.dp.reset();
    more.global_batch.reset();
    more.global_batch_tokens.reset();
    more.grad_accum.reset();
    for (std::int64_t n = r.gpus * 2; n <= limits::advised_devices; n *= 2) {
        more.gpus = n;
        Cluster bigger = *c.cluster;
        bigger.gpus = n;
        ParallelContext at = c;
        at.cluster = &bigger;
        std::vector<ParallelLayout> layouts;
        try {
            layouts = candidate_layouts(more, models.shape(), bigger);
        } catch (const Error&) {
            continue;
        }
        for (const auto& l : layouts)
            if (memories.memory(l, models, at).memory.fits()) return std::make_pair(n, l);
    }
    return std::nullopt;
}

}  // namespace

PlanSearch search_plan(const LayoutRequest& r, StageModels& models, const ParallelContext& context, size_t keep,
                       LayoutMemories* memories) {
    // Layouts of one search share their stages' micro-batches and unsharded memory (StageCache).
    StageCache cache;
    ParallelContext c = context;
    if (!c.cache) c.cache = &cache;
    LayoutMemories own;
    LayoutMemories& memory = memories ? *memories : own;
    std::vector<ParallelLayout> layouts = candidate_layouts(r, models.shape(), *c.cluster);
    if (layouts.empty())
        throw Error("no parallel layout of " + std::to_string(r.gpus) +
                        " devices satisfies the request (check that the given dimensions multiply to --gpus and "
                        "divide the model's heads, blocks and global batch)",
                    ErrorCode::conflict, "gpus");
    PlanSearch out;
    out.layouts = std::int64_t(layouts.size());
    // Memory first: it needs no kernel timed.
    std::vector<std::pair<ParallelLayout, ParallelMemory>> fitting;
    std::optional<std::pair<ParallelLayout, ParallelMemory>> smallest;
    for (const auto& l : layouts) {
        ParallelMemory m = memory.memory(l, models, c);
        if (m.memory.fits()) fitting.push_back({l, m});
        else if (!smallest || m.memory.peak < smallest->second.memory.peak) smallest = {l, m};
    }
    if (fitting.empty()) {
        out.fits = false;
        out.best = predict_parallel_step(smallest->first, models, c, &smallest->second);
        out.timed = 1;
        out.fits_on = fewest_devices_that_fit(r, models, c, memory);
        return out;
    }
    // Then the bound (step_lower_bound_ms: the slowest stage's kernels and exposed communication), lowest first:
    // once the fastest keep + 1 timed so far are all faster than a layout's bound, neither it nor any after it can
    // be among them. Ordered by a looser bound, which costs less and which the layouts of one pipeline split and
    // micro-batch share: the last stage's kernels without checkpointing (recomputation only adds kernels, and any
    // stage's kernels bound the slowest's); a layout is held to its own bound (with its communication) before it
    // is timed.
    auto without_recompute = [](ParallelLayout l) {
        l.recompute = Recompute::none;
        return l;
    };
    std::vector<std::pair<double, size_t>> by_bound;  // (looser bound per sample, index in fitting)
    by_bound.reserve(fitting.size());
    for (size_t i = 0; i < fitting.size(); ++i) {
        const ParallelLayout& l = fitting[i].first;
        by_bound.push_back({step_lower_bound_ms(without_recompute(l), models, c, true) / double(l.global_batch()), i});
    }
    std::stable_sort(by_bound.begin(), by_bound.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    // The fastest keep + 1 timed, fastest first, ties in candidate order (the tie-breaking order): all the reply
    // shows; a step's breakdown is large, so the rest are not kept.
    std::vector<std::pair<size_t, ParallelStep>> timed;
    auto faster = [](const std::pair<size_t, ParallelStep>& a, const std::pair<size_t, ParallelStep>& b) {
        double x = ms_per_sample(a.second), y = ms_per_sample(b.second);
        return x < y || (x == y && a.first < b.first);
    };
    // (a hair under the bound: the step sums the same kernel times in another order)
    auto beaten = [&](double bound) {
        return timed.size() > keep && bound * (1 - 1e-9) > ms_per_sample(timed.back().second);
    };
    for (const auto& [bound, i] : by_bound) {
        if (beaten(bound)) break;
        const ParallelLayout& l = fitting[i].first;
        if (beaten(step_lower_bound_ms(l, models, c) / double(l.global_batch()))) continue;
        std::pair<size_t, ParallelStep> s{i, predict_parallel_step(l, models, c, &fitting[i].second)};
        ++out.timed;
        auto at = std::upper_bound(timed.begin(), timed.end(), s, faster);
        if (at - timed.begin() > std::ptrdiff_t(keep)) continue;
        timed.insert(at, std::move(s));
        if (timed.size() > keep + 1) timed.pop_back();
    }
    out.best = timed.front().second;
    for (size_t i = 1; i < timed.size() && out.alternatives.size() < keep; ++i) {
        PlanAlternative alt;
        alt.step = timed[i].second;
        explain(alt, out.best);
        out.alternatives.push_back(std::move(alt));
    }
    // A faster layout that does not fit, if the search saw one, explains why the winner is not faster still.
    if (smallest && out.alternatives.size() <= keep) {
        // (the least-memory non-fitting layout; cheap to report, it says what more memory would buy)
        ParallelStep s = predict_parallel_step(smallest->first, models, c, &smallest->second);
        if (ms_per_sample(s) < ms_per_sample(out.best)) {
            PlanAlternative alt{s, false, "memory",
                                "needs " + gib_text(smallest->second.memory.peak) + " per device of " +
                                    gib_text(smallest->second.memory.capacity)};
            out.alternatives.push_back(std::move(alt));
        }
    }
    return out;
}

}  // namespace prenet
