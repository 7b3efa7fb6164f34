// api/reply_json.hpp: the JSON forms the replies carry; each number is the result's own, and what a result does
// not know is null rather than a made-up value.
#include "api/reply_json.hpp"

#include <gtest/gtest.h>

#include "hardware/spec.hpp"
#include "predict/predictor.hpp"

namespace prenet {
namespace {

StepTime a_step() {
    StepTime t;
    t.forward_ms = 10, t.backward_ms = 20, t.optimizer_ms = 3, t.input_stall_ms = 2;
    t.by_family_ms[Family::gemm] = 25;
    return t;
}

TEST(ReplyJson, AStepCarriesItsTotalAndItsInputOnlyWhenInputLimited) {
    StepTime t = a_step();
    nlohmann::json j = step_json(t, false, false);
    EXPECT_DOUBLE_EQ(j["total_ms"].get<double>(), t.total_ms());
    EXPECT_DOUBLE_EQ(j["forward_ms"].get<double>(), 10);
    EXPECT_TRUE(j["input_ms"].is_null());
    t.input_ms = 7;
    EXPECT_DOUBLE_EQ(step_json(t, true, false)["input_ms"].get<double>(), 7);
}

TEST(ReplyJson, UncertaintyIsARangeAroundTheTotalOrNullForTheRoofline) {
    StepTime t = a_step();
    HardwareSpec hw = find_hardware("t4");
    EXPECT_TRUE(uncertainty_json(RooflinePredictor(), t, hw).is_null());
    std::unique_ptr<KernelPredictor> learned = make_predictor("learned");
    nlohmann::json u = uncertainty_json(*learned, t, hw);
    ASSERT_FALSE(u.is_null());
    double r = u["relative"].get<double>();
    EXPECT_GT(r, 0);
    EXPECT_DOUBLE_EQ(u["low_ms"].get<double>(), t.total_ms() / (1 + r));
    EXPECT_DOUBLE_EQ(u["high_ms"].get<double>(), t.total_ms() * (1 + r));
}

TEST(ReplyJson, UnknownOpsAreListedWithTheirCounts) {
    Model m;
    m.unknown_ops = {{"Einsum", 3}, {"Foo", 1}};
    EXPECT_EQ(unknown_ops_json(m), nlohmann::json::parse(R"([{"op": "Einsum", "count": 3}, {"op": "Foo", "count": 1}])"));
}

}  // namespace
}  // namespace prenet
