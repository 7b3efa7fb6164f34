#include "parallel/plan_search.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "parallel-fixture.hpp"
#include "test-helpers.hpp"
#include "run/optimizer.hpp"

namespace prenet {
namespace {

using Fixture = testing::ParallelFixture;

TEST(PlanSearch, ASlowLinkPicksThePipelineAFastOneDataParallel) {
    for (double gbps : {0.01, 1000.0}) {
        Fixture f(2, gbps);
        LayoutRequest r = f.request();
        r.tp = 1, r.cp = 1, r.vp = 1, r.zero = 0, r.micro_batch = 1, r.global_batch = 16, r.recompute = Recompute::none;
        PlanSearch s = search_plan(r, f.models, f.context);
        // Data parallel all-reduces every gradient (0.5 GB); the pipeline sends one micro-batch's activations.
        if (gbps < 1) EXPECT_EQ(s.best.layout.pp, 2) << gbps;
        else EXPECT_EQ(s.best.layout.dp, 2) << gbps;
        ASSERT_FALSE(s.alternatives.empty());
        // On the fast link the pipeline loses on its own work, not on the link: its bubble, or its last stage's
        // share (GPT-2's 38.6M-parameter head, whose tied table that stage keeps a copy of: parallel/pipeline.cpp).
        if (gbps < 1) EXPECT_EQ(s.alternatives.front().loses_on, "exposed communication") << s.alternatives.front().why;
        else EXPECT_NE(s.alternatives.front().loses_on, "exposed communication") << s.alternatives.front().why;
        // Both sides' figures, per step (the same global batch), in the units the page prints.
        EXPECT_NE(s.alternatives.front().why.find(" per step against "), std::string::npos) << s.alternatives.front().why;
        EXPECT_EQ(s.alternatives.front().why.find("e+"), std::string::npos) << s.alternatives.front().why;
    }
}

TEST(PlanSearch, TooLittleMemoryForcesFullSharding) {
    Fixture f(8);
    LayoutRequest r = f.request();
    r.tp = 1, r.pp = 1, r.cp = 1, r.micro_batch = 1, r.recompute = Recompute::none;
    ParallelLayout z2;
    z2.dp = 8, z2.zero = 2;
    ParallelLayout z3 = z2;
    z3.zero = 3;
    double between = (parallel_memory(z2, f.models, f.context).memory.peak +
                      parallel_memory(z3, f.models, f.context).memory.peak) / 2.0;
    f.hw.memory_gb = between / 1e9;
    PlanSearch s = search_plan(r, f.models, f.context);
    EXPECT_TRUE(s.fits);
    EXPECT_EQ(s.best.layout.zero, 3);
    EXPECT_TRUE(s.best.memory.fits());
    f.hw.memory_gb = 0.01;  // nothing fits: the least-memory layout, said so
    PlanSearch none = search_plan(r, f.models, f.context);
    EXPECT_FALSE(none.fits);
    EXPECT_EQ(none.best.layout.zero, 3);
    EXPECT_FALSE(none.fits_on);  // not on any number of devices either
}

TEST(PlanSearch, WhenNothingFitsItSaysHowManyDevicesWould) {
    Fixture eight(8), sixteen(16);
    ParallelLayout z3;
    z3.dp = 8, z3.zero = 3;
    double at8 = parallel_memory(z3, eight.models, eight.context).memory.peak;
    z3.dp = 16;
    double at16 = parallel_memory(z3, sixteen.models, sixteen.context).memory.peak;
    ASSERT_LT(at16, at8);
    eight.hw.memory_gb = (at8 + at16) / 2.0 / 1e9;
    LayoutRequest r = eight.request();
    r.tp = 1, r.pp = 1, r.cp = 1, r.micro_batch = 1, r.recompute = Recompute::none;
    PlanSearch s = search_plan(r, eight.models, eight.context);
    EXPECT_FALSE(s.fits);
    ASSERT_TRUE(s.fits_on);
    EXPECT_EQ(s.fits_on->first, 16);
    EXPECT_EQ(s.fits_on->second.zero, 3);
    EXPECT_EQ(s.fits_on->second.devices(), 16);
}

TEST(PlanSearch, DeterministicAndEveryCandidateSatisfiesTheProduct) {
    Fixture f(8);
    LayoutRequest r = f.request();
    r.global_batch = 32;
    auto layouts = candidate_layouts(r, f.models.shape(), f.cluster);
    ASSERT_GT(layouts.size(), 20u);
    for (const auto& l : layouts) {
        EXPECT_EQ(l.devices(), 8);
        EXPECT_EQ(l.global_batch(), 32);
        EXPECT_EQ(12 % l.tp, 0);
    }
    PlanSearch a = search_plan(r, f.models, f.context), b = search_plan(r, f.models, f.context);
    EXPECT_TRUE(a.best.layout == b.best.layout);
    EXPECT_EQ(a.best.total_ms(), b.best.total_ms());
    for (const auto& alt : a.alternatives) EXPECT_GE(ms_per_sample(alt.step), ms_per_sample(a.best));
}

TEST(PlanSearch, EveryLayoutStoresEachParametersModelStatesOnce) {
    // Mixed-precision AdamW keeps fp32 weights (4 B), fp32 gradients (4 B) and two fp32 moments (8 B) per
    // parameter, each at least once over all devices: however a layout shards them (ZeRO over dp x cp, experts
    // over their replicas only, pipeline stages and tensor splits), a device holds at least 16 P / devices of
    // them; 14 P / devices leaves room for a state kept in half precision. The fullest stage is at least the mean.
    for (auto [model, gpus] : {std::pair<const char*, std::int64_t>{"mixtral-8x7b", 8}, {"mixtral-8x7b", 32},
                               {"llama2-7b", 8}}) {
        Fixture f(gpus, 300, model, 128);
        LayoutRequest r = f.request();
        r.global_batch = 2 * gpus;
        r.micro_batch = 1;
        const double params = double(compute_features(f.models.whole(1), Precision::bf16).params);
        const double bound = 14.0 * params / double(gpus);
        auto layouts = candidate_layouts(r, f.models.shape(), f.cluster);
        ASSERT_GT(layouts.size(), 10u) << model;
        for (const ParallelLayout& l : layouts) {
            MemoryUse m = parallel_memory(l, f.models, f.context).memory;
            EXPECT_GE(testing::model_states(m), bound)
                << model << " on " << gpus << ": " << to_json(l).dump();
        }
    }
}

TEST(PlanSearch, ImpossibleRequestsNameTheirField) {
    Fixture f(8);
    auto field = [&](LayoutRequest r) {
        try {
            search_plan(r, f.models, f.context);
        } catch (const Error& e) {
            return e.field();
        }
        return std::string("none");
    };
    LayoutRequest r = f.request();
    r.tp = 3;
    EXPECT_EQ(field(r), "tp");  // does not divide 8
    r = f.request();
    r.tp = 8;
    EXPECT_EQ(field(r), "tp");  // does not divide 12 heads
    r = f.request();
    r.dp = 2, r.tp = 2, r.pp = 4, r.cp = 2;
    EXPECT_EQ(field(r), "gpus");  // 32 != 8
    r = f.request();
    r.global_batch = 12, r.dp = 8;
    EXPECT_EQ(field(r), "global_batch");
}

TEST(PlanSearch, ARequestPastTheBudgetOfLayoutsIsRefusedBeforeAnythingIsTimed) {
    // 14,414,400 devices (504 divisors) and a model with 128 heads and 720 blocks: far more than the budget.
    Cluster cluster;
    cluster.gpus = cluster.gpus_per_node = cluster.scale_up_domain = 14414400;
    ModelShape shape{128, 128, 720, 0, 2048, "wide"};
    LayoutRequest r;
    r.gpus = 14414400;
    try {
        candidate_layouts(r, shape, cluster);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "gpus");
        EXPECT_NE(std::string(e.what()).find("more than " + std::to_string(limits::plan_layouts) + " layouts"),
                  std::string::npos)
            << e.what();
    }
    // Fixing the dimensions the message names narrows it within the budget.
    r.tp = 8, r.pp = 10, r.zero = 1;
    auto layouts = candidate_layouts(r, shape, cluster);
    EXPECT_GT(layouts.size(), 0u);
    EXPECT_LE(std::int64_t(layouts.size()), limits::plan_layouts);
}

TEST(PlanSearch, BlocksThatDoNotDivideTheStagesAlsoTryFewerOnTheEnds) {
    // 126 blocks (Llama 3.1 405B) at pp 16: besides the first 14 stages taking 8, Megatron's split with 7 on
    // the first and last stage (112 = 14 x 8 between), and interleaved, vp 2, 8 and 6 (14 x 2 chunks of 4).
    Cluster cluster;
    cluster.gpus = cluster.gpus_per_node = cluster.scale_up_domain = 16;
    ModelShape shape{128, 8, 126, 0, 8192, "405b"};
    LayoutRequest r;
    r.gpus = 16, r.tp = 1, r.pp = 16, r.zero = 0, r.micro_batch = 1, r.grad_accum = 16, r.recompute = Recompute::none;
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> splits;
    for (const auto& l : candidate_layouts(r, shape, cluster))
        splits.insert({l.vp, l.first_stage_blocks, l.last_stage_blocks});
    using S = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
    EXPECT_EQ(splits, (std::set<S>{S{1, 0, 0}, S{1, 7, 7}, S{2, 8, 6}}));
    // 128 blocks divide: nothing more to try.
    shape.blocks = 128;
    splits.clear();
    for (const auto& l : candidate_layouts(r, shape, cluster))
        splits.insert({l.vp, l.first_stage_blocks, l.last_stage_blocks});
    EXPECT_EQ(splits, (std::set<S>{S{1, 0, 0}, S{2, 0, 0}, S{4, 0, 0}}));
}

TEST(PlanSearch, KeepsTheFastestLayoutsInTheirTieBreakingOrder) {
    // The alternatives are the runners-up by time per sample; each is at least as slow as the one before it.
    Fixture f(8);
    LayoutRequest r = f.request();
    r.global_batch = 32;
    PlanSearch s = search_plan(r, f.models, f.context, 6);
    ASSERT_GE(s.alternatives.size(), 3u);
    EXPECT_GE(s.timed, std::int64_t(s.alternatives.size()) + 1);
    double before = ms_per_sample(s.best);
    for (const auto& alt : s.alternatives) {
        if (!alt.fits) continue;
        EXPECT_GE(ms_per_sample(alt.step), before);
        before = ms_per_sample(alt.step);
    }
}


// Pruning by the lower bound changes no answer: the winner and the runners-up are those of timing every layout
// that fits, by time per sample, ties in candidate order. Memory set so that some layouts do not fit.
TEST(PlanSearch, PruningChangesNoAnswer) {
    for (auto [model, gpus, tokens] : {std::tuple{"gpt2", 8, 128}, std::tuple{"mixtral-8x7b", 16, 64}})
        for (double gbps : {1.0, 300.0}) {
            Fixture f(gpus, gbps, model, tokens);
            LayoutRequest r = f.request();
            r.global_batch = 4 * gpus;
            std::vector<ParallelLayout> layouts = candidate_layouts(r, f.models.shape(), f.cluster);
            std::vector<double> peaks;
            for (const auto& l : layouts) peaks.push_back(parallel_memory(l, f.models, f.context).memory.peak);
            std::vector<double> sorted = peaks;
            std::sort(sorted.begin(), sorted.end());
            f.hw.memory_gb = sorted[sorted.size() * 2 / 3] / 1e9;  // a third do not fit
            std::vector<std::pair<double, size_t>> all;
            for (size_t i = 0; i < layouts.size(); ++i)
                if (parallel_memory(layouts[i], f.models, f.context).memory.fits())
                    all.push_back({ms_per_sample(predict_parallel_step(layouts[i], f.models, f.context)), i});
            std::sort(all.begin(), all.end());  // by time per sample, then candidate order
            const size_t keep = 4;
            PlanSearch s = search_plan(r, f.models, f.context, keep);
            ASSERT_TRUE(s.fits);
            EXPECT_LT(s.timed, std::int64_t(all.size())) << model << " " << gbps;  // it did prune
            EXPECT_TRUE(s.best.layout == layouts[all[0].second]) << model << " " << gbps;
            EXPECT_EQ(ms_per_sample(s.best), all[0].first);
            size_t fitting_alternatives = 0;
            for (const auto& alt : s.alternatives) {
                if (!alt.fits) continue;
                ++fitting_alternatives;
                ASSERT_LT(fitting_alternatives, all.size());
                EXPECT_TRUE(alt.step.layout == layouts[all[fitting_alternatives].second]) << model << " " << gbps;
            }
            EXPECT_EQ(fitting_alternatives, std::min(keep, all.size() - 1));
        }
}

}  // namespace
}  // namespace prenet
