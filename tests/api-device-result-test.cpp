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
    std::vector<HardwareSpec> both = {find_hardware("t4"), find_hardware("a100-sxm4-80gb")};
    json small = device_result(p, both[0], both), big = device_result(p, both[1], both);
    EXPECT_EQ(small["memory"]["peak_bytes_per_device"], big["memory"]["peak_bytes_per_device"]);
    EXPECT_FALSE(small["memory"]["fits"].get<bool>());
    EXPECT_TRUE(small["memory"]["advice"].is_object());
    EXPECT_TRUE(big["memory"]["fits"].get<bool>());
    EXPECT_TRUE(big["memory"]["advice"].is_null());
    EXPECT_LT(big["step"]["total_ms"].get<double>(), small["step"]["total_ms"].get<double>());
}

// Advice that can be followed (issue #26): another accelerator only from the request's, QLoRA only where
// bitsandbytes has NF4 kernels (not TPU v3, whose 32 GiB would hold QLoRA here, where the 24 GiB card cannot).
TEST(DeviceResult, AdviceNamesOnlyTheSelectedAcceleratorsThatRunIt) {
    json model = "llama2-7b";
    RequestContext p = make_request_context(
        model, json(), read_settings(RequestOptions({{"precision", "bf16"}, {"batch", 8}, {"seq", 3584}, {"finetune", "lora"}}, kPredict)));
    HardwareSpec card = find_hardware("rtx-4090"), tpu = find_hardware("tpu-v3"), h100 = find_hardware("h100-sxm5-80gb");
    json alone = device_result(p, card, {card})["memory"]["advice"];
    ASSERT_TRUE(alone.is_object());
    EXPECT_TRUE(alone["smallest_hardware"].is_null() || alone["smallest_hardware"]["id"] == "rtx-4090") << alone["smallest_hardware"];
    EXPECT_FALSE(alone["finetune"]["fits"].get<bool>()) << alone["finetune"];
    EXPECT_TRUE(alone["finetune"]["hardware"].is_null()) << alone["finetune"];
    json with_tpu = device_result(p, card, {card, tpu, h100})["memory"]["advice"];
    EXPECT_EQ(with_tpu["finetune"]["options"]["finetune"], "qlora");
    EXPECT_EQ(with_tpu["finetune"]["hardware"], "h100-sxm5-80gb");
    EXPECT_EQ(with_tpu["summary"].get<std::string>().find("tpu"), std::string::npos) << with_tpu["summary"];
    // On the TPU itself: QLoRA would fit its memory, but is not offered there; the GPU is too small for it.
    json on_tpu = device_result(p, tpu, {card, tpu})["memory"]["advice"];
    ASSERT_TRUE(on_tpu.is_object());
    EXPECT_EQ(on_tpu["finetune"]["options"]["finetune"], "qlora");
    EXPECT_FALSE(on_tpu["finetune"]["fits"].get<bool>()) << on_tpu["finetune"];
    EXPECT_TRUE(on_tpu["finetune"]["hardware"].is_null()) << on_tpu["finetune"];
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
        device_result(p, absurd, {absurd});
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::not_finite);
        EXPECT_EQ(e.field(), "hardware");
    }
}

}  // namespace
}  // namespace prenet
