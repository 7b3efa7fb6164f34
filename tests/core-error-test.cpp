// The error type (core/error.hpp): codes with stable names, and errors attributed to the option at fault.
#include "core/error.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace prenet {
namespace {

TEST(ErrorCode, NamesAreDistinct) {
    std::set<std::string> names;
    for (ErrorCode c : {ErrorCode::bad_request, ErrorCode::unknown_command, ErrorCode::unknown_option,
                        ErrorCode::missing, ErrorCode::invalid_value, ErrorCode::conflict, ErrorCode::invalid_model,
                        ErrorCode::invalid_hardware, ErrorCode::not_finite, ErrorCode::internal})
        EXPECT_TRUE(names.insert(to_string(c)).second) << to_string(c);
    EXPECT_EQ(std::string(to_string(ErrorCode::invalid_model)), "invalid_model");
}

TEST(AttributeErrors, FillsTheFieldAndCodeTheThrowerCouldNotKnow) {
    try {
        attribute_errors("model", ErrorCode::invalid_model, []() -> int { throw Error("layer 3: bad"); });
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "model");
        EXPECT_EQ(e.code(), ErrorCode::invalid_model);
        EXPECT_STREQ(e.what(), "layer 3: bad");
    }
    // An error that already names its field and kind keeps them.
    try {
        attribute_errors("model", ErrorCode::invalid_model,
                         []() -> int { throw Error("tokens?", ErrorCode::conflict, "tokens"); });
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "tokens");
        EXPECT_EQ(e.code(), ErrorCode::conflict);
    }
    // A location inside the option's document survives the attribution.
    try {
        attribute_errors("model", ErrorCode::invalid_model, []() -> int {
            Error e("layers[2]: bad");
            throw e.at_path("layers[2]").at_attr("count");
        });
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.field(), "model");
        EXPECT_EQ(e.path(), "layers[2]");
        EXPECT_EQ(e.attr(), "count");
    }
    EXPECT_EQ(attribute_errors("x", ErrorCode::missing, [] { return 7; }), 7);
}

}  // namespace
}  // namespace prenet
