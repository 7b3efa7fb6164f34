#include "api/parallel_result.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <tuple>
#include <optional>

#include "api/device_result.hpp"
#include "api/reply_json.hpp"
#include "core/quantity_text.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "parallel/plan_search.hpp"
#include "predict/cached_predictor.hpp"
#include "run/run_estimate.hpp"

namespace prenet {

using nlohmann::json;

namespace {

json plan_json(const ParallelStep& s, const Cluster& cluster) {
    json p = to_json(s.layout);
    p["gpus"] = cluster.gpus;
    p["gpus_per_node"] = cluster.gpus_per_node;
    p["nodes"] = cluster.nodes();
    p["scale_up"] = {{"kind", to_string(cluster.scale_up.kind)},
                     {"name", cluster.scale_up.name},
                     {"gbps_per_device", cluster.scale_up.gbps},
                     {"domain", cluster.scale_up_domain},
                     {"topology", to_string(cluster.topology)}};
    if (cluster.links_per_device > 0) {
        p["scale_up"]["links_per_device"] = cluster.links_per_device;
        p["scale_up"]["gbps_per_link"] = cluster.link_gbps;
    }
    if (!cluster.torus_shape.empty()) {
        // The slice each group lies on, as Cloud TPU names it (4x4x8), and how many of them the run spans.
        p["scale_up"]["slice"] = torus_shape_text(cluster.torus_shape);
        p["scale_up"]["slices"] = cluster.gpus / cluster.scale_up_domain;
        p["scale_up"]["closed_rings"] = cluster.torus_closed;
    }
    p["scale_out"] = {{"kind", to_string(cluster.scale_out.kind)},
                      {"name", cluster.scale_out.name},
                      {"gbps_per_node", cluster.scale_out.gbps}};
    p["stage_ms"] = s.stage_ms;
    p["uneven_stages"] = s.uneven_stages;
    p["fullest_stage"] = s.fullest_stage;
    return p;
}

json communication_json(const ParallelStep& s) {
    json out = json::object();
    for (const auto& [kind, total] : s.total_by_kind_ms) {
        auto it = s.exposed_by_kind_ms.find(kind);
        out[kind] = {{"total_ms", total}, {"exposed_ms", it == s.exposed_by_kind_ms.end() ? 0.0 : it->second}};
    }
    return out;
}

// Changes at the same device count that make some layout fit, each searched by the same plan search: a pinned
// ZeRO stage raised, pinned tp/pp/cp (and dp) left to the search, a pinned checkpointing kind made heavier, the
// micro-batch cut (when the global batch is given, so it stays), chunked loss. What the request leaves open the
// search has already tried. Ranked by the step time (run/memory_advice.hpp says the rule).
std::vector<MemoryChange> layout_changes(const RequestContext& request, StageModels& models, const ParallelContext& c,
                                         const ParallelStep& least_memory) {
    const LayoutRequest& asked = request.settings.layout;
    ChangeRequest q;
    q.capacity_bytes = least_memory.memory.capacity;
    q.step_ms = least_memory.time.total_ms();
    q.loss = request.settings.loss;
    q.has_full_loss_logits = least_memory.memory.loss_temporary > 0;
    if (asked.recompute) {
        q.checkpointing = checkpoint_kind(*asked.recompute, request.settings.framework);
        q.has_checkpoint_blocks = request.has_checkpoint_blocks;
    }
    if (asked.micro_batch && (asked.global_batch || asked.global_batch_tokens)) q.batch = *asked.micro_batch;
    q.combinations = false;  // each search already combines everything the request leaves open
    if (asked.zero)
        for (int z = *asked.zero + 1; z <= 3; ++z) {
            SettingsChange higher;
            higher.zero = z;
            q.more.push_back(higher);
        }
    bool pinned_dims = asked.dp || asked.tp || asked.pp || asked.cp;
    if (pinned_dims) {
        SettingsChange open;
        if (asked.dp) open.dp = 0;
        if (asked.tp) open.tp = 0;
        if (asked.pp) open.pp = 0;
        if (asked.cp) open.cp = 0;
        q.more.push_back(open);
    }
    std::map<SettingsChange, std::optional<PlanSearch>> searches;
    auto search = [&](const SettingsChange& change) -> const std::optional<PlanSearch>& {
        auto it = searches.find(change);
        if (it != searches.end()) return it->second;
        LayoutRequest r = asked;
        ParallelContext at = c;
        if (change.checkpointing) r.recompute = named_recompute(*change.checkpointing);
        if (change.loss) at.step.loss = *change.loss;
        if (change.batch) r.micro_batch = *change.batch, r.grad_accum.reset();
        if (change.zero) r.zero = *change.zero;
        auto open_or = [](std::optional<std::int64_t>& dim, const std::optional<std::int64_t>& to) {
            if (to) dim = *to ? to : std::nullopt;
        };
        open_or(r.dp, change.dp), open_or(r.tp, change.tp), open_or(r.pp, change.pp), open_or(r.cp, change.cp);
        std::optional<PlanSearch> found;
        try {
            // Memory first, as the search itself weighs it: a change under which no layout fits costs no search
            // (whose answer would then also look for more devices).
            StageCache cache;
            at.cache = &cache;
            bool any_fits = false;
            for (const auto& l : candidate_layouts(r, models.shape(), *c.cluster))
                if ((any_fits = parallel_memory(l, models, at).memory.fits())) break;
            at.cache = nullptr;
            if (any_fits) found = search_plan(r, models, at, 0);
        } catch (const Error&) {
            // a change the model or the device count cannot take: not advice
        }
        return searches[change] = std::move(found);
    };
    ChangeModel model;
    model.memory = [&](const SettingsChange& change) {
        const auto& s = search(change);
        MemoryUse none;  // a change no layout can take: never fits
        none.peak = std::numeric_limits<double>::infinity();
        return s ? s->best.memory : none;
    };
    // Per the same samples as the step asked (a data-parallel degree left open can change the global batch;
    // the search too weighs layouts by time per sample).
    model.step_ms = [&](const SettingsChange& change) {
        const ParallelStep& best = search(change)->best;
        return best.time.total_ms() * double(least_memory.layout.global_batch()) / double(best.layout.global_batch());
    };
    model.resolve = [&](const SettingsChange& change) {
        SettingsChange given = change;
        const ParallelLayout& l = search(change)->best.layout;
        if (given.dp) given.dp = l.dp;
        if (given.tp) given.tp = l.tp;
        if (given.pp) given.pp = l.pp;
        if (given.cp) given.cp = l.cp;
        if (given.batch) given.grad_accum = l.grad_accum;  // what the global batch leaves for this micro-batch
        return given;
    };
    model.flags = change_flags;
    return ranked_changes(q, model);
}

// Stages' layers beyond which a model's stages are not kept beside another's (llama3-8b's 64-device search holds
// about 11,000; a layers JSON of 100,000 layers on 8 devices over 600,000, about 2 GB).
constexpr std::size_t kKeptLayers = 100000;

struct SharedSearch {
    StageModels& models;
    LayoutMemories* memories;  // null: the question is not known
};

// What the plan searches of one question share whatever the accelerator: the sharded models and stage features
// (they depend on the model, its sizes, the precision and the recipe) and each layout's memory (on those and the
// training options: the question, the request without its accelerators). A request over every accelerator
// computes them once, and so do the page's requests of one accelerator each (a module instance per worker, asked
// one accelerator after another). The last two models kept (a request and its fallback precision's, api.cpp),
// each with the last two questions' memories; a model that holds many layers only while it is asked about. Not
// thread-safe; nothing here runs threads.
SharedSearch shared_search(const RequestContext& request) {
    const Settings& s = request.settings;
    // What StageModels reads besides the model argument: its build's inputs (the batch is the layout's), the
    // tokens per sample, the precision and the recipe.
    ModelInputs inputs = s.inputs;
    inputs.batch = 0;
    auto key = std::make_tuple(inputs.fields(), request.model.tokens_per_sample, s.precision, s.mixed);
    struct Kept {
        json argument;
        ModelInputs inputs;
        std::int64_t tokens;
        Precision precision;
        MixedRecipe mixed;
        std::unique_ptr<StageModels> models;
        std::list<std::pair<std::string, LayoutMemories>> memories;  // by question, the latest first
        auto key() const { return std::make_tuple(inputs.fields(), tokens, precision, mixed); }
    };
    // Never destroyed: a process that exits has no use for tearing it down (a CLI run spent a tenth of its time so).
    static std::list<Kept>& kept = *new std::list<Kept>;
    auto it = kept.begin();
    while (it != kept.end() && !(it->key() == key && it->argument == *request.model_argument)) ++it;
    if (it != kept.end()) {
        kept.splice(kept.begin(), kept, it);
    } else {
        // Room first, so that what is kept never adds to the new search's own peak more than one small entry:
        // a model of tens of thousands of layers on a cluster holds gigabytes of stages (and a wasm module
        // has at most 4 GB).
        while (!kept.empty() && (kept.size() > 1 || kept.back().models->layers_held() > kKeptLayers)) kept.pop_back();
        Kept k{*request.model_argument, inputs, request.model.tokens_per_sample, s.precision, s.mixed, nullptr, {}};
        ModelAt build = [in = inputs, argument = k.argument](std::int64_t micro_batch, std::int64_t tokens) {
            ModelInputs at = in;
            at.batch = micro_batch;
            if (tokens > 0) at.seq = tokens;
            return build_model(argument, at);
        };
        k.models = std::make_unique<StageModels>(build, k.tokens, s.precision, s.mixed);
        kept.push_front(std::move(k));
    }
    Kept& k = kept.front();
    if (request.question.empty()) return {*k.models, nullptr};
    auto q = k.memories.begin();
    while (q != k.memories.end() && q->first != request.question) ++q;
    if (q != k.memories.end()) k.memories.splice(k.memories.begin(), k.memories, q);
    else {
        k.memories.emplace_front(request.question, LayoutMemories{});
        if (k.memories.size() > 2) k.memories.pop_back();
    }
    return {*k.models, &k.memories.front().second};
}

}  // namespace

json parallel_device_result(const RequestContext& request, const HardwareSpec& hw) {
    const Settings& s = request.settings;
    Cluster cluster = make_cluster(hw, s.cluster);
    CachedPredictor predictor(*request.predictor, hw);
    ParallelContext c;
    c.hw = &hw;
    c.predictor = &predictor;
    c.cluster = &cluster;
    c.collectives = &CollectiveModel::shipped();
    c.step = request.step;
    c.step.layer_breakdown = false;
    c.reserve = s.reserve;
    c.ep_overlap = s.ep_overlap;
    c.tp_comm_overlap = s.tp_comm_overlap;
    SharedSearch shared = shared_search(request);
    StageModels& models = shared.models;
    PlanSearch search = search_plan(s.layout, models, c, 4, shared.memories);
    const ParallelStep& best = search.best;
    const StepTime& t = best.time;

    double samples_per_s = samples_per_second(double(best.layout.global_batch()), t, hw,
                                              "peak FLOP/s, bandwidth and interconnect");
    std::int64_t tokens = request.model.tokens_per_sample;
    double devices = double(cluster.gpus);
    double mfu = best.model_flops / (t.total_ms() / 1e3) / (devices * hw.matmul_flops(s.precision));

    json p = plan_json(best, cluster);
    json alternatives = json::array();
    for (const auto& alt : search.alternatives) {
        json a = to_json(alt.step.layout);
        a["step_ms"] = alt.step.total_ms();
        a["samples_per_s"] = double(alt.step.layout.global_batch()) / (alt.step.total_ms() / 1e3);
        a["fits"] = alt.fits;
        a["peak_bytes_per_device"] = alt.step.memory.peak;
        a["loses_on"] = alt.loses_on;
        a["why"] = alt.why;
        alternatives.push_back(a);
    }
    p["alternatives"] = alternatives;
    p["layouts_searched"] = search.layouts;
    p["layouts_timed"] = search.timed;
    p["searched"] = !s.layout.fully_given();

    json step = step_json(t, s.input_samples_per_s > 0, false);
    step["bubble_ms"] = t.bubble_ms;
    step["communication_total_ms"] = best.communication_total_ms;
    step["communication"] = communication_json(best);

    json advice = nullptr;
    if (!search.fits) {
        std::string need = " fits: the least-memory one (shown) needs " + gib_text(best.memory.peak) + " per device of " +
                           gib_text(best.memory.capacity);
        std::string summary = "no layout of " + std::to_string(cluster.gpus) + " x " + hw.id + need;
        json fits_on = nullptr;
        if (search.fits_on) {
            const auto& [n, l] = *search.fits_on;
            summary += "; fits on " + std::to_string(n) + " x " + hw.id + " (dp " + std::to_string(l.dp) + ", tp " +
                       std::to_string(l.tp) + ", pp " + std::to_string(l.pp) +
                       (l.first_stage_blocks > 0 ? " with " + std::to_string(l.first_stage_blocks) + " blocks first" : "") +
                       (l.last_stage_blocks > 0 ? (l.first_stage_blocks > 0 ? " and " : " with ") +
                                                      std::to_string(l.last_stage_blocks) + " last" : "") +
                       ", zero " + std::to_string(l.zero) +
                       ", checkpointing " + to_string(l.recompute) + ")";
            fits_on = to_json(l);
            fits_on["gpus"] = n;
        } else {
            summary += "; no layout of up to " + grouped(limits::advised_devices) + " of them fits with these choices";
        }
        std::vector<MemoryChange> changes = layout_changes(request, models, c, best);
        json ranked = json::array();
        for (const auto& change : changes) ranked.push_back(change_json(change));
        if (!changes.empty()) summary += "; cheapest change " + change_text(changes.front());
        advice = {{"summary", summary}, {"fits_on", fits_on}, {"changes", ranked}};
    }

    json run_result = nullptr;
    std::optional<RunSteps> steps;
    if (s.run.given()) {
        steps = attribute_errors(s.run.tokens > 0 ? "tokens" : "samples", ErrorCode::invalid_value,
                                 [&] { return run_steps(s.run, best.layout.global_batch(), tokens); });
        run_result = run_json(estimate_run(*steps, t, hw, s.price_per_hour, int(cluster.gpus)), t);
    }
    std::string peak_used;
    hw.matmul_flops(s.precision, &peak_used);
    json memory = memory_json(best.memory, advice);
    // A pipeline's stages, first to last, each with its own peak: the fullest decides `fits`, but a framework's log
    // is one rank's (Megatron's the last stage's).
    if (best.stage_peaks.size() > 1) {
        json stages = json::array();
        for (const StagePeak& sp : best.stage_peaks)
            stages.push_back({{"peak_allocated_bytes", sp.allocated}, {"peak_reserved_bytes", sp.reserved}});
        memory["stages"] = stages;
    }
    // With the breakdown, the fullest stage's memory over the step.
    if (s.breakdown)
        memory["timeline"] = timeline_json(parallel_memory_timeline(best.layout, models, c, best.memory, best.fullest_stage));
    return {{"hardware", hw.id},
            {"name", hw.name},
            {"plan", p},
            {"step", step},
            {"throughput",
             {{"samples_per_s", samples_per_s},
              {"tokens_per_s", tokens ? json(samples_per_s * double(tokens)) : json(nullptr)},
              {"tokens_per_s_per_device", tokens ? json(samples_per_s * double(tokens) / devices) : json(nullptr)},
              {"mfu", mfu},
              {"mfu_convention", "model FLOPs (forward + backward, no recompute, attention unmasked as Megatron-LM "
                                 "and MosaicML count it) / (devices x dense matrix peak)"}}},
            {"memory", std::move(memory)},
            {"run", run_result},
            // The kernels' range (the slowest stage's families); the collective model's own error is not in it.
            {"uncertainty", uncertainty_json(predictor, t, hw)},
            {"matmul_peak_used", peak_used},
            {"price_per_hour", hw.price_per_hour()},
            {"warnings", step_warnings(batch_warnings(best.layout.global_batch(), tokens, s.run, steps ? &*steps : nullptr), t, c.step)}};
}

}  // namespace prenet
