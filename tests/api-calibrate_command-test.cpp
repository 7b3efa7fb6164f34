// api/calibrate_command.hpp: measured rows in, a calibration out, and predict applying it to its devices only.
#include "api/calibrate_command.hpp"

#include <gtest/gtest.h>

#include "api/api.hpp"
#include "calibration/calibration.hpp"
#include "hardware/spec.hpp"
#include "predict/op_rows.hpp"
#include "predict/predictor.hpp"

namespace prenet {
namespace {

using nlohmann::json;

json predict(json request) {
    request["command"] = "predict";
    return handle_request(request);
}

// What predict says of one run's step on one device (the learned predictor, the API's default).
double step_ms(const json& settings, const char* hardware) {
    json r = settings;
    r["hardware"] = hardware;
    json reply = predict(r);
    EXPECT_FALSE(reply.contains("error")) << reply.dump();
    return reply["results"][0]["step"]["total_ms"].get<double>();
}

const json kSmall = {{"model", "gpt2"}, {"batch", 4}, {"seq", 512}, {"precision", "bf16"}};
const json kLarge = {{"model", "gpt2"}, {"batch", 16}, {"seq", 1024}, {"precision", "bf16"}};

// Rows measured as if the A100 ran 1.25x slower than predicted.
json slow_a100_rows() {
    json rows = json::array();
    for (const json& s : {kSmall, kLarge}) {
        json row = s;
        row["hardware"] = "a100-sxm4-80gb";
        row["measured_ms"] = 1.25 * step_ms(s, "a100-sxm4-80gb");
        row["measures"] = "step";
        rows.push_back(row);
    }
    return rows;
}

std::string error_of(const json& reply) {
    return reply.contains("error") ? reply["error"]["message"].get<std::string>() : std::string();
}

TEST(CalibrateCommand, FitsTheMeasuredDeviceAndReportsBeforeAndAfter) {
    json reply = handle_request({{"command", "calibrate"}, {"measurements", slow_a100_rows()}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    const json& device = reply["calibration"]["devices"]["a100-sxm4-80gb"];
    EXPECT_EQ(device["rows"], 2);
    EXPECT_NEAR(device["scales"]["gemm"].get<double>(), 1.25, 0.05);
    ASSERT_EQ(reply["rows"].size(), 2u);
    for (const auto& row : reply["rows"]) {
        EXPECT_NEAR(row["ape_before_pct"].get<double>(), 20.0, 0.01);  // 1/1.25
        EXPECT_LT(row["ape_after_pct"].get<double>(), 2.0);
    }
    EXPECT_EQ(reply["calibration"]["devices"].size(), 1u);
}

TEST(CalibrateCommand, TakesCsvTextAsWellAsObjects) {
    double measured = 1.2 * step_ms(kSmall, "h100-sxm5-80gb");
    std::string csv = "model,hardware,batch,seq,precision,measured_ms,measures\ngpt2,h100-sxm5-80gb,4,512,bf16," +
                      json(measured).dump() + ",step\n";
    json reply = handle_request({{"command", "calibrate"}, {"measurements", csv}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    EXPECT_NEAR(reply["rows"][0]["measured_ms"].get<double>(), measured, 1e-9 * measured);
    EXPECT_LT(reply["rows"][0]["ape_after_pct"].get<double>(), 5.0);
}

TEST(CalibrateCommand, PredictAppliesItToItsDevicesOnly) {
    json calibration = handle_request({{"command", "calibrate"}, {"measurements", slow_a100_rows()}})["calibration"];
    json asked = kLarge;
    asked["hardware"] = json::array({"a100-sxm4-80gb", "h100-sxm5-80gb"});
    json plain = predict(asked);
    asked["calibration"] = calibration;
    json calibrated = predict(asked);
    ASSERT_FALSE(calibrated.contains("error")) << calibrated.dump();
    const json& a100 = calibrated["results"][0];
    EXPECT_EQ(a100["calibrated"], true);
    EXPECT_EQ(a100["calibration_rows"], 2);
    EXPECT_NEAR(a100["step"]["total_ms"].get<double>() / plain["results"][0]["step"]["total_ms"].get<double>(), 1.25,
                0.03);
    // The other device: every number as without the calibration.
    json h100 = calibrated["results"][1];
    EXPECT_EQ(h100["calibrated"], false);
    EXPECT_TRUE(h100["calibration_rows"].is_null());
    h100.erase("calibrated");
    h100.erase("calibration_rows");
    json before = plain["results"][1];
    before.erase("calibrated");
    before.erase("calibration_rows");
    EXPECT_EQ(h100, before);
    EXPECT_EQ(calibrated["settings"]["calibrated_devices"], json::array({"a100-sxm4-80gb"}));
}

TEST(CalibrateCommand, TheCalibrationInUseKeepsTheDevicesNotMeasuredAgain) {
    json first = handle_request({{"command", "calibrate"}, {"measurements", slow_a100_rows()}});
    ASSERT_FALSE(first.contains("error")) << first.dump();
    EXPECT_EQ(first["kept_devices"], json::array());
    // Now an H100 measured 0.8x its prediction, calibrated on top of the A100's.
    json h100 = kSmall;
    h100["hardware"] = "h100-sxm5-80gb";
    h100["measured_ms"] = 0.8 * step_ms(kSmall, "h100-sxm5-80gb");
    h100["measures"] = "step";
    json both = handle_request({{"command", "calibrate"}, {"measurements", json::array({h100})},
                                {"calibration", first["calibration"]}});
    ASSERT_FALSE(both.contains("error")) << both.dump();
    EXPECT_EQ(both["kept_devices"], json::array({"a100-sxm4-80gb"}));
    EXPECT_EQ(both["replaced_devices"], json::array());
    EXPECT_EQ(both["rows"].size(), 1u);  // the new measurements only
    const json& devices = both["calibration"]["devices"];
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices["a100-sxm4-80gb"], first["calibration"]["devices"]["a100-sxm4-80gb"]);  // kept as it was
    EXPECT_LT(devices["h100-sxm5-80gb"]["scales"]["gemm"].get<double>(), 0.9);
    // Each device answers as its own calibration says.
    json a100 = kLarge;
    a100["hardware"] = "a100-sxm4-80gb";
    json with_first = a100, with_both = a100;
    with_first["calibration"] = first["calibration"];
    with_both["calibration"] = both["calibration"];
    EXPECT_DOUBLE_EQ(predict(with_first)["results"][0]["step"]["total_ms"].get<double>(),
                     predict(with_both)["results"][0]["step"]["total_ms"].get<double>());
    // Measuring the A100 again replaces its calibration and keeps the H100's.
    json again = handle_request({{"command", "calibrate"}, {"measurements", json::array({slow_a100_rows()[0]})},
                                 {"calibration", both["calibration"]}});
    ASSERT_FALSE(again.contains("error")) << again.dump();
    EXPECT_EQ(again["replaced_devices"], json::array({"a100-sxm4-80gb"}));
    EXPECT_EQ(again["kept_devices"], json::array({"h100-sxm5-80gb"}));
    EXPECT_EQ(again["calibration"]["devices"]["a100-sxm4-80gb"]["rows"], 1);
    EXPECT_EQ(again["calibration"]["devices"]["h100-sxm5-80gb"], devices["h100-sxm5-80gb"]);
    // A calibration of another predictor's errors is not one to add to.
    json reply = handle_request({{"command", "calibrate"}, {"measurements", json::array({h100})},
                                 {"predictor", "roofline"}, {"calibration", first["calibration"]}});
    EXPECT_EQ(reply["error"]["field"], "calibration") << reply.dump();
}

TEST(CalibrateCommand, ACalibrationOfAnotherPredictorIsRefused) {
    json calibration = handle_request({{"command", "calibrate"}, {"measurements", slow_a100_rows()}})["calibration"];
    json asked = kSmall;
    asked["hardware"] = "a100-sxm4-80gb";
    asked["predictor"] = "roofline";
    asked["calibration"] = calibration;
    json reply = predict(asked);
    EXPECT_EQ(reply["error"]["field"], "calibration");
    EXPECT_NE(error_of(reply).find("'learned' predictor"), std::string::npos) << reply.dump();
}

TEST(CalibrateCommand, BadRowsAreRefusedNamingTheRowAndField) {
    auto message = [](json measurements) {
        json reply = handle_request({{"command", "calibrate"}, {"measurements", measurements}});
        EXPECT_TRUE(reply.contains("error")) << reply.dump();
        EXPECT_EQ(reply["error"]["field"], "measurements");
        return error_of(reply);
    };
    std::string header = "model,hardware,batch,measured_ms,measures\n";
    EXPECT_NE(message("model,hardware,speed,measured_ms,measures\ngpt2,a100-sxm4-80gb,3,10,step\n")
                  .find("unknown column 'speed'"), std::string::npos);
    EXPECT_NE(message(header + "gpt2,a100-sxm4-80gb,4,0,step\n").find("row 1: measured_ms must be a positive"),
              std::string::npos);
    EXPECT_NE(message(header + "gpt2,a100-sxm4-80gb,4,-5,step\n").find("row 1: measured_ms"), std::string::npos);
    EXPECT_NE(message(header + "gpt2,a100-sxm4-80gb,4,ten,step\n").find("row 1, column 'measured_ms' must be a number"),
              std::string::npos);
    EXPECT_NE(message(header + "gpt2,a100-sxm4-80gb,4,10,step\ngpt2,warp-drive,4,10,step\n").find("row 2, column 'hardware'"),
              std::string::npos);
    EXPECT_NE(message(header + "no-such-model,a100-sxm4-80gb,4,10,step\n").find("row 1, column 'model'"),
              std::string::npos);
    EXPECT_NE(message(header + "gpt2,a100-sxm4-80gb,4,10,backward\n").find("measures must be step"), std::string::npos);
    EXPECT_NE(message("model,batch,measured_ms,measures\ngpt2,4,10,step\n").find("row 1: missing hardware"),
              std::string::npos);
    EXPECT_NE(message(header + "gpt2,all,4,10,step\n").find("the one accelerator"), std::string::npos);
    EXPECT_NE(message(header + "gpt2,a100-sxm4-80gb,4,10,step\ngpt2,a100-sxm4-80gb,4,31,step\n")
                  .find("rows 1 and 2 have the same settings and times more than 3x apart"),
              std::string::npos);
    // Seconds written as milliseconds, or microseconds: a hundred times off the prediction is not a factor.
    std::string unit = message(header + "gpt2,a100-sxm4-80gb,4,0.0005,step\n");
    EXPECT_NE(unit.find("row 1: measured 0.0005 ms is "), std::string::npos) << unit;
    EXPECT_NE(unit.find("within 0.01-100 (a unit mistaken"), std::string::npos) << unit;
    EXPECT_NE(message(header + "gpt2,a100-sxm4-80gb,4,10,step\ngpt2,a100-sxm4-80gb,8,900000,step\n")
                  .find("row 2: measured 9e+05 ms"),
              std::string::npos);
    EXPECT_NE(message(header).find("no rows"), std::string::npos);
    EXPECT_NE(message(json::array({1})).find("row 1 must be an object"), std::string::npos);
    EXPECT_NE(message(json(7)).find("must be a list"), std::string::npos);
}

TEST(CalibrateCommand, RowsWithinThreeTimesOfEachOtherAreNoise) {
    std::string csv = "model,hardware,batch,measured_ms,measures\ngpt2,a100-sxm4-80gb,4,10,step\n"
                      "gpt2,a100-sxm4-80gb,4,29,step\n";
    json reply = handle_request({{"command", "calibrate"}, {"measurements", csv}});
    EXPECT_FALSE(reply.contains("error")) << reply.dump();
}

TEST(CalibrateCommand, TheHardwareOptionNamesTheDeviceOfRowsWithout) {
    json rows = slow_a100_rows();
    for (auto& r : rows) r.erase("hardware");
    json reply = handle_request({{"command", "calibrate"}, {"measurements", rows}, {"hardware", "a100-sxm4-80gb"}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    EXPECT_TRUE(reply["calibration"]["devices"].contains("a100-sxm4-80gb"));
}

TEST(CalibrateCommand, ForwardRowsCompareWithTheForward) {
    json r = kSmall;
    r["hardware"] = "a100-sxm4-80gb";
    double forward = predict(r)["results"][0]["step"]["forward_ms"].get<double>();
    json row = r;
    row["measured_ms"] = 1.5 * forward;
    row["measures"] = "forward";
    json reply = handle_request({{"command", "calibrate"}, {"measurements", json::array({row})}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    EXPECT_NEAR(reply["rows"][0]["predicted_ms_before"].get<double>(), forward, 1e-9 * forward);
    EXPECT_LT(reply["rows"][0]["ape_after_pct"].get<double>(), 5.0);
}

}  // namespace
}  // namespace prenet

namespace prenet {
namespace {

TEST(CalibrateCommand, TraceKernelsWithShapesAreComparedWithTheirShapesTimes) {
    // A profiled step whose 1024 x 4096 x 4096 GEMMs (6 calls) ran 1.4x what the kernel model times that shape
    // at, and whose layer norms (2 calls) ran as timed: the row's model (gpt2) has other shapes entirely.
    const HardwareSpec& a100 = find_hardware("a100-sxm4-80gb");
    auto learned = make_predictor("learned");
    const DimMap gemm = {{"m", 1024}, {"n", 4096}, {"k", 4096}}, norm = {{"b", 1024}, {"h", 4096}};
    double gemm_ms = learned->kernel_ms(kernel_from_row("gemm", gemm, Precision::bf16), a100);
    double norm_ms = learned->kernel_ms(kernel_from_row("ln", norm, Precision::bf16), a100);
    json events = json::array();
    std::int64_t id = 0;
    auto call = [&](const char* op, const json& dims, const char* kernel, double us) {
        ++id;
        events.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", op}, {"dur", 5},
                          {"args", {{"External id", id}, {"Input Dims", dims},
                                    {"Input type", {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}},
                                    {"Concrete Inputs", {"", "", ""}}}}});
        events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", kernel}, {"dur", us}, {"args", {{"External id", id}}}});
    };
    for (int c = 0; c < 6; ++c) call("aten::mm", {{1024, 4096}, {4096, 4096}}, "ampere_bf16_s16816gemm", 1e3 * 1.4 * gemm_ms);
    for (int c = 0; c < 2; ++c) call("aten::native_layer_norm", {{1024, 4096}, {4096}, {4096}}, "layer_norm_kernel", 1e3 * norm_ms);
    json row = kSmall;
    row["hardware"] = "a100-sxm4-80gb";
    row["trace"] = {{"traceEvents", events}};
    json reply = handle_request({{"command", "calibrate"}, {"measurements", json::array({row})}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    ASSERT_EQ(reply["rows"].size(), 2u);
    const json& g = reply["rows"][0];
    EXPECT_EQ(g["measures"], "kernels:gemm");
    EXPECT_EQ(g["matched_by"], "shape");
    EXPECT_EQ(g["operators"], 1);
    EXPECT_NEAR(g["predicted_ms_before"].get<double>(), 6 * gemm_ms, 1e-9);
    EXPECT_NEAR(g["measured_ms"].get<double>(), 6 * 1.4 * gemm_ms, 1e-9);
    EXPECT_LT(g["ape_after_pct"].get<double>(), 5.0);
    EXPECT_EQ(reply["rows"][1]["measures"], "kernels:norm");
    EXPECT_NEAR(reply["rows"][1]["predicted_ms_before"].get<double>(), 2 * norm_ms, 1e-9);
    EXPECT_LT(reply["rows"][1]["ape_after_pct"].get<double>(), 5.0);
    // The after column is what `prenet kernels --calibration` answers for that shape, six times.
    auto calibration = std::make_shared<const Calibration>(calibration_from_json(reply["calibration"]));
    CalibratedPredictor calibrated(make_predictor("learned"), calibration);
    EXPECT_NEAR(g["predicted_ms_after"].get<double>(),
                6 * calibrated.kernel_ms(kernel_from_row("gemm", gemm, Precision::bf16), a100), 1e-9);
}

TEST(CalibrateCommand, AProfilerTraceCalibratesTheFamiliesItTimes) {
    json r = kLarge;
    r["hardware"] = "a100-sxm4-80gb";
    const json step = predict(r)["results"][0]["step"];
    // Two profiled steps whose GEMMs ran 1.3x the prediction and whose norms ran as predicted.
    json events = json::array();
    for (int s = 0; s < 2; ++s) {
        events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(s)}, {"dur", 1}});
        events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "ampere_bf16_s16816gemm_bf16_128x128"},
                          {"dur", 1e3 * 1.3 * step["by_family_ms"]["gemm"].get<double>()}});
        events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "vectorized_layer_norm_kernel"},
                          {"dur", 1e3 * step["by_family_ms"]["norm"].get<double>()}});
    }
    json row = r;
    row["trace"] = {{"traceEvents", events}};
    json reply = handle_request({{"command", "calibrate"}, {"measurements", json::array({row})}});
    ASSERT_FALSE(reply.contains("error")) << reply.dump();
    ASSERT_EQ(reply["rows"].size(), 2u);  // one per family the trace and the prediction both hold
    for (const auto& row_out : reply["rows"]) EXPECT_EQ(row_out["row"], 1);
    EXPECT_EQ(reply["rows"][0]["measures"], "kernels:gemm");
    EXPECT_NEAR(reply["rows"][0]["ape_before_pct"].get<double>(), 100.0 * 0.3 / 1.3, 1e-6);
    EXPECT_LT(reply["rows"][0]["ape_after_pct"].get<double>(), 5.0);
    EXPECT_EQ(reply["rows"][1]["measures"], "kernels:norm");
    EXPECT_LT(reply["rows"][1]["ape_after_pct"].get<double>(), 5.0);  // measured as predicted: stays near
    const json& scales = reply["calibration"]["devices"]["a100-sxm4-80gb"]["scales"];
    EXPECT_GT(scales["gemm"].get<double>() * scales["matmul.bf16"].get<double>(), 1.2);
    EXPECT_NEAR(scales["norm"].get<double>(), 1.0, 0.1);

    json both = row;
    both["measured_ms"] = 5;
    reply = handle_request({{"command", "calibrate"}, {"measurements", json::array({both})}});
    EXPECT_NE(error_of(reply).find("row 1: a row with a trace measures its kernels"), std::string::npos) << reply.dump();
    json text = r;
    text["trace"] = "trace.json";
    reply = handle_request({{"command", "calibrate"}, {"measurements", json::array({text})}});
    EXPECT_NE(error_of(reply).find("row 1: trace must be a profiler trace document"), std::string::npos);
}

}  // namespace
}  // namespace prenet
