// The API contract (api/api.hpp) through handle_request, as the CLI and the page call it: every option of
// the table is accepted and echoed, errors are data naming their field, the run budget is resolved per model,
// and the memory peak does not depend on the accelerator.
#include "api/api.hpp"

#include <gtest/gtest.h>

#include <map>

#include "api/options.hpp"
#include "predict/learned.hpp"
#include "test-helpers.hpp"

namespace prenet {
namespace {

using nlohmann::json;

json predict(json request) {
    request["command"] = "predict";
    if (!request.contains("hardware")) request["hardware"] = "t4";
    return handle_request(request);
}

void expect_error(const json& reply, const std::string& code, const json& field) {
    ASSERT_TRUE(reply.contains("error")) << reply.dump().substr(0, 300);
    const json& e = reply["error"];
    EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty());
    EXPECT_EQ(e["code"], code) << e.dump();
    EXPECT_EQ(e["field"], field) << e.dump();
}

// The value worth trying for some rows and the flags it needs beside it, as the CLI contract test gives them
// (tests/fixtures/option-examples.json); the rows not there have neither.
const json& example_rows() {
    static const json rows = testing::source_json("tests/fixtures/option-examples.json").at("rows");
    return rows;
}
struct RowExample {
    std::string value;
    std::vector<std::string> with;
};
RowExample example_of(const OptionDef& row) {
    if (!example_rows().contains(row.name)) return {};
    const json& e = example_rows()[row.name];
    return {e.value("value", ""), e.value("with", std::vector<std::string>{})};
}

// The flags a row's example needs beside it (`--finetune lora` for a LoRA rank), except the many-device rows',
// which this single-device check gives alone.
bool needs_its_example(const RowExample& e) { return !e.with.empty() && e.with[0] != "--gpus"; }

// A value a row accepts that differs from its default, made from the row alone (its example when it needs one).
std::vector<json> examples(const OptionDef& row) {
    RowExample e = example_of(row);
    if (needs_its_example(e) && !e.value.empty()) {
        if (row.type == OptionType::count) return {json(std::stoll(e.value))};
        if (row.type == OptionType::number) return {json(std::stod(e.value))};
        return {json(e.value)};
    }
    switch (row.type) {
        case OptionType::count: return {json(64)};
        case OptionType::number: return {json(row.min + (row.min_exclusive ? 1.0 : 1.5))};
        case OptionType::flag: return {json(true)};
        case OptionType::choice: return std::vector<json>(row.choices.begin(), row.choices.end());
        default: return {};
    }
}

// Every echoed predict option, with each value its row allows, is accepted and reported as used, for a
// language model or a vision model (seq applies to one, image to the other). The base request runs bf16
// (which the mixed recipe needs) with a sample budget (which epochs need).
TEST(ApiContract, EveryEchoedOptionIsAcceptedAndEchoed) {
    int checked = 0;
    for (const auto& row : option_table()) {
        if (!row.api || !row.echo || !row.takes(kPredict)) continue;
        for (const json& value : examples(row)) {
            SCOPED_TRACE(row.name + " = " + value.dump());
            bool echoed = false;
            const RowExample e = example_of(row);
            for (const char* model : {"gpt2", "resnet18"}) {
                json request = {{"model", model}, {"precision", "bf16"}, {"samples", 1000}};
                // The flags the row's example needs beside it, as the CLI contract test gives them.
                for (size_t i = 0; needs_its_example(e) && i + 1 < e.with.size(); i += 2) {
                    const OptionDef* with = find_flag(e.with[i].substr(2), kPredict);
                    ASSERT_NE(with, nullptr) << e.with[i];
                    request[with->name] = check_option(*with, with->type == OptionType::count
                                                                  ? json(std::stoll(e.with[i + 1]))
                                                                  : json(e.with[i + 1]), with->name);
                }
                request[row.name] = value;
                json reply = predict(request);
                ASSERT_FALSE(reply.contains("error")) << reply.dump().substr(0, 300);
                echoed = echoed || reply["settings"][row.name] == value;
            }
            EXPECT_TRUE(echoed);
            ++checked;
        }
    }
    EXPECT_GE(checked, 20);
}

// The examples stay those of the table: each names a predict row, and the flags beside it are predict flags.
TEST(ApiContract, EveryOptionExampleNamesARow) {
    ASSERT_GE(example_rows().size(), 10u);
    for (const auto& item : example_rows().items()) {
        const std::string& name = item.key();
        const OptionDef* row = find_option(name);
        ASSERT_NE(row, nullptr) << name;
        EXPECT_TRUE(row->takes(kPredict)) << name;
        for (const std::string& w : example_of(*row).with) {
            if (w.rfind("--", 0) == 0) EXPECT_NE(find_flag(w.substr(2), kPredict), nullptr) << name << ": " << w;
        }
    }
}

TEST(ApiContract, FeaturesEchoesItsOwnOptionsOnly) {
    json reply = handle_request({{"command", "features"}, {"model", "gpt2"}, {"batch", 2}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    for (const auto& row : option_table())
        EXPECT_EQ(reply["settings"].contains(row.name), row.echo && row.takes(kFeatures)) << row.name;
    expect_error(handle_request({{"command", "features"}, {"model", "gpt2"}, {"optimizer", "sgd"}}), "unknown_option",
                 "optimizer");
}

TEST(ApiContract, ErrorsNameTheirField) {
    expect_error(predict({{"model", "gpt2"}, {"batch", 0}}), "invalid_value", "batch");
    expect_error(predict({{"model", "gpt2"}, {"grad_accum", "4"}}), "invalid_value", "grad_accum");
    expect_error(predict({{"model", "gpt2"}, {"precision", "fp64"}}), "invalid_value", "precision");
    expect_error(predict({{"model", "gpt2"}, {"frobnicate", 1}}), "unknown_option", "frobnicate");
    expect_error(predict({{"batch", 2}}), "missing", "model");
    expect_error(predict({{"model", "no-such-model"}}), "invalid_model", "model");
    expect_error(predict({{"model", {{"layers", json::array({{{"type", "warp_drive"}}})}}}}), "invalid_model", "model");
    expect_error(predict({{"model", "gpt2"}, {"hardware", "no-such-gpu"}}), "invalid_hardware", "hardware");
    expect_error(predict({{"model", "gpt2"}, {"hardware", json::array()}}), "missing", "hardware");
    expect_error(predict({{"model", "gpt2"}, {"custom_hardware", json::array({{{"id", "x"}}})}}), "invalid_hardware",
                 "custom_hardware");
    expect_error(predict({{"model", "gpt2"}, {"mixed", "half"}}), "conflict", "mixed");  // fp32 has no recipe
    expect_error(predict({{"model", "gpt2"}, {"epochs", 2}}), "conflict", "epochs");
    expect_error(predict({{"model", "resnet18"}, {"tokens", 1e9}}), "conflict", "tokens");
    expect_error(predict({{"model", "gpt2"}, {"batch", 1e12}, {"grad_accum", 1e9}}), "invalid_value", "grad_accum");
    expect_error(handle_request({{"command", "zoo"}, {"batch", 2}}), "unknown_option", "batch");
    expect_error(handle_request({{"command", "nope"}}), "unknown_command", "command");
    expect_error(handle_request(json::array()), "bad_request", nullptr);
    EXPECT_EQ(json::parse(handle_request_text("{"))["error"]["code"], "bad_request");
}

// A model that builds at one sample and its own length but not at the request's is too large at that input:
// the error is the batch's or the sequence length's (the page marks that field), not the model's.
TEST(ApiContract, AnInputTooLargeForTheModelIsThatInputsError) {
    json reply = predict({{"model", "gpt2"}, {"batch", 1e9}});
    expect_error(reply, "invalid_value", "batch");
    EXPECT_NE(reply["error"]["message"].get<std::string>().find("'batch' 1000000000 is too large for this model"),
              std::string::npos);
    expect_error(predict({{"model", "gpt2"}, {"seq", 1e7}}), "invalid_value", "seq");
    expect_error(handle_request({{"command", "features"}, {"model", "gpt2"}, {"seq", 1e7}}), "invalid_value", "seq");
    // The model's own fault stays the model's, whatever the batch.
    json doc = json::parse(R"({"name": "x", "input": {"shape": [8]}, "layers": [{"type": "linear", "out_features": 0}]})");
    expect_error(predict({{"model", doc}, {"batch", 4}}), "invalid_model", "model");
}

// Attention's kernel is reported for models with attention only: a GRU or a CNN has none to run.
TEST(ApiContract, AttentionIsReportedOnlyForModelsWithIt) {
    EXPECT_EQ(predict({{"model", "gpt2"}})["settings"]["attention"], "flash");
    EXPECT_TRUE(predict({{"model", "lstm-lm"}})["settings"]["attention"].is_null());
    EXPECT_TRUE(predict({{"model", "resnet18"}})["settings"]["attention"].is_null());
}

// On a cluster question the micro-batch is searched unless given: the options reply says so, for the page.
TEST(ApiContract, TheMicroBatchIsSearchedOnAClusterQuestion) {
    const OptionDef* batch = find_option("batch");
    ASSERT_NE(batch, nullptr);
    EXPECT_FALSE(batch->cluster_default_text.empty());
    json rows = handle_request({{"command", "options"}})["options"];
    for (const auto& row : rows)
        EXPECT_EQ(row["cluster_default_text"].is_string(), row["name"] == "batch") << row["name"];
}

TEST(ApiContract, ALayersJsonErrorSaysWhichLayerAndAttribute) {
    json doc = json::parse(R"({"name": "x", "input": {"shape": [8]}, "layers": [{"type": "linear", "out_features": 4},
        {"type": "repeat", "count": 2, "layers": [{"type": "linear", "name": "fc", "out_features": 0}]}]})");
    json reply = predict({{"model", doc}});
    expect_error(reply, "invalid_model", "model");
    EXPECT_EQ(reply["error"]["path"], "layers[1][0]");
    EXPECT_EQ(reply["error"]["attr"], "out_features");
    doc["layers"][1]["count"] = 0;
    reply = predict({{"model", doc}});
    EXPECT_EQ(reply["error"]["path"], "layers[1]");
    EXPECT_TRUE(reply["error"]["attr"].is_null());
    // Outside a document there is no location.
    EXPECT_TRUE(predict({{"model", "gpt2"}, {"batch", 0}})["error"]["path"].is_null());
}

TEST(ApiContract, AbsurdSheetsAreErrorsOfTheHardware) {
    // Denormal peaks and bandwidth would make a step take forever: refused by the plausible ranges (docs/limits.md)
    // before any arithmetic (a non-finite prediction is still an error: DeviceResult's test).
    json sheet = json::parse(R"({"id": "absurd", "peak_tflops": {"fp32": 1e-320},
                                 "memory": {"capacity_gb": 16, "bandwidth_gbps": 1e-320}})");
    expect_error(predict({{"model", "gpt2"}, {"hardware", sheet}}), "invalid_hardware", "hardware");
}

TEST(ApiContract, TheBudgetIsTheOneTheModelCountsIn) {
    json both = {{"tokens", 1e9}, {"samples", 5000}, {"epochs", 2}};
    json lm_request = both, cnn_request = both;
    lm_request["model"] = "gpt2";
    cnn_request["model"] = "resnet18";
    json lm = predict(lm_request);
    ASSERT_FALSE(lm.contains("error")) << lm.dump();
    EXPECT_EQ(lm["settings"]["tokens"], 1e9);
    EXPECT_TRUE(lm["settings"]["samples"].is_null());
    json cnn = predict(cnn_request);
    ASSERT_FALSE(cnn.contains("error")) << cnn.dump();
    EXPECT_TRUE(cnn["settings"]["tokens"].is_null());
    EXPECT_EQ(cnn["results"][0]["run"]["samples"], 10000);
}

TEST(ApiContract, ThePeakIsTheSameOnEveryAcceleratorAndComparedWithEach) {
    json reply = predict({{"model", "gpt2-xl"}, {"hardware", "all"}, {"precision", "bf16"}, {"batch", 4}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump().substr(0, 300);
    const json& results = reply["results"];
    ASSERT_GT(results.size(), 10u);
    bool some_fit = false, some_not = false;
    // The same on every accelerator that runs the step at bf16; those without bf16 units (V100, T4, Pascal)
    // are predicted at fp32 (hardware/precision_support.hpp), with fp32's memory.
    std::map<std::string, json> peak_at;
    for (const auto& r : results) {
        json& peak = peak_at[r["matmul_precision_used"].get<std::string>()];
        if (peak.is_null()) peak = r["memory"]["peak_bytes_per_device"];
        EXPECT_EQ(r["memory"]["peak_bytes_per_device"], peak) << r["hardware"];
        bool fits = r["memory"]["peak_bytes_per_device"].get<double>() <= r["memory"]["capacity_bytes"].get<double>();
        EXPECT_EQ(r["memory"]["fits"], fits);
        EXPECT_EQ(r["memory"]["advice"].is_null(), fits);
        (fits ? some_fit : some_not) = true;
    }
    EXPECT_TRUE(some_fit && some_not);
}

TEST(ApiContract, TheLearnedPredictorCarriesAnUncertaintyAndTheRooflineNone) {
    if (!embedded_kernel_models()) GTEST_SKIP() << "no fitted models built in";
    json learned = predict({{"model", "gpt2"}, {"predictor", "learned"}});
    ASSERT_FALSE(learned.contains("error")) << learned.dump();
    const json& u = learned["results"][0]["uncertainty"];
    ASSERT_TRUE(u.is_object());
    double total = learned["results"][0]["step"]["total_ms"];
    EXPECT_LT(u["low_ms"].get<double>(), total);
    EXPECT_GT(u["high_ms"].get<double>(), total);
    EXPECT_TRUE(predict({{"model", "gpt2"}, {"predictor", "roofline"}})["results"][0]["uncertainty"].is_null());
    // Fitted models given with the request are used, and said to be.
    json custom = predict({{"model", "gpt2"}, {"kernel_models", *embedded_kernel_models()}});
    EXPECT_EQ(custom["settings"]["predictor"], "learned (custom models)");
    EXPECT_EQ(custom["results"][0]["step"]["total_ms"], learned["results"][0]["step"]["total_ms"]);
}

TEST(ApiContract, ListingsAndOptionsAnswer) {
    EXPECT_TRUE(handle_request({{"command", "zoo"}})["models"].is_array());
    EXPECT_TRUE(handle_request({{"command", "hardware"}})["hardware"].is_array());
    EXPECT_TRUE(handle_request({{"command", "layers"}})["layers"].is_array());
    EXPECT_EQ(handle_request({{"command", "options"}})["options"].size(), option_table().size());
    EXPECT_TRUE(handle_request({{"command", "version"}})["version"].is_string());
}

}  // namespace
}  // namespace prenet

namespace prenet {
namespace {

TEST(ApiContract, ParallelLayoutErrorsNameTheirDimension) {
    expect_error(predict({{"model", "gpt2"}, {"gpus", 8}, {"tp", 3}}), "conflict", "tp");
    expect_error(predict({{"model", "gpt2"}, {"gpus", 8}, {"tp", 8}}), "invalid_value", "tp");  // 12 heads
    expect_error(predict({{"model", "gpt2"}, {"gpus", 16}, {"pp", 16}}), "invalid_value", "pp");  // 12 blocks
    expect_error(predict({{"model", "gpt2"}, {"gpus", 8}, {"ep", 2}}), "invalid_value", "ep");
    expect_error(predict({{"model", "gpt2"}, {"gpus", 8}, {"network", "carrier pigeons"}}), "invalid_value", "network");
    expect_error(predict({{"model", "gpt2"}, {"gpus", 8}, {"zero", 4}}), "invalid_value", "zero");
    expect_error(predict({{"model", "gpt2"}, {"gpus", 8}, {"global_batch", 8}, {"global_batch_tokens", 8192}}),
                 "conflict", "global_batch_tokens");
    expect_error(predict({{"model", "gpt2"}, {"checkpointing", "sometimes"}}), "invalid_value", "checkpointing");
}

TEST(ApiContract, AParallelResultCarriesItsPlan) {
    json reply = predict({{"model", "gpt2"}, {"gpus", 4}, {"global_batch", 16}, {"hardware", "a100-sxm4-80gb"}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump().substr(0, 300);
    const json& r = reply["results"][0];
    for (const char* key : {"dp", "tp", "pp", "cp", "ep", "vp", "zero", "micro_batch", "grad_accum", "schedule",
                            "checkpointing", "nodes", "alternatives"})
        EXPECT_TRUE(r["plan"].contains(key)) << key;
    EXPECT_EQ(r["plan"]["global_batch"], 16);
    EXPECT_TRUE(r["step"]["bubble_ms"].is_number());
    EXPECT_TRUE(r["step"]["communication_total_ms"].is_number());
    EXPECT_TRUE(r["throughput"]["mfu"].is_number());
    EXPECT_EQ(reply["settings"]["gpus"], 4);
    EXPECT_EQ(reply["settings"]["devices"], 4);
}

}  // namespace
}  // namespace prenet

namespace prenet {
namespace {

TEST(ApiContract, AClusterDocumentGivesTheLayoutOptionsAndLosesToThoseBesideIt) {
    json cluster = {{"gpus", 8}, {"tp", 2}, {"network", "8x200g-ib"}};
    json reply = predict({{"model", "gpt2"}, {"cluster", cluster}, {"hardware", "a100-sxm4-80gb"}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump().substr(0, 300);
    EXPECT_EQ(reply["settings"]["gpus"], 8);
    EXPECT_EQ(reply["settings"]["network"], "8x200g-ib");
    EXPECT_EQ(reply["results"][0]["plan"]["tp"], 2);
    json beside = predict({{"model", "gpt2"}, {"cluster", cluster}, {"tp", 4}, {"hardware", "a100-sxm4-80gb"}});
    EXPECT_EQ(beside["results"][0]["plan"]["tp"], 4);
    expect_error(predict({{"model", "gpt2"}, {"cluster", {{"gpus", 8}, {"model", "bert"}}}}), "unknown_option", "cluster");
    expect_error(predict({{"model", "gpt2"}, {"cluster", {{"gpus", -8}}}}), "invalid_value", "gpus");
}

}  // namespace
}  // namespace prenet

namespace prenet {
namespace {

TEST(ApiContract, AnAcceleratorThatCannotFormTheClusterAnswersWithItsOwnError) {
    // A torus part whose sheet publishes no scale-up bandwidth (every catalogue sheet now has one: issue 29).
    json no_ici = json::parse(R"({"id": "no-ici-figure", "peak_tflops": {"bf16": 100}, "memory": {"capacity_gb": 32,
        "bandwidth_gbps": 900}, "interconnect": {"scale_up_link": "ici", "scale_up_domain": 64, "gpus_per_node": 4}})");
    json reply = predict({{"model", "gpt2"}, {"gpus", 8}, {"hardware", json::array({"a100-sxm4-80gb", no_ici})}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump().substr(0, 300);
    ASSERT_EQ(reply["results"].size(), 2u);
    EXPECT_TRUE(reply["results"][0].contains("plan"));
    const json& refused = reply["results"][1];
    EXPECT_EQ(refused["hardware"], "no-ici-figure");
    EXPECT_EQ(refused["error"]["field"], "hardware");  // its sheet publishes no scale-up bandwidth
    EXPECT_FALSE(refused.contains("step"));
    // Alone, the same refusal is the request's error, naming the accelerator it refuses (a client asking one
    // accelerator at a time reads it as that accelerator's row); an error of the request names none.
    json alone = predict({{"model", "gpt2"}, {"gpus", 8}, {"hardware", json::array({no_ici})}});
    expect_error(alone, "invalid_hardware", "hardware");
    EXPECT_EQ(alone["error"]["hardware"], "no-ici-figure");
    EXPECT_FALSE(predict({{"model", "gpt2"}, {"gpus", 8}, {"tp", 3}, {"hardware", "t4"}})["error"].contains("hardware"));
}

// 12 devices fill no node of 8 (field gpus), but GB200's nodes of 72 and T4's of 4: among the three only H100 is
// refused; alone, its error is the request's and names it, whatever the field.
TEST(ApiContract, TwelveDevicesRefuseOnlyTheAcceleratorWhoseNodesTheyDoNotFill) {
    json reply = predict({{"model", "llama2-7b"}, {"gpus", 12}, {"hardware", json::array({"h100-sxm5-80gb", "gb200", "t4"})}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump().substr(0, 300);
    EXPECT_EQ(reply["results"][0]["error"]["field"], "gpus");
    EXPECT_TRUE(reply["results"][1].contains("plan"));
    EXPECT_TRUE(reply["results"][2].contains("plan"));
    json alone = predict({{"model", "llama2-7b"}, {"gpus", 12}, {"hardware", "h100-sxm5-80gb"}});
    EXPECT_EQ(alone["error"]["field"], "gpus");
    EXPECT_EQ(alone["error"]["hardware"], "h100-sxm5-80gb");
}

// The hardware listing answers custom sheets as a predict request reads them: a check of a sheet by the API's rules.
TEST(ApiContract, TheHardwareListingChecksCustomSheets) {
    json sheet = {{"id", "custom-x"}, {"name", "X"}, {"peak_tflops", {{"bf16", 100}}},
                  {"memory", {{"capacity_gb", 80}, {"bandwidth_gbps", 1000}}}};
    json read = handle_request({{"command", "hardware"}, {"custom_hardware", json::array({sheet})}});
    ASSERT_EQ(read["hardware"].size(), 1u) << read.dump();
    EXPECT_EQ(read["hardware"][0]["id"], "custom-x");
    sheet["memory"]["capacity_gb"] = 0;
    expect_error(handle_request({{"command", "hardware"}, {"custom_hardware", json::array({sheet})}}), "invalid_hardware",
                 "custom_hardware");
    expect_error(handle_request({{"command", "hardware"}, {"custom_hardware", sheet}}), "invalid_hardware", "custom_hardware");
    expect_error(handle_request({{"command", "zoo"}, {"custom_hardware", json::array({sheet})}}), "unknown_option",
                 "custom_hardware");
}

// Precision support per device (hardware/precision_support.hpp), applied once per device in predict: a device
// without units for the asked precision is predicted at the precision it runs as, time and memory alike, and
// the result says so.
TEST(ApiContract, APrecisionWithoutUnitsIsPredictedAsItsFallbackAndSaysSo) {
    json base = {{"model", "gpt2"}, {"batch", 4}, {"seq", 512}, {"hardware", json::array({"a100-sxm4-80gb", "h100-sxm5-80gb"})}};
    json fp8 = base, bf16 = base;
    fp8["precision"] = "fp8";
    bf16["precision"] = "bf16";  // with bf16's default recipe, as the fp8 request gives none
    json a = predict(fp8), b = predict(bf16);
    ASSERT_FALSE(a.contains("error")) << a.dump().substr(0, 300);
    ASSERT_FALSE(b.contains("error")) << b.dump().substr(0, 300);
    const json& a100 = a["results"][0];
    EXPECT_EQ(a100["hardware"], "a100-sxm4-80gb");
    EXPECT_EQ(a100["matmul_precision_used"], "bf16");
    ASSERT_TRUE(a100["precision_fallback"].is_object());
    EXPECT_EQ(a100["precision_fallback"]["requested"], "fp8");
    EXPECT_EQ(a100["precision_fallback"]["used"], "bf16");
    EXPECT_NE(a100["precision_fallback"]["reason"].get<std::string>().find("FP8"), std::string::npos);
    // One fallback warning (GPT-2 at 4 x 512 tokens also gets the host-pace one: its kernels are that short).
    auto fallback_warnings = [](const json& result) {
        std::vector<std::string> out;
        for (const auto& w : result["warnings"])
            if (w.get<std::string>().find("no FP8 units") != std::string::npos) out.push_back(w.get<std::string>());
        return out;
    };
    std::vector<std::string> fallback = fallback_warnings(a100);
    ASSERT_EQ(fallback.size(), 1u);
    EXPECT_NE(fallback[0].find("a100-sxm4-80gb: no FP8 units, predicted as bf16"), std::string::npos);
    // Exactly bf16's prediction: never faster, and the same memory.
    EXPECT_DOUBLE_EQ(a100["step"]["total_ms"].get<double>(), b["results"][0]["step"]["total_ms"].get<double>());
    EXPECT_DOUBLE_EQ(a100["memory"]["peak_bytes_per_device"].get<double>(),
                     b["results"][0]["memory"]["peak_bytes_per_device"].get<double>());
    EXPECT_EQ(a100["matmul_peak_used"], "bf16");
    // An explicit recipe is kept: fp8 with --mixed half is bf16 with --mixed half.
    fp8["mixed"] = "half";
    bf16["mixed"] = "half";
    EXPECT_DOUBLE_EQ(predict(fp8)["results"][0]["step"]["total_ms"].get<double>(),
                     predict(bf16)["results"][0]["step"]["total_ms"].get<double>());
    // H100 has FP8 units: fp8, no fallback, faster than its bf16.
    const json& h100 = a["results"][1];
    EXPECT_EQ(h100["matmul_precision_used"], "fp8");
    EXPECT_TRUE(h100["precision_fallback"].is_null());
    EXPECT_TRUE(fallback_warnings(h100).empty());
    EXPECT_LT(h100["step"]["total_ms"].get<double>(), b["results"][1]["step"]["total_ms"].get<double>());
    // The settings echo what was asked.
    EXPECT_EQ(a["settings"]["precision"], "fp8");
}

TEST(ApiContract, Bf16OnAV100IsPredictedAsFp32AndFp32NeverFallsBack) {
    json bf16 = {{"model", "gpt2"}, {"batch", 2}, {"seq", 256}, {"hardware", "v100-sxm2-16gb"}, {"precision", "bf16"}};
    json fp32 = bf16;
    fp32["precision"] = "fp32";
    json a = predict(bf16), b = predict(fp32);
    EXPECT_EQ(a["results"][0]["matmul_precision_used"], "fp32");
    EXPECT_EQ(a["results"][0]["precision_fallback"]["used"], "fp32");
    EXPECT_DOUBLE_EQ(a["results"][0]["step"]["total_ms"].get<double>(), b["results"][0]["step"]["total_ms"].get<double>());
    for (const char* id : {"v100-sxm2-16gb", "tpu-v4", "mi250", "gaudi2", "a100-sxm4-80gb"}) {
        json r = predict({{"model", "gpt2"}, {"batch", 2}, {"seq", 256}, {"hardware", id}})["results"][0];
        EXPECT_EQ(r["matmul_precision_used"], "fp32") << id;
        EXPECT_TRUE(r["precision_fallback"].is_null()) << id;
    }
}

TEST(ApiContract, ParallelPredictionsFallBackTheSameWay) {
    json req = {{"model", "gpt2"}, {"batch", 4}, {"seq", 512}, {"gpus", 8}, {"hardware", "a100-sxm4-80gb"}};
    json fp8 = req, bf16 = req;
    fp8["precision"] = "fp8";
    bf16["precision"] = "bf16";
    json a = predict(fp8)["results"][0], b = predict(bf16)["results"][0];
    ASSERT_TRUE(a.contains("plan")) << a.dump().substr(0, 300);
    EXPECT_EQ(a["matmul_precision_used"], "bf16");
    EXPECT_EQ(a["precision_fallback"]["requested"], "fp8");
    EXPECT_DOUBLE_EQ(a["step"]["total_ms"].get<double>(), b["step"]["total_ms"].get<double>());
    EXPECT_DOUBLE_EQ(a["throughput"]["mfu"].get<double>(), b["throughput"]["mfu"].get<double>());
}

// Fine-tuning through the API: the model's trainable parameters, the memory's frozen and adapter parts, the
// settings echo, errors naming their field, and advice that knows fine-tuning.
TEST(ApiContract, FineTuningAnswersCanIFineTuneThisOnMyGpu) {
    json reply = predict({{"model", "llama2-7b"}, {"hardware", "rtx-4090"}, {"precision", "bf16"}, {"seq", 512},
                          {"finetune", "qlora"}, {"lora_rank", 16}, {"lora_targets", "all"}, {"checkpointing", true}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump().substr(0, 300);
    EXPECT_EQ(reply["model"]["trainable_params"], 39976960);
    EXPECT_EQ(reply["model"]["params"], 6738415616 + 39976960);
    const json& mem = reply["results"][0]["memory"];
    EXPECT_TRUE(mem["fits"]);
    EXPECT_GT(mem["frozen_weights_bytes"].get<double>(), 3.4e9);
    EXPECT_LT(mem["frozen_weights_bytes"].get<double>(), 4.0e9);
    EXPECT_GT(mem["dequantization_bytes"].get<double>(), 0.0);
    EXPECT_TRUE(mem["optimizer_states_paged"]);
    EXPECT_EQ(reply["settings"]["finetune"], "qlora");
    EXPECT_EQ(reply["settings"]["quantization"], "nf4");
    EXPECT_EQ(reply["settings"]["lora_targets"], "all");
    EXPECT_EQ(reply["settings"]["mixed"], "half");

    // Full fine-tuning of a 7B model on a 24 GB card does not fit; the advice names the fine-tuning that does.
    json full = predict({{"model", "llama2-7b"}, {"hardware", "rtx-4090"}, {"precision", "bf16"}, {"seq", 512},
                         {"finetune", "full"}});
    const json& advice = full["results"][0]["memory"]["advice"];
    ASSERT_TRUE(advice.is_object()) << full.dump().substr(0, 300);
    EXPECT_TRUE(advice["finetune"]["fits"]);
    EXPECT_NE(advice["summary"].get<std::string>().find("--finetune"), std::string::npos);
    // The same change as option values, which the page applies as they are; applied, it fits.
    EXPECT_EQ(advice["finetune"]["options"], json({{"finetune", "lora"}, {"lora_rank", 16}}));
    json applied = predict({{"model", "llama2-7b"}, {"hardware", "rtx-4090"}, {"precision", "bf16"}, {"seq", 512},
                            {"finetune", "lora"}, {"lora_rank", 16}});
    EXPECT_TRUE(applied["results"][0]["memory"]["fits"]) << applied.dump().substr(0, 300);
    EXPECT_NEAR(applied["results"][0]["memory"]["peak_bytes_per_device"].get<double>(), advice["finetune"]["peak_bytes"].get<double>(),
                1e-6 * advice["finetune"]["peak_bytes"].get<double>());
    // Pre-training is not told to fine-tune.
    json pre = predict({{"model", "llama2-7b"}, {"hardware", "rtx-4090"}, {"precision", "bf16"}, {"seq", 512}});
    EXPECT_TRUE(pre["results"][0]["memory"]["advice"]["finetune"].is_null());

    expect_error(predict({{"model", "resnet18"}, {"finetune", "lora"}}), "conflict", "lora_targets");
    expect_error(predict({{"model", "qwen2.5-0.5b"}, {"finetune", "lora"}, {"lora_rank", 256}, {"lora_targets", "v"}}),
                 "invalid_value", "lora_rank");
    expect_error(predict({{"model", "gpt2"}, {"finetune", "freeze"}, {"freeze", "decoder:0-1"}}), "invalid_value",
                 "freeze");
    expect_error(predict({{"model", "gpt2"}, {"finetune", "full"}, {"quantization", "nf4"}}), "conflict",
                 "quantization");
}

}  // namespace
}  // namespace prenet
