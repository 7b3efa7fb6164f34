#pragma once
// The parallel tests' common setting (parallel-plan_search-test.cpp, parallel-parallel_step-test.cpp).
#include <string>

#include "importers/resolve.hpp"
#include "parallel/parallel_step.hpp"
#include "run/optimizer.hpp"

namespace prenet::testing {

// GPT-2 small (or `model` at `tokens`) at 128 tokens on A100s joined by a link of `gbps`, timed by the roofline
// (no fitted models).
struct ParallelFixture {
    HardwareSpec hw = find_hardware("a100-sxm4-80gb");
    RooflinePredictor roofline;
    Cluster cluster;
    CollectiveModel collectives;
    ParallelContext context;
    StageModels models;

    explicit ParallelFixture(std::int64_t gpus, double gbps = 300, std::string model = "gpt2",
                             std::int64_t tokens = 128)
        : models([model](std::int64_t batch, std::int64_t seq) {
                     ModelInputs in;
                     in.batch = batch;
                     in.seq = seq;
                     return resolve_model(model, in);
                 },
                 tokens, Precision::bf16, MixedRecipe::autocast) {
        cluster.gpus = gpus;
        cluster.gpus_per_node = cluster.scale_up_domain = gpus;
        cluster.scale_up = {LinkKind::nvlink, gbps, "test link"};
        cluster.scale_out = {LinkKind::infiniband, gbps, "test network"};
        for (LinkKind k : {LinkKind::nvlink, LinkKind::infiniband}) collectives.links[k] = LinkFit{1.0, 1.0};
        context.hw = &hw;
        context.predictor = &roofline;
        context.cluster = &cluster;
        context.collectives = &collectives;
        context.step.precision = Precision::bf16;
        context.step.optimizer = &find_optimizer("adamw");
    }
    LayoutRequest request() const {
        LayoutRequest r;
        r.gpus = cluster.gpus;
        return r;
    }
};

}  // namespace prenet::testing
