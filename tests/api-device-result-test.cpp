// One accelerator's result (api/device_result.hpp).
#include "api/device_result.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

using nlohmann::json;

TEST(DeviceResult, ComparesThePlansPeakWithThisAcceleratorsCapacity) {
    json model = "gpt2-xl";
    RequestContext p = make_request_context(model, json(), read_settings(RequestOptions({{"precision", "bf16"}, {"batch", 1}}, kPredict)));
    json small = device_result(p, find_hardware("t4")), big = device_result(p, find_hardware("a100-sxm4-80gb"));
    EXPECT_EQ(small["memory"]["peak_bytes_per_device"], big["memory"]["peak_bytes_per_device"]);
    EXPECT_FALSE(small["memory"]["fits"].get<bool>());
    EXPECT_TRUE(small["memory"]["advice"].is_object());
    EXPECT_TRUE(big["memory"]["fits"].get<bool>());
    EXPECT_TRUE(big["memory"]["advice"].is_null());
    EXPECT_LT(big["step"]["total_ms"].get<double>(), small["step"]["total_ms"].get<double>());
}

TEST(DeviceResult, ANonFinitePredictionIsAnErrorOfTheHardware) {
    json model = "gpt2";
    RequestContext p = make_request_context(model, json(), read_settings(RequestOptions(json::object(), kPredict)));
    HardwareSpec absurd = parse_hardware(
        json::parse(R"({"id": "absurd", "peak_tflops": {"fp32": 1}, "memory": {"capacity_gb": 16, "bandwidth_gbps": 1}})"),
        "test");
    // A sheet cannot hold such numbers (spec.cpp's plausible ranges); a spec built in code still can.
    absurd.peak_tflops["fp32"] = 1e-320;
    absurd.bandwidth_gbps = 1e-320;
    try {
        device_result(p, absurd);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::not_finite);
        EXPECT_EQ(e.field(), "hardware");
    }
}

}  // namespace
}  // namespace prenet
