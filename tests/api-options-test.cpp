// The option table (api/options.hpp): its rows are consistent, and each row's check accepts what its range
// allows and names the option in what it refuses.
#include "api/options.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "ops/finetune.hpp"

namespace prenet {
namespace {

using nlohmann::json;

TEST(OptionTable, NamesAreUniqueAndFlagsUniquePerCommand) {
    std::set<std::string> names;
    for (const auto& row : option_table()) EXPECT_TRUE(names.insert(row.name).second) << row.name;
    for (const auto& c : command_table()) {
        std::set<std::string> flags;
        for (const auto& row : option_table())
            if (!row.flag.empty() && row.takes(c.bit)) EXPECT_TRUE(flags.insert(row.flag).second) << c.name << " --" << row.flag;
    }
}

TEST(OptionTable, EveryRowIsUsableAndDocumented) {
    for (const auto& row : option_table()) {
        SCOPED_TRACE(row.name);
        EXPECT_NE(row.commands, 0u);
        EXPECT_FALSE(row.help.empty());
        EXPECT_TRUE(row.api || !row.flag.empty()) << "neither a request key nor a flag";
        EXPECT_TRUE(!row.echo || row.api) << "echoed but not a request key";
        // The page either offers it or says why not.
        EXPECT_NE(row.page.empty(), row.page_note.empty());
        if (row.page == "training") EXPECT_FALSE(row.label.empty());
        if (row.type == OptionType::choice) EXPECT_GE(row.choices.size(), 2u);
        for (const auto& [choice, label] : row.choice_labels) {  // labels only for choices that exist
            EXPECT_NE(std::find(row.choices.begin(), row.choices.end(), choice), row.choices.end()) << choice;
            EXPECT_FALSE(label.empty()) << choice;
        }
        if (row.type == OptionType::count || row.type == OptionType::number) EXPECT_LT(row.min, row.max);
        // A default is a value the option itself accepts.
        if (!row.default_value.is_null()) EXPECT_NO_THROW(check_option(row, row.default_value, row.name));
    }
}

// The adapter options' defaults are FineTune's, in words (ops-finetune-test pins PEFT's values).
TEST(OptionTable, AdapterDefaultsAreReadFromTheFineTuneStruct) {
    const FineTune peft;
    auto words = [](auto value) {
        std::ostringstream s;
        s << value;  // 8, not 8.000000
        return s.str() + " with lora or qlora (PEFT's default)";
    };
    EXPECT_EQ(find_option("lora_rank")->default_text, words(peft.rank));
    EXPECT_EQ(find_option("lora_alpha")->default_text, words(peft.alpha));
    EXPECT_EQ(find_option("lora_dropout")->default_text, words(peft.dropout));
    EXPECT_EQ(find_option("lora_targets")->default_text,
              targets_text(peft.targets) + " with lora or qlora (PEFT's default for Llama)");
}

TEST(OptionTable, FindsRowsByKeyAndByFlagPerCommand) {
    ASSERT_NE(find_option("grad_accum"), nullptr);
    EXPECT_EQ(find_option("grad_accum")->flag, "grad-accum");
    EXPECT_EQ(find_option("no_such_option"), nullptr);
    // --models means kernel models to predict with, and the output file to fit into.
    EXPECT_EQ(find_flag("models", kPredict)->name, "kernel_models");
    EXPECT_EQ(find_flag("models", kFit)->name, "models_out");
    EXPECT_EQ(find_flag("batch", kFit), nullptr);
}

Error refusal(const char* name, const json& value) {
    try {
        check_option(*find_option(name), value, std::string("'") + name + "'");
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << name << " accepted " << value.dump();
    return Error("");
}

TEST(CheckOption, CountsArePositiveWholeNumbersWithinTheirRange) {
    const OptionDef& batch = *find_option("batch");
    EXPECT_EQ(check_option(batch, 8.0, "b"), json(8));
    EXPECT_TRUE(check_option(batch, 8.0, "b").is_number_integer());
    for (json bad : {json(0), json(-1), json(1.5), json("8"), json(nullptr), json(1e30)}) {
        Error e = refusal("batch", bad);
        EXPECT_EQ(e.field(), "batch");
        EXPECT_EQ(e.code(), ErrorCode::invalid_value);
        EXPECT_NE(std::string(e.what()).find("'batch'"), std::string::npos) << e.what();
    }
    // Run lengths may be far beyond 2^53 as written (2e18 tokens would not be; 1e18 is the limit).
    EXPECT_EQ(check_option(*find_option("tokens"), 2e12, "t").get<std::int64_t>(), 2000000000000);
}

TEST(CheckOption, NumbersHonourAnExclusiveOrInclusiveMinimum) {
    EXPECT_EQ(check_option(*find_option("price_per_hour"), 0.0, "p"), json(0.0));  // free is a price
    refusal("input_samples_per_s", 0.0);                                         // a rate of 0 is not
    refusal("epochs", -1.0);
    refusal("price_per_hour", 2e6);
}

// Issue #27: a rate of 1e-300 samples per second gave a step of 10^303 ms; a rate has a plausible minimum.
TEST(CheckOption, RatesHaveAPlausibleMinimum) {
    EXPECT_EQ(check_option(*find_option("input_samples_per_s"), 1e-3, "r"), json(1e-3));
    Error e = refusal("input_samples_per_s", 1e-300);
    EXPECT_NE(std::string(e.what()).find("at least 0.001"), std::string::npos) << e.what();
}

// Issue #27: the network is read where the option is checked, so a bad one names the option as the user gave
// it (a tiny rate's message blamed the spec sheet), in a cluster document too.
TEST(CheckOption, TheNetworkIsReadAsItsOption) {
    const OptionDef& network = *find_option("network");
    EXPECT_EQ(check_option(network, "8x400g-ib", "--network"), json("8x400g-ib"));
    for (const char* bad : {"8x0.0000001g-ib", "-8x400g-ib", "8x9999999t-ib", "fast"}) {
        try {
            check_option(network, bad, "--network");
            ADD_FAILURE() << "accepted " << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.field(), "network") << bad;
            EXPECT_EQ(e.code(), ErrorCode::invalid_value) << bad;
            EXPECT_EQ(std::string(e.what()).rfind("--network '", 0), 0u) << e.what();
        }
    }
    try {
        RequestOptions({{"command", "predict"}, {"cluster", {{"gpus", 16}, {"network", "ib-0.0001g"}}}}, kPredict);
        FAIL() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "network");
        EXPECT_EQ(std::string(e.what()).rfind("cluster.network 'ib-0.0001g' is slower than any network", 0), 0u)
            << e.what();
    }
}

TEST(CheckOption, ChoicesListWhatIsAccepted) {
    EXPECT_EQ(check_option(*find_option("precision"), "bf16", "p"), json("bf16"));
    Error e = refusal("precision", "fp64");
    EXPECT_NE(std::string(e.what()).find("fp32, tf32, fp16, bf16 or fp8"), std::string::npos) << e.what();
    refusal("checkpointing", "yes");
}

TEST(RequestOptions, RejectsKeysTheCommandDoesNotTake) {
    try {
        RequestOptions({{"command", "predict"}, {"bacth", 2}}, kPredict);
        FAIL() << "accepted an unknown key";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::unknown_option);
        EXPECT_EQ(e.field(), "bacth");
    }
    // An optimizer means nothing to `features`; fit's paths are no request keys.
    EXPECT_THROW(RequestOptions({{"optimizer", "sgd"}}, kFeatures), Error);
    EXPECT_THROW(RequestOptions({{"models_out", "x.json"}}, kPredict), Error);
}

TEST(RequestOptions, AbsentAndNullReadAsTheDefault) {
    RequestOptions o({{"command", "predict"}, {"grad_accum", nullptr}, {"batch", 4}}, kPredict);
    EXPECT_FALSE(o.has("grad_accum"));
    EXPECT_EQ(o.count("grad_accum"), 1);
    EXPECT_EQ(o.count("batch"), 4);
    EXPECT_EQ(o.text("optimizer"), "adamw");
    EXPECT_FALSE(o.flag("checkpointing"));
    EXPECT_TRUE(o.value("seq").is_null());  // the model's own
}

// PyTorch's SDPA and Hugging Face transformers' default `sdpa` run fused attention: flash is the default,
// eager stays available, and a default is not an explicit ask (a config's attn_implementation wins over it).
TEST(RequestOptions, AttentionDefaultsToFlash) {
    RequestOptions o({{"command", "predict"}}, kPredict);
    EXPECT_EQ(o.text("attention"), "flash");
    EXPECT_FALSE(o.has("attention"));
    RequestOptions eager({{"command", "predict"}, {"attention", "eager"}}, kPredict);
    EXPECT_EQ(eager.text("attention"), "eager");
    EXPECT_TRUE(eager.has("attention"));
}

TEST(EchoSettings, TakesEachEchoedRowFromTheResolvedValues) {
    json resolved = json::object();
    for (const auto& row : option_table())
        if (row.echo && row.takes(kFeatures)) resolved[row.name] = row.name;
    json echo = echo_settings(resolved, {{"flops_convention", "x"}}, kFeatures);
    EXPECT_EQ(echo["batch"], "batch");
    EXPECT_EQ(echo["flops_convention"], "x");
    EXPECT_FALSE(echo.contains("optimizer"));  // not a features option
    resolved.erase("batch");
    EXPECT_THROW(echo_settings(resolved, json::object(), kFeatures), Error);  // a row without a value is a bug
    resolved["batch"] = 1;
    EXPECT_THROW(echo_settings(resolved, {{"seq", 3}}, kFeatures), Error);  // an option passed as derived
}

TEST(OptionsJson, ServesEveryRowWithItsFlagSpelledAsTyped) {
    json doc = options_json();
    ASSERT_EQ(doc["options"].size(), option_table().size());
    for (const auto& row : doc["options"]) {
        if (row["name"] == "grad_accum") {
            EXPECT_EQ(row["flag"], "--grad-accum");
            EXPECT_EQ(row["type"], "count");
            EXPECT_EQ(row["url"], "accum");
            EXPECT_EQ(row["commands"], json::array({"predict"}));
        }
        if (row["name"] == "custom_hardware") EXPECT_TRUE(row["flag"].is_null());
    }
}

TEST(OptionsJson, ServesTheDocumentLimitsThePageChecksFilesAndLinksAgainst) {
    json limits_doc = options_json()["limits"];
    EXPECT_EQ(limits_doc["json_depth"], limits::json_depth);
    EXPECT_EQ(limits_doc["document_bytes"], limits::document_bytes);
    EXPECT_EQ(limits_doc["layers"], limits::layers);
    EXPECT_EQ(limits_doc["dimension"], limits::dimension);
}

// What makes a cluster question is each row's cluster_question, which the page reads too: one device is not.
TEST(AsksCluster, ReadsEachRowsRule) {
    const OptionDef& gpus = *find_option("gpus");
    EXPECT_FALSE(asks_cluster(gpus, 1));
    EXPECT_TRUE(asks_cluster(gpus, 2));
    EXPECT_TRUE(asks_cluster(*find_option("gpus_per_node"), 4));
    EXPECT_TRUE(asks_cluster(*find_option("sequence_parallel"), false));  // given is given
    const OptionDef& ckpt = *find_option("checkpointing");
    EXPECT_TRUE(asks_cluster(ckpt, "selective"));
    EXPECT_FALSE(asks_cluster(ckpt, "full"));
    EXPECT_FALSE(asks_cluster(ckpt, true));
    EXPECT_FALSE(asks_cluster(*find_option("batch"), 8));
    // Every key a cluster document may hold asks one.
    for (const auto& row : option_table())
        if (row.may_be_in_cluster_document) EXPECT_FALSE(row.cluster_question.is_null()) << row.name;
}

// A row's applies_with: refused elsewhere, in words that name the option and its value.
TEST(CheckApplies, RefusesARowWhereItDoesNotApply) {
    const OptionDef& rank = *find_option("lora_rank");
    EXPECT_NO_THROW(check_applies(rank, RequestOptions({{"finetune", "qlora"}, {"lora_rank", 8}}, kPredict)));
    EXPECT_NO_THROW(check_applies(rank, RequestOptions(json::object(), kPredict)));
    try {
        check_applies(rank, RequestOptions({{"lora_rank", 8}}, kPredict));
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "'lora_rank' applies to --finetune lora or qlora (the mode is none)");
        EXPECT_EQ(e.field(), "lora_rank");
        EXPECT_EQ(e.code(), ErrorCode::conflict);
    }
}

// The options reply serves the rules the page reads: applicability, cluster questions, the layout's rows.
TEST(OptionsJson, ServesTheRulesThePageReads) {
    const json reply = options_json();
    std::map<std::string, json> rows;
    for (const auto& r : reply["options"]) rows[r["name"].get<std::string>()] = r;
    EXPECT_EQ(rows["lora_rank"]["applies_with"], json({{"finetune", {"lora", "qlora"}}}));
    EXPECT_EQ(rows["mixed"]["choice_with"]["precision"], json({"fp16", "bf16"}));
    EXPECT_EQ(rows["gpus"]["cluster_question"], json({{"above", 1}}));
    EXPECT_EQ(rows["checkpointing"]["cluster_question"], json({{"is", "selective"}}));
    EXPECT_TRUE(rows["batch"]["cluster_question"].is_null());
    std::set<std::string> layout;
    for (const auto& [name, r] : rows)
        if (r["layout"] == true) layout.insert(name);
    EXPECT_EQ(layout, (std::set<std::string>{"dp", "tp", "pp", "cp", "ep", "vp", "first_stage_blocks",
                                             "last_stage_blocks", "zero", "sequence_parallel", "schedule"}));
    // Every condition names a row and values it takes.
    for (const auto& row : option_table())
        for (const auto* conditions : {&row.applies_with, &row.choice_with})
            for (const auto& [option, values] : *conditions) {
                const OptionDef* other = find_option(option);
                ASSERT_NE(other, nullptr) << row.name << ": " << option;
                for (const auto& v : values)
                    EXPECT_NE(std::find(other->choices.begin(), other->choices.end(), v), other->choices.end()) << v;
            }
}

}  // namespace
}  // namespace prenet
