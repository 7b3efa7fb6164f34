// The step plan (api/request_context.hpp): what a request means before any accelerator is looked at.
#include "api/request_context.hpp"

#include <gtest/gtest.h>

#include <set>

#include "api/settings.hpp"
#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

using nlohmann::json;

RequestContext plan(const json& model, json request) {
    return make_request_context(model, json(), read_settings(RequestOptions(request, kPredict)));
}

TEST(RequestContext, ThePeakIsTheMemoryEstimateWithoutAnAccelerator) {
    json model = "gpt2";
    RequestContext p = plan(model, {{"batch", 4}, {"precision", "bf16"}});
    EXPECT_EQ(p.memory_use.capacity, 0);
    MemoryUse on_t4 = estimate_memory(p.features, find_hardware("t4"), p.memory);
    EXPECT_EQ(p.memory_use.peak, on_t4.peak);
    EXPECT_EQ(with_capacity(p.memory_use, find_hardware("t4")).capacity, find_hardware("t4").memory_bytes());
}

TEST(RequestContext, PeakAtAnotherBatchKeepsTheGlobalBatch) {
    json model = "gpt2";
    RequestContext p = plan(model, {{"batch", 8}, {"grad_accum", 2}});
    EXPECT_EQ(p.global_batch, 16);
    EXPECT_EQ(p.peak_at(8, false), p.memory_use.peak);  // the plan's own setting, cached
    double smaller = p.peak_at(2, false);
    EXPECT_LT(smaller, p.memory_use.peak);
    // The same as planning batch 2 with 8 micro-batches outright.
    EXPECT_EQ(smaller, plan(model, {{"batch", 2}, {"grad_accum", 8}}).memory_use.peak);
    EXPECT_LT(p.peak_at(8, true), p.memory_use.peak);  // checkpointing
}

TEST(RequestContext, AChangeIsTheRequestAskedWithIt) {
    json model = "gpt2";
    RequestContext p = plan(model, {{"batch", 8}, {"grad_accum", 2}, {"precision", "bf16"}});
    // The request's own settings, however asked, are the one remembered estimate.
    EXPECT_EQ(&p.memory_with({}), &p.memory_with(p.settings_with({})));
    EXPECT_EQ(p.memory_with({}).peak, p.memory_use.peak);
    // Full checkpointing and chunked loss at micro-batch 4 x 4: the same as planning that outright.
    SettingsChange c;
    c.checkpointing = CheckpointKind::full, c.loss = LossMode::chunked, c.batch = 4, c.grad_accum = 4;
    RequestContext asked = plan(model, {{"batch", 4}, {"grad_accum", 4}, {"precision", "bf16"},
                                        {"checkpointing", "full"}, {"loss", "chunked"}});
    EXPECT_EQ(p.memory_with(c).peak, asked.memory_use.peak);
    EXPECT_EQ(p.memory_with(c).peak_reserved, asked.memory_use.peak_reserved);
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    EXPECT_EQ(p.step_with(c, h100, *p.predictor).total_ms(),
              predict_step(asked.features, h100, *asked.predictor, asked.step).total_ms());
}

// --attention flash1 reaches every fused attention layer whichever importer built it (a zoo transformer, a
// layers-JSON file), and the settings echo it; flash leaves the default generation.
TEST(RequestContext, FlashOneMarksEveryFusedAttentionLayer) {
    auto generations = [](const Model& m) {
        std::set<int> g;
        for (const auto& block : m.blocks)
            for (const auto& layer : block.layers)
                if (layer.attrs.value("flash", false)) g.insert(layer.attrs.value("flash_generation", 2));
        return g;
    };
    json layers = testing::source_json("examples/tiny-transformer.json");
    for (const json& model : {json("gpt2"), layers}) {
        RequestContext first = plan(model, {{"attention", "flash1"}, {"precision", "bf16"}});
        EXPECT_EQ(generations(first.model), std::set<int>{1}) << model.dump();
        EXPECT_EQ(settings_json(first.settings, first.model, kPredict)["attention"], "flash1") << model.dump();
        RequestContext second = plan(model, {{"attention", "flash"}, {"precision", "bf16"}});
        EXPECT_EQ(generations(second.model), std::set<int>{2}) << model.dump();
        EXPECT_EQ(settings_json(second.settings, second.model, kPredict)["attention"], "flash") << model.dump();
    }
}

TEST(RequestContext, ModelErrorsNameTheModelField) {
    json bad = "no-such-model";
    try {
        plan(bad, json::object());
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "model");
        EXPECT_EQ(e.code(), ErrorCode::invalid_model);
    }
}

TEST(RequestContext, TheRunAndTheImageSizeAreResolved) {
    json cnn = "resnet18";
    RequestContext p = plan(cnn, {{"samples", 1000}, {"tokens", 5e9}, {"batch", 10}});
    ASSERT_TRUE(p.run.has_value());
    EXPECT_EQ(p.run->steps, 100);
    EXPECT_EQ(p.settings.run.tokens, 0);
    EXPECT_EQ(p.settings.inputs.image, 224);  // the size the model was built at
}

TEST(RequestContext, ALoraBaseRunsAsAHalfModelAndAdviceProposesTheAdvisedRank) {
    json model = "gpt2";
    RequestContext lora = plan(model, {{"precision", "bf16"}, {"finetune", "lora"}, {"lora_rank", 4}});
    EXPECT_EQ(lora.settings.mixed, MixedRecipe::half_model);
    EXPECT_EQ(plan(model, {{"precision", "bf16"}}).settings.mixed, MixedRecipe::autocast);
    // A request with adapters keeps its rank in the advice; one without gets the advised rank.
    for (const auto& o : lora.finetune_options()) EXPECT_EQ(o.rank, 4) << o.words;
    RequestContext full = plan(model, {{"precision", "bf16"}, {"finetune", "full"}});
    ASSERT_FALSE(full.finetune_options().empty());
    for (const auto& o : full.finetune_options()) {
        EXPECT_EQ(o.rank, advised_lora_rank) << o.words;
        EXPECT_NE(o.flags.find("--lora-rank " + std::to_string(advised_lora_rank)), std::string::npos) << o.flags;
    }
}

}  // namespace
}  // namespace prenet
