// Which accelerators a request asks about (api/hardware_selection.hpp).
#include "api/hardware_selection.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace prenet {
namespace {

using nlohmann::json;

std::vector<HardwareSpec> select(json request) { return select_hardware(RequestOptions(request, kPredict)); }

TEST(SelectHardware, AllIsTheDefaultAndTheWholeCatalogue) {
    EXPECT_EQ(select(json::object()).size(), hardware_catalogue().size());
    EXPECT_EQ(select({{"hardware", "all"}}).size(), hardware_catalogue().size());
}

TEST(SelectHardware, ListsKeepTheirOrderAndMixIdsWithSheets) {
    json sheet = {{"id", "mine"}, {"peak_tflops", {{"fp32", 10}}}, {"memory", {{"capacity_gb", 16}, {"bandwidth_gbps", 500}}}};
    auto hw = select({{"hardware", json::array({"t4", sheet, "a10"})}, {"custom_hardware", json::array({sheet})}});
    ASSERT_EQ(hw.size(), 4u);
    EXPECT_EQ(hw[0].id, "t4");
    EXPECT_EQ(hw[1].id, "mine");
    EXPECT_EQ(hw[2].id, "a10");
    EXPECT_EQ(hw[3].id, "mine");
}

void expect_field(json request, const std::string& field, ErrorCode code) {
    try {
        select(request);
        FAIL() << request.dump();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), field) << e.what();
        EXPECT_EQ(e.code(), code) << e.what();
    }
}

TEST(SelectHardware, ErrorsNameTheOptionAtFault) {
    expect_field({{"hardware", "no-such-gpu"}}, "hardware", ErrorCode::invalid_hardware);
    expect_field({{"hardware", json::array()}}, "hardware", ErrorCode::missing);
    expect_field({{"hardware", "t4"}, {"custom_hardware", json::array({{{"id", "x"}}})}}, "custom_hardware",
                 ErrorCode::invalid_hardware);
}

}  // namespace
}  // namespace prenet
