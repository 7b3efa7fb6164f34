// Settings (api/settings.hpp): the table's values in the core's types, the cross-option rules, the budget a
// model trains on, and the echo.
#include "api/settings.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "importers/resolve.hpp"

namespace prenet {
namespace {

using nlohmann::json;

Settings settings(json request) { return read_settings(RequestOptions(request, kPredict)); }

bool accepts(json request) {
    try {
        settings(request);
        return true;
    } catch (const Error&) {
        return false;
    }
}

ErrorCode code_of(json request) {
    try {
        settings(request);
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "accepted " << request.dump();
    return ErrorCode::internal;
}

TEST(ReadSettings, DefaultsComeFromTheTable) {
    Settings s = settings(json::object());
    EXPECT_EQ(s.inputs.batch, 1);
    EXPECT_EQ(s.inputs.seq, 0);  // the model's own
    EXPECT_EQ(s.precision, Precision::fp32);
    EXPECT_EQ(s.optimizer, "adamw");
    EXPECT_EQ(s.optimizer_impl, OptimizerImpl::fused);
    EXPECT_EQ(s.grad_accum, 1);
    EXPECT_LT(s.price_per_hour, 0);  // each sheet's own
    EXPECT_FALSE(s.run.given());
}

TEST(ReadSettings, TheLossIsTheFrameworksUnlessAsked) {
    EXPECT_EQ(settings(json::object()).loss, LossMode::full);
    EXPECT_EQ(settings({{"framework", "megatron"}}).loss, LossMode::inplace);
    EXPECT_EQ(settings({{"framework", "fsdp"}}).loss, LossMode::full);
    EXPECT_EQ(settings({{"framework", "megatron"}, {"loss", "full"}}).loss, LossMode::full);
    EXPECT_EQ(settings({{"loss", "inplace"}}).loss, LossMode::inplace);
}

TEST(ReadSettings, TheMixedRecipeFollowsThePrecision) {
    EXPECT_EQ(settings({{"precision", "bf16"}}).mixed, MixedRecipe::autocast);
    EXPECT_EQ(settings({{"precision", "fp8"}}).mixed, MixedRecipe::half_model);  // fp8 is a bf16 model
    EXPECT_EQ(settings({{"precision", "fp16"}, {"mixed", "half"}}).mixed, MixedRecipe::half_model);
    EXPECT_EQ(code_of({{"precision", "tf32"}, {"mixed", "half"}}), ErrorCode::conflict);
    EXPECT_EQ(code_of({{"precision", "fp8"}, {"mixed", "autocast"}}), ErrorCode::conflict);
}

// A row's choice_with (the page offers the row only there) agrees with the value rules here: where it holds every
// choice is accepted; elsewhere at most one value is (the one the other options fix), so hiding it loses none.
TEST(ReadSettings, ARowIsAChoiceExactlyWhereItsChoiceWithSays) {
    int checked = 0;
    for (const auto& row : option_table()) {
        if (row.choice_with.empty()) continue;
        std::vector<json> combos = {json::object()};
        for (const auto& [option, values] : row.choice_with) {
            std::vector<json> more;
            for (const auto& c : combos)
                for (const auto& v : find_option(option)->choices) {
                    more.push_back(c);
                    more.back()[option] = v;
                }
            combos = more;
        }
        for (const auto& combo : combos) {
            bool holds = true;
            for (const auto& [option, values] : row.choice_with)
                holds = holds && std::find(values.begin(), values.end(), combo[option].get<std::string>()) != values.end();
            size_t accepted = 0;
            for (const auto& choice : row.choices) {
                json request = combo;
                request[row.name] = choice;
                bool ok = accepts(request);
                accepted += ok;
                if (holds) EXPECT_TRUE(ok) << row.name << " " << choice << " with " << combo.dump();
            }
            if (!holds) EXPECT_LE(accepted, 1u) << row.name << " with " << combo.dump();
            ++checked;
        }
    }
    EXPECT_GT(checked, 10);
}

TEST(ReadSettings, RulesAcrossOptions) {
    EXPECT_EQ(code_of({{"epochs", 2}}), ErrorCode::conflict);  // epochs of what?
    EXPECT_EQ(code_of({{"batch", 1e12}, {"grad_accum", 1e9}}), ErrorCode::invalid_value);  // global batch overflows
    EXPECT_EQ(settings({{"price_per_hour", 0}}).price_per_hour, 0.0);  // free is a price
}

TEST(ResolveBudget, EachModelTrainsOnTheBudgetItCountsIn) {
    Model lm = resolve_model("gpt2", ModelInputs{}), cnn = resolve_model("resnet18", ModelInputs{});
    Settings both = settings({{"tokens", 1e9}, {"samples", 1000}, {"epochs", 3}});
    Settings a = both, b = both;
    resolve_budget(a, lm);
    EXPECT_EQ(a.run.tokens, 1e9);
    EXPECT_EQ(a.run.samples, 0);
    EXPECT_EQ(a.run.epochs, 0);
    resolve_budget(b, cnn);
    EXPECT_EQ(b.run.tokens, 0);
    EXPECT_EQ(b.run.samples, 1000);
    EXPECT_EQ(b.run.epochs, 3);
    Settings tokens_only = settings({{"tokens", 1e9}});
    try {
        resolve_budget(tokens_only, cnn);
        FAIL() << "a token budget for a model without tokens";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "tokens");
    }
    Settings samples_only = settings({{"samples", 1000}});
    resolve_budget(samples_only, lm);  // a language model may count samples (sequences)
    EXPECT_EQ(samples_only.run.samples, 1000);
}

TEST(SettingsJson, EchoesTheValuesUsedForTheCommand) {
    Model lm = resolve_model("gpt2", ModelInputs{});
    Settings s = settings({{"precision", "bf16"}, {"grad_accum", 4}, {"batch", 2}});
    json predict = settings_json(s, lm, kPredict);
    EXPECT_EQ(predict["seq"], lm.tokens_per_sample);  // the model's, not the request's absence
    EXPECT_EQ(predict["mixed"], "autocast");
    EXPECT_EQ(predict["mixed_words"], find_option("mixed")->choice_labels.at("autocast"));
    // A LoRA base runs as a half model (the request's context applies it), the frozen base in half precision.
    Settings adapters = settings({{"precision", "bf16"}, {"finetune", "lora"}});
    adapters.mixed = effective_mixed_recipe(adapters.precision, adapters.mixed, adapters.finetune.adapters());
    json lora = settings_json(adapters, lm, kPredict);
    EXPECT_EQ(lora["mixed"], "half");
    EXPECT_EQ(lora["mixed_words"], "the frozen base in half precision");
    EXPECT_TRUE(settings_json(settings({{"precision", "fp8"}}), lm, kPredict)["mixed_words"].is_null());
    EXPECT_TRUE(settings_json(settings({{"precision", "fp32"}}), lm, kPredict)["mixed_words"].is_null());
    EXPECT_EQ(predict["global_batch"], 8);
    EXPECT_TRUE(predict["image"].is_null());
    json features = settings_json(s, lm, kFeatures);
    EXPECT_FALSE(features.contains("optimizer"));
    EXPECT_FALSE(features.contains("global_batch"));
    EXPECT_EQ(features["precision"], "bf16");
}

}  // namespace
}  // namespace prenet

namespace prenet {
namespace {

// The field a request's error names.
std::string field_of(json request) {
    try {
        settings(request);
    } catch (const Error& e) {
        return e.field();
    }
    ADD_FAILURE() << "accepted " << request.dump();
    return "";
}

TEST(ReadSettings, FrameworkAutoTakesEachAcceleratorsUsualOne) {
    Settings s = settings(json::object());
    EXPECT_TRUE(s.framework_auto);
    EXPECT_EQ(s.framework.name, "generic");
    Settings tpu = settings_on_device(s, "tpu");
    EXPECT_EQ(tpu.framework.name, "xla");
    EXPECT_TRUE(tpu.compile);  // XLA compiles the whole program
    EXPECT_EQ(settings_on_device(s, "hpu").framework.name, "graph");
    Settings gpu = settings_on_device(s, "gpu");
    EXPECT_EQ(gpu.framework.name, "generic");
    EXPECT_FALSE(gpu.compile);
    // A named framework is every accelerator's.
    Settings asked = settings({{"framework", "fsdp"}});
    EXPECT_FALSE(asked.framework_auto);
    EXPECT_EQ(settings_on_device(asked, "tpu").framework.name, "fsdp");
    EXPECT_FALSE(settings_on_device(asked, "tpu").compile);
    EXPECT_EQ(field_of({{"framework", "jax"}}), "framework");
}

TEST(ReadSettings, FineTuningOptionsAndTheirRules) {
    Settings s = settings({{"finetune", "qlora"}, {"lora_rank", 16}, {"lora_targets", "all"}});
    EXPECT_EQ(s.finetune.mode, FineTuneMode::qlora);
    EXPECT_EQ(s.finetune.rank, 16);
    EXPECT_EQ(s.finetune.quantization, Quantization::nf4);
    EXPECT_EQ(s.finetune.targets, lora_target_names());  // all: every target, Mamba's too
    EXPECT_EQ(settings({{"finetune", "freeze"}}).finetune.freeze.size(), 1u);  // the embeddings by default
    EXPECT_EQ(settings({{"finetune", "lora"}, {"quantization", "int8"}}).finetune.quantization, Quantization::int8);
    // Each bad combination is an error naming its field, never silently ignored.
    EXPECT_EQ(field_of({{"lora_rank", 16}}), "lora_rank");
    EXPECT_EQ(field_of({{"finetune", "full"}, {"lora_alpha", 16}}), "lora_alpha");
    EXPECT_EQ(field_of({{"finetune", "freeze"}, {"lora_targets", "q"}}), "lora_targets");
    EXPECT_EQ(field_of({{"finetune", "lora"}, {"lora_dropout", 1}}), "lora_dropout");
    EXPECT_EQ(field_of({{"finetune", "full"}, {"quantization", "nf4"}}), "quantization");
    EXPECT_EQ(field_of({{"quantization", "int8"}}), "quantization");
    EXPECT_EQ(field_of({{"finetune", "qlora"}, {"quantization", "int8"}}), "quantization");
    EXPECT_EQ(field_of({{"finetune", "lora"}, {"freeze", "embeddings"}}), "freeze");
    EXPECT_EQ(field_of({{"finetune", "lora"}, {"lora_targets", "q,lm_head"}}), "lora_targets");
    EXPECT_EQ(field_of({{"finetune", "lora"}, {"precision", "bf16"}, {"mixed", "autocast"}}), "mixed");
    EXPECT_EQ(field_of({{"finetune", "lora"}, {"gpus", 2}}), "finetune");
    EXPECT_EQ(code_of({{"finetune", "lora"}, {"gpus", 2}}), ErrorCode::conflict);
    EXPECT_NO_THROW(settings({{"finetune", "full"}, {"gpus", 2}}));  // full fine-tuning is full training
    // A global batch is a cluster question's (the option table says so, and the page then neither shows nor sends
    // it with LoRA: its language-model preset's million-token batch refused every LoRA fine-tune of an upload).
    EXPECT_EQ(field_of({{"finetune", "qlora"}, {"global_batch_tokens", 1048576}}), "global_batch_tokens");
    EXPECT_EQ(field_of({{"finetune", "freeze"}, {"global_batch", 64}}), "global_batch");
    EXPECT_NO_THROW(settings({{"finetune", "full"}, {"global_batch", 64}}));
}

}  // namespace
}  // namespace prenet
