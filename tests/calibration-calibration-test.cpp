// calibration/calibration.hpp: the document round-trips and is checked; the predictor scales only the devices
// the calibration names.
#include "calibration/calibration.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hardware/spec.hpp"

namespace prenet {
namespace {

using nlohmann::json;

Calibration two_factors() {
    Calibration c;
    c.predictor = "roofline";
    DeviceCalibration d;
    d.rows = 3;
    d.scales = {{"gemm", 1.5}, {"communication", 2.0}, {"overhead", 0.5}};
    c.devices["a100-sxm4-80gb"] = d;
    return c;
}

TEST(Calibration, TheDocumentRoundTrips) {
    Calibration c = two_factors();
    Calibration back = calibration_from_json(to_json(c));
    ASSERT_NE(back.device("a100-sxm4-80gb"), nullptr);
    EXPECT_EQ(back.predictor, "roofline");
    EXPECT_DOUBLE_EQ(back.device("a100-sxm4-80gb")->scale("gemm"), 1.5);
    EXPECT_DOUBLE_EQ(back.device("a100-sxm4-80gb")->scale("conv"), 1.0);  // absent: 1
    EXPECT_EQ(back.rows(), 3);
    EXPECT_EQ(back.device("h100-sxm5-80gb"), nullptr);
}

TEST(Calibration, ABadDocumentIsRefusedNamingWhatIsWrong) {
    json doc = to_json(two_factors());
    auto message = [](json d) {
        try {
            calibration_from_json(d);
        } catch (const Error& e) {
            EXPECT_EQ(e.field(), "calibration");
            return std::string(e.what());
        }
        return std::string();
    };
    json wrong = doc;
    wrong["format"] = "something else";
    EXPECT_NE(message(wrong).find("format"), std::string::npos);
    wrong = doc;
    wrong["devices"]["a100-sxm4-80gb"]["scales"]["gemm"] = -1;
    EXPECT_NE(message(wrong).find("scales.gemm must be a positive number"), std::string::npos);
    wrong = doc;
    wrong["devices"]["a100-sxm4-80gb"]["scales"]["gemm"] = 1e6;
    EXPECT_NE(message(wrong).find("outside 0.01-100"), std::string::npos);
    wrong = doc;
    wrong["devices"]["a100-sxm4-80gb"]["scales"]["warp"] = 1.1;
    EXPECT_NE(message(wrong).find("unknown factor 'warp'"), std::string::npos);
    wrong = doc;
    wrong["devices"]["a100-sxm4-80gb"]["log_covariance"] = json::array({json::array({1.0})});
    EXPECT_NE(message(wrong).find("log_covariance must be a 18 x 18 matrix"), std::string::npos);
    EXPECT_NE(message(json::array()).find("JSON object"), std::string::npos);
}

TEST(Calibration, ThePredictorScalesOnlyTheNamedDevice) {
    auto c = std::make_shared<const Calibration>(two_factors());
    CalibratedPredictor calibrated(make_predictor("roofline"), c);
    auto plain = make_predictor("roofline");
    Kernel k;
    k.family = Family::gemm;
    k.op = "matmul";
    k.flops = 2e12;
    k.bytes = 1e9;
    const HardwareSpec& a100 = find_hardware("a100-sxm4-80gb");
    const HardwareSpec& h100 = find_hardware("h100-sxm5-80gb");
    EXPECT_DOUBLE_EQ(calibrated.kernel_ms(k, a100), 1.5 * plain->kernel_ms(k, a100));
    EXPECT_EQ(calibrated.kernel_ms(k, h100), plain->kernel_ms(k, h100));  // bit for bit
    EXPECT_DOUBLE_EQ(calibrated.communication_factor(a100), 2.0);
    EXPECT_DOUBLE_EQ(calibrated.overhead_factor(a100), 0.5);
    EXPECT_DOUBLE_EQ(calibrated.communication_factor(h100), 1.0);
    k.family = Family::conv;
    EXPECT_DOUBLE_EQ(calibrated.kernel_ms(k, a100), plain->kernel_ms(k, a100));
}

}  // namespace
}  // namespace prenet
